"""`prag query`, `stats`, `export`, `import` through typer's test runner, with the real MiniLM."""
from __future__ import annotations

import json

import pytest
from support import episode, minilm, run
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store

_register()
runner = CliRunner()

GOALS = [
    ("put a clean apple in the fridge", True, 0),
    ("heat some egg and put it on the countertop", False, 0),
    ("look at the book under the desklamp", True, 1),
    ("put a clean apple in the fridge", True, 1),
]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "demo.db"
    with Store(path) as store:
        store.add_run(run("demo", rounds=2))
        cache = EmbeddingCache(store, minilm())
        for n, (goal, won, round_) in enumerate(GOALS):
            record = episode("demo", round_, f"t{n}", goal=goal, won=won,
                             scenes=("at: kitchen", f"at: fridge 1\napple {n} in fridge 1"))
            cache.vectors([record.goal] + [s.scene for s in record.steps])
            store.add_episode(record)
    return path


def invoke(*args: str, input: str | None = None):
    return runner.invoke(app, [str(a) for a in args], input=input, env={"COLUMNS": "200"})


def test_query_ranks_the_matching_goal_first(store_path):
    result = invoke("query", store_path, "put an apple in the refrigerator", "--k", "2", "--json")
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert [h["goal"] for h in hits] == ["put a clean apple in the fridge"] * 2
    assert [h["episode_id"] for h in hits] == [1, 4]  # equal scores: the older episode first


def test_query_with_scene_shows_score_parts_in_a_table(store_path):
    result = invoke("query", store_path, "look at a book", "--scene", "at: fridge 1\napple 2 in fridge 1", "--k", "1")
    assert result.exit_code == 0, result.output
    assert "look at the book under the desklamp" in result.output
    assert "mode prag" in result.output and "best t" in result.output


def test_query_as_of_a_round_sees_earlier_rounds_only(store_path):
    result = invoke("query", store_path, "look at a book", "--run", "demo", "--round", "1", "--k", "5", "--json")
    assert {h["round"] for h in json.loads(result.output)} == {0}


def test_stats_reports_success_per_round_and_cache(store_path):
    result = invoke("stats", store_path, "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert [(r["round"], r["episodes"], r["won"]) for r in stats["rounds"]] == [(0, 2, 1), (1, 2, 2)]
    assert stats["episodes"] == 4 and stats["steps"] == 8
    # 3 distinct goals + "at: kitchen" + 4 fridge scenes: repeated texts are embedded once
    assert stats["vectors"]["all-MiniLM-L6-v2"] == 3 + 1 + 4
    table = invoke("stats", store_path)
    assert "success per round" in table.output and "50.0%" in table.output


def test_export_then_import_through_the_cli(store_path, tmp_path):
    exported = invoke("export", store_path)
    assert exported.exit_code == 0
    (tmp_path / "e.jsonl").write_text(exported.output)
    result = invoke("import", tmp_path / "copy.db", tmp_path / "e.jsonl")
    assert result.exit_code == 0 and "imported 4 episodes" in result.output
    assert invoke("export", tmp_path / "copy.db").output == exported.output


@pytest.mark.parametrize(
    "args, message",
    [
        (("query", "{missing}", "goal"), "no store at"),
        (("stats", "{missing}"), "no store at"),
        (("query", "{empty}", "goal"), "has no episodes yet"),
        (("query", "{store}", "goal", "--mode", "sg"), "unknown retrieval mode 'sg'"),
        (("query", "{store}", "goal", "--mode", "prag"), "needs a scene graph"),
        (("stats", "{foreign}"), "not an SQLite database"),
        (("import", "{store}", "{missing}"), "no file"),
    ],
)
def test_bad_input_gets_a_clear_message_and_no_traceback(store_path, tmp_path, args, message):
    empty = tmp_path / "empty.db"
    Store(empty).close()
    foreign = tmp_path / "notes.txt"
    foreign.write_text("shopping list\n" * 20)
    paths = {"missing": tmp_path / "missing.db", "empty": empty, "store": store_path, "foreign": foreign}
    result = invoke(*[a.format(**paths) for a in args])
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_every_command_has_help():
    for command in app.registered_commands:
        name = command.name or command.callback.__name__
        result = invoke(name, "--help")
        assert result.exit_code == 0 and "Usage" in result.output
        assert (command.callback.__doc__ or "").strip(), f"{name} has no help text"
