"""Export and import as JSON Lines: lossless, idempotent, clear about bad lines."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from support import add_random_episode, run

from prag.errors import PragError
from prag.store import Store
from prag.store.exchange import export_lines, import_lines, write_export


def filled_store(path):
    store = Store(path)
    store.add_run(run("r1"))
    store.add_run(run("r2"))
    rng = np.random.default_rng(0)
    for n, (run_id, round_) in enumerate([("r1", 0), ("r1", 1), ("r2", 0)]):
        add_random_episode(store, rng, "m", 8, run_id=run_id, round_=round_, task_id=f"t{n}",
                           goal=f"goal {n}", scenes=(f"s{n}a", f"s{n}b", f"s{n}c"), won=n == 1)
    return store


def test_export_import_round_trip_is_lossless(tmp_path):
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        lines = list(export_lines(a))
        result = import_lines(b, lines)
        assert (result.runs, result.episodes, result.skipped) == (2, 3, 0)
        assert list(export_lines(b)) == lines
        assert [e.to_dict() | {"id": None} for e in b.episodes()] == [e.to_dict() | {"id": None} for e in a.episodes()]


def test_import_twice_changes_nothing(tmp_path):
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        out = io.StringIO()
        assert write_export(a, out, run_id="r1") == 3  # one run line, two episodes
        import_lines(b, out.getvalue().splitlines())
        again = import_lines(b, out.getvalue().splitlines())
        assert (again.episodes, again.skipped) == (0, 2)
        assert b.count("episodes") == 2


def test_episode_without_run_line_or_vectors_gets_a_placeholder_run(tmp_path):
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        data = json.loads([line for line in export_lines(a) if '"kind": "episode"' in line][0])
        data.pop("embeddings")
        import_lines(b, [json.dumps(data)])
        assert b.run(data["run_id"]).spec == "imported"
        assert b.count("embeddings") == 0


def test_bad_lines_say_where_and_what(tmp_path):
    with Store(tmp_path / "b.db") as b:
        with pytest.raises(PragError, match=r"in.jsonl:2: not a JSON line"):
            import_lines(b, ['{"kind": "run", "id": "x", "spec": "s", "llm": "l", "mode": "prag", "k": 1, "rounds": 1}', "{oops"], "in.jsonl")
        assert b.run("x")  # what came before the bad line is kept
        with pytest.raises(PragError, match="unknown kind 'tape'"):
            import_lines(b, ['{"kind": "tape"}'])
        with pytest.raises(PragError, match="not a valid EpisodeRecord"):
            import_lines(b, ['{"kind": "episode", "colour": "red"}'])
