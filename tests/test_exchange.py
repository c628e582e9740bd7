"""Export and import as JSON Lines: lossless (corrections and prior loads too), idempotent, and
every line checked before anything is written."""
from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from support import add_random_episode, run, unit

from prag.errors import PragError
from prag.retrieval.embed import text_hash
from prag.store import Store
from prag.store.ask_policies import AskPolicyRecord
from prag.store.corrections import Correction, PriorLoad
from prag.store.exchange import export_lines, import_lines, write_export


def filled_store(path):
    """Two runs, three episodes with random 8-d vectors, a person's correction of the second
    episode, a prior transcript, the prior load of one deleted since, and a learned ask policy."""
    store = Store(path)
    store.add_run(run("r1"))
    store.add_run(run("r2"))
    rng = np.random.default_rng(0)
    ids = []
    for n, (run_id, round_) in enumerate([("r1", 0), ("r1", 1), ("r2", 0)]):
        record, _, _ = add_random_episode(store, rng, "m", 8, run_id=run_id, round_=round_, task_id=f"t{n}",
                                          goal=f"goal {n}", scenes=(f"s{n}a", f"s{n}b", f"s{n}c"), won=n == 1)
        ids.append(record.id)
    for correction in (
        Correction(origin="feedback", domain="alfworld", goal="goal 1", instructions=["goal 1", "open it first"],
                   transcript=">>> act('open drawer 1')\n", verified=True, scenes=["s1a", "after the fix"],
                   source_episode=ids[1], feedback="open it first"),
        Correction(origin="prior", domain="grid", goal="water the plants", instructions=["water the plants"],
                   transcript=">>> act('go to plant')\n", verified=True, name="grid-prior/water"),
    ):
        store.add_vectors("m", {text_hash(t): unit(rng, 8) for t in correction.instructions + correction.scenes})
        store.corrections.add(correction)
    store.corrections.add_prior_load(PriorLoad("grid-prior/water", "d1", "2026-01-01T00:00:00+00:00"))
    store.corrections.add_prior_load(PriorLoad("grid-prior/trash", "d2", "2026-01-01T00:00:00+00:00"))
    store.ask_policies.add(AskPolicyRecord(
        name="asker", spec="grid-household", tasks=["t0"], llm="local", timesteps=128, penalty=0.1, gamma=0.99,
        seed=0, features=12, model=bytes(range(256)), curve=[{"timesteps": 64, "mean_return": 0.5}],
        extra={"sources": ["experience", "search", "llm"]},
    ))
    return store


def test_export_import_export_round_trip_is_lossless(tmp_path):
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        lines = list(export_lines(a))
        kinds = [json.loads(line)["kind"] for line in lines]
        assert kinds == ["run", "episode", "episode", "run", "episode", "correction", "correction",
                         "prior_load", "prior_load", "ask_policy"]
        result = import_lines(b, lines)
        assert (result.runs, result.episodes, result.corrections, result.prior_loads, result.ask_policies,
                result.skipped) == (2, 3, 2, 2, 1, 0)
        assert list(export_lines(b)) == lines
        assert [e.to_dict() | {"id": None} for e in b.episodes()] == [e.to_dict() | {"id": None} for e in a.episodes()]
        (fixed, _) = b.corrections.list()
        assert b.episode(fixed.source_episode).task_id == "t1"  # ids are the store's own: matched by key
        assert b.vector_counts() == a.vector_counts()
        assert b.ask_policies.get("asker").model == bytes(range(256))  # the trained network, byte for byte


def test_import_twice_changes_nothing(tmp_path):
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        lines = list(export_lines(a))
        import_lines(b, lines)
        again = import_lines(b, lines)
        assert (again.runs, again.episodes, again.corrections, again.prior_loads, again.ask_policies,
                again.skipped) == (0, 0, 0, 0, 0, 3 + 2 + 2 + 1)
        assert (b.count("episodes"), b.count("corrections"), b.count("prior_loads"), b.count("ask_policies")) == (3, 2, 2, 1)


