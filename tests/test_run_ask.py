"""Ask policies through the runner: a won task is replayed from the store without the LLM,
policies share a round 0 that asked every step, and a learned policy must exist in the store.
The LLM is a scripted stand-in that follows the grid solver's plan; the engine and store are real."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import plan_follower, plans_of, write_spec
from support import minilm

from prag.agent.config import AgentConfig
from prag.errors import PragError
from prag.llm.scripted import ScriptedLLM
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.runner import Runner, start_run
from prag.store import Store
from prag.store.episode_extra import Choice

NO_CORRECTIONS = RetrievalConfig(corrections=False)


def play(store: Store, config: RunConfig, name: str, llm: ScriptedLLM) -> None:
    run = start_run(store, config, name)
    Runner(store, run, config, llm=llm, encoder=minilm()).play()


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    directory = tmp_path_factory.mktemp("ask")
    return write_spec(directory, "ask", ["put_away_groceries", "throw_away_trash"], max_steps=30), directory


def test_hard_coded_replays_round_0s_wins_without_the_llm_and_always_asks_every_step(grid, tmp_path):
    spec, _ = grid
    llm = ScriptedLLM(plan_follower(plans_of(spec)))
    with Store(tmp_path / "s.db") as store:
        play(store, RunConfig(ExperimentConfig(spec=spec, rounds=1), NO_CORRECTIONS), "r0", llm)
        round0 = list(store.episodes("r0"))
        assert all(e.won for e in round0) and sum(e.llm_calls for e in round0) == len(llm.calls) > 0
        for ask in ("hard-coded", "always"):
            config = RunConfig(ExperimentConfig(spec=spec, rounds=2, round0_from="r0"), NO_CORRECTIONS,
                               AgentConfig(ask=ask), ExecutionConfig(answer_cache=False))
            play(store, config, ask, llm)
            round1 = [e for e in store.episodes(ask) if e.round == 1]
            assert all(e.won for e in round1)
            calls = sum(e.llm_calls for e in round1)
            steps = sum(e.n_actions for e in round1)
            assert calls == (0 if ask == "hard-coded" else steps)
            sources = {d.source for e in round1 for d in e.extra.decisions}
            assert sources == ({"episode"} if ask == "hard-coded" else {"llm"})


def test_a_round_0_that_followed_plans_stands_only_for_its_own_policy(grid, tmp_path):
    spec, _ = grid
    with Store(tmp_path / "s.db") as store:
        play(store, RunConfig(ExperimentConfig(spec=spec, rounds=1), NO_CORRECTIONS), "asked",
             ScriptedLLM(plan_follower(plans_of(spec))))
        hard = AgentConfig(ask="hard-coded")
        # Every step of it was asked: it stands for any policy's round 0.
        start_run(store, RunConfig(ExperimentConfig(spec=spec, round0_from="asked"), NO_CORRECTIONS, hard), "from-asked")
        # A round 0 whose steps came from a plan does not stand for one that would have asked.
        start_run(store, RunConfig(ExperimentConfig(spec=spec, rounds=1), NO_CORRECTIONS, hard), "planned")
        for episode in store.episodes("asked"):
            followed = [Choice("episode", False, False)] * episode.n_actions
            store.add_episode(replace(episode, run_id="planned", id=None, extra=replace(episode.extra, decisions=followed)))
        with pytest.raises(PragError, match="followed plans in round 0"):
            start_run(store, RunConfig(ExperimentConfig(spec=spec, round0_from="planned"), NO_CORRECTIONS))
        start_run(store, RunConfig(ExperimentConfig(spec=spec, round0_from="planned"), NO_CORRECTIONS, hard), "same")


def test_a_learned_policy_must_be_in_the_store(grid, tmp_path):
    spec, _ = grid
    config = RunConfig(ExperimentConfig(spec=spec, rounds=1), NO_CORRECTIONS, AgentConfig(ask="learned"))
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(PragError, match="no ask policy .* train one with `prag train-asker`"):
            start_run(store, config, "learned")
        assert store.runs() == []  # refused before the run was recorded
