"""The LLM budget: past N calls in a game, steps only the LLM would choose are drawn at random,
with no call, so that a game a small model cannot win ends in seconds, not minutes."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import play_until_won

from prag.agent.agent import AgentConfig, PragAgent
from prag.envs.alfworld.env import AlfworldEnv
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.base import Task
from prag.envs.domain import ALFWORLD
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_game("pick_and_place_simple", 1, tmp_path_factory.mktemp("games"), DIFFICULTIES["medium"])


def test_past_the_budget_steps_are_drawn_at_random_without_a_call(game):
    env = AlfworldEnv(Task("budget", "", 0, str(game)), game)
    # the LLM alone chooses steps, and never well: the first place it may go to
    llm = ScriptedLLM(lambda messages: "go to " + re.search(r"go to: ([^,;\n]+)", messages[-1]["content"]).group(1))
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="always", sources=("llm",), llm_budget=3),
                      domain=ALFWORLD)
    play_until_won(env, agent, 10)
    trace = agent.finish()
    assert len(llm.calls) == 3 and trace.usage.cost.calls == 3
    assert trace.report.steps_past_llm_budget == 7
    assert [d.source for d in trace.report.decisions][3:] == ["random"] * 7


@pytest.mark.parametrize(("given", "ask", "budget"), [
    (None, "hard-coded", 6),  # prag run's default where experience and search ask the LLM only at need
    (None, "always", None),  # P-RAG as published: the LLM chooses every step, without a limit
    ("none", "hard-coded", None),
    ("2", "always", 2),
    ("0", "random", 0),
])
def test_the_run_commands_budget(given: str | None, ask: str, budget: int | None) -> None:
    from prag.cli.run_cmd import DEFAULT_LLM_BUDGET, _llm_budget

    assert DEFAULT_LLM_BUDGET == 6
    assert _llm_budget(given, ask) == budget


def test_a_budget_that_is_not_a_count_is_refused() -> None:
    from prag.cli.run_cmd import _llm_budget
    from prag.errors import PragError

    with pytest.raises(PragError, match="--llm-budget '-1': give a number of LLM calls"):
        _llm_budget("-1", "hard-coded")


def test_the_rerun_command_says_the_budget_even_when_there_was_none() -> None:
    from prag.run.card import rerun_command
    from prag.run.config import ExperimentConfig, RunConfig
    from prag.store.records import RunRecord

    for budget, said in ((None, "--llm-budget none"), (4, "--llm-budget 4")):
        config = RunConfig(ExperimentConfig(spec="alfworld-valid-seen"), agent=AgentConfig(llm_budget=budget))
        run = RunRecord(id="r", spec="alfworld-valid-seen", llm="local", mode="prag", k=3, rounds=1, config=config.to_dict())
        assert said in rerun_command(run)