def test_a_run_exports_alone_without_the_corrections(tmp_path):
    with filled_store(tmp_path / "a.db") as a:
        out = io.StringIO()
        assert write_export(a, out, run_id="r1") == 3  # one run line, two episodes
        assert {json.loads(line)["kind"] for line in out.getvalue().splitlines()} == {"run", "episode"}


def test_episode_without_run_line_or_vectors_gets_a_placeholder_run(tmp_path):
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        data = json.loads([line for line in export_lines(a) if '"kind": "episode"' in line][0])
        data.pop("embeddings")
        import_lines(b, [json.dumps(data)])
        assert b.run(data["run_id"]).spec == "imported"
        assert b.count("embeddings") == 0


# --- bad lines: each class of bad value is refused, and nothing of the file is imported ------------


def _first(lines, kind):
    return next(n for n, line in enumerate(lines) if json.loads(line)["kind"] == kind)


def _edit(lines, kind, change):
    n = _first(lines, kind)
    data = json.loads(lines[n])
    change(data)
    return lines[:n] + [_dumps(data)] + lines[n + 1:], n + 1


def _vector_of(data, size):
    model = data["embeddings"]["m"]
    key = next(iter(model))
    model[key] = base64.b64encode(np.ones(size, dtype=np.float32).tobytes()).decode()


def _set_step(data, field, value):
    data["steps"][1][field] = value


BAD = {
    "a 3-float vector": ("episode", lambda d: _vector_of(d, 3), "embeddings.m: vectors of 3 numbers, but this store's vectors of that model have 8"),
    "round not a number": ("episode", lambda d: d.update(round="abc"), 'round: input should be a valid integer, got "abc"'),
    "a step's t not a number": ("episode", lambda d: _set_step(d, "t", "x"), 'steps[1].t: input should be a valid integer, got "x"'),
    "won not a boolean": ("episode", lambda d: d.update(won="no"), 'won: input should be a valid boolean, got "no"'),
    "goal a list": ("episode", lambda d: d.update(goal=["put", "apple"]), "goal: input should be a valid string"),
    "bad base64": ("episode", lambda d: d["embeddings"]["m"].update({next(iter(d["embeddings"]["m"])): "%%%"}), "not base64 of float32 numbers"),
    "config not an object": ("run", lambda d: d.update(config="fast"), 'config: input should be an object, got "fast"'),
    "steps out of order": ("episode", lambda d: _set_step(d, "t", 5), "steps[1].t: 5, expected 1 (steps are numbered 0..n in order)"),
    "an action at the reset": ("episode", lambda d: d["steps"][0].update(action="look"), "steps[0].action: the reset step has no action"),
    "a negative count": ("episode", lambda d: d.update(llm_calls=-2), "llm_calls: -2 (must be a finite number, not negative)"),
    "an unknown field": ("episode", lambda d: d.update(colour="red"), "colour: unknown field"),
    "a missing field": ("run", lambda d: d.pop("spec"), "spec: missing"),
    "an unknown status": ("run", lambda d: d.update(status="paused"), "status: 'paused' is not one of"),
    "a vector of another text": ("episode", lambda d: d["embeddings"]["m"].update({"a" * 64: d["embeddings"]["m"][next(iter(d["embeddings"]["m"]))]}), "not the sha256 of one of this line's texts"),
    "a correction's episode nowhere": ("correction", lambda d: d["source_episode"].update(task_id="t9"), "source_episode: task 't9' of run 'r1' round 1 (agent) is neither a good line of this file nor in the store"),
    "a correction without instructions": ("correction", lambda d: d.update(instructions=[]), "a correction needs a transcript and at least one instruction"),
    "a prior load's name not text": ("prior_load", lambda d: d.update(name=7), "name: input should be a valid string, got 7"),
    "an ask policy's network not base64": ("ask_policy", lambda d: d.update(model="%%%"), "model: not base64"),
    "an ask policy's penalty not a number": ("ask_policy", lambda d: d.update(penalty="high"), 'penalty: input should be a valid number, got "high"'),
    # Transcripts are read on import as anywhere else: before, these were stored unread and then
    # crashed every run of the store at its first step.
    "a transcript of 200,000 terms": ("correction", lambda d: d.update(transcript=">>> act(" + "+".join(["'a'"] * 200_000) + ")\n"),
                                      "transcript: line 1: `act('a'+'a'+"),
    "a transcript of 200,000 minus signs": ("correction", lambda d: d.update(transcript=">>> act(" + "-" * 200_000 + "1)\n"),
                                            "is too long or too deeply nested"),
    "a transcript that is no console API": ("correction", lambda d: d.update(transcript='>>> os.system("rm -rf /")\n'),
                                            "transcript: line 1: `os.system"),
    "an object nested too deep for Python": ("run", lambda d: d.update(config={"x": _Deep(100_000)}), "JSON nested too deeply to be read"),
    "an object nested past any record": ("episode", lambda d: d["extra"].update(x=_Deep(40)), "JSON nested more than 32 levels deep"),
}


class _Deep:
    """A value nested `levels` lists deep, written by `_dumps` as raw text (json.dumps recurses)."""

    def __init__(self, levels: int) -> None:
        self.levels = levels


def _dumps(data) -> str:
    """JSON text of `data` in which each `_Deep` stands for its nested lists."""
    deep: list[_Deep] = []

    def mark(value):
        deep.append(value)
        return f"@deep{len(deep) - 1}@"

    text = json.dumps(data, default=mark)
    for n, value in enumerate(deep):
        text = text.replace(f'"@deep{n}@"', "[" * value.levels + "]" * value.levels)
    return text


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_value_is_reported_by_line_and_nothing_is_imported(tmp_path, case):
    kind, change, message = BAD[case]
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        b.add_vectors("m", {"0" * 64: np.zeros(8, dtype=np.float32)})  # the store's vectors of "m" are 8-d
        lines, number = _edit(list(export_lines(a)), kind, change)
        with pytest.raises(PragError) as raised:
            import_lines(b, lines, "in.jsonl")
        reported = [line for line in str(raised.value).splitlines() if line.startswith(f"in.jsonl:{number}: ")]
        assert reported and message in reported[0], str(raised.value)
        assert "nothing was imported" in str(raised.value) and "--skip-bad" in str(raised.value)
        assert (b.runs(), b.count("episodes"), b.count("corrections"), b.count("prior_loads")) == ([], 0, 0, 0)
        assert b.count("embeddings") == 1


def test_lines_that_are_not_records_are_reported(tmp_path):
    with Store(tmp_path / "b.db") as b:
        with pytest.raises(PragError) as raised:
            import_lines(b, ['{"kind": "tape"}', "{oops", "[1, 2]", ""], "in.jsonl")
    message = str(raised.value)
    assert "3 bad lines in in.jsonl" in message
    assert "in.jsonl:1: unknown kind 'tape'" in message
    assert "in.jsonl:2: not a JSON line" in message
    assert "in.jsonl:3: a line must be a JSON object, not list" in message


def test_vector_sizes_follow_most_of_the_file_when_the_store_has_none(tmp_path):
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        lines, number = _edit(list(export_lines(a)), "episode", lambda d: _vector_of(d, 3))
        with pytest.raises(PragError, match=f"in.jsonl:{number}: embeddings.m: vectors of 3 numbers, "
                                            "but most of this file's vectors of that model have 8"):
            import_lines(b, lines, "in.jsonl")


def test_skip_bad_imports_the_good_lines_and_lists_the_bad(tmp_path):
    with filled_store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        lines = list(export_lines(a))
        lines, bad_run = _edit(lines, "run", lambda d: d.update(k="three"))  # run r1: its episodes go too
        lines[-1] = "{oops"
        result = import_lines(b, lines, "in.jsonl", skip_bad=True)
        assert [line.split(": ")[0] for line in result.bad] == [
            f"in.jsonl:{n}" for n in (bad_run, bad_run + 1, bad_run + 2, 6, len(lines))
        ]
        assert "its run 'r1' is on bad line 1" in result.bad[1]
        assert "source_episode" in result.bad[3]  # the correction of an episode of r1
        assert [r.id for r in b.runs()] == ["r2"]
        assert (result.episodes, result.corrections, result.prior_loads, result.ask_policies) == (1, 1, 2, 0)
