"""The LLM budget: past N calls in a game, or past the seconds its calls may take, steps only the
LLM would choose are drawn at random, with no call, so that a game a slow model cannot win ends in
seconds, not minutes, and a fast one chooses every step."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import play_until_won

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
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


def test_past_its_seconds_the_llm_gives_way_to_random_draws(game):
    """A budget in time: the calls may take `llm_seconds` a step of the cap; a model that answers
    fast is asked every step, a slow one until its time is spent."""
    from dataclasses import replace

    def timed(seconds: float):  # the scripted LLM, each call said to take `seconds`
        llm = ScriptedLLM(lambda messages: "go to " + re.search(r"go to: ([^,;\n]+)", messages[-1]["content"]).group(1))
        complete = llm.complete
        llm.complete = lambda messages, **kw: (lambda done: replace(done, cost=replace(done.cost, seconds=seconds)))(complete(messages, **kw))  # type: ignore[method-assign]
        return llm

    for seconds, calls in ((1.0, 10), (40.0, 4)):  # 3 s a step of the 50-step cap: 150 s a game
        env = AlfworldEnv(Task("budget", "", 0, str(game)), game)
        llm = timed(seconds)
        agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="always", sources=("llm",), llm_seconds=3.0),
                          domain=ALFWORLD)
        play_until_won(env, agent, 10)
        trace = agent.finish()
        assert len(llm.calls) == calls and trace.report.steps_past_llm_budget == 10 - calls


@pytest.mark.parametrize(("given", "ask", "budget"), [
    (None, "hard-coded", (None, 3.0)),  # prag run's default where experience and search ask the LLM only at need
    (None, "always", (None, None)),  # P-RAG as published: the LLM chooses every step, without a limit
    ("none", "hard-coded", (None, None)),
    ("2", "always", (2, None)),
    ("0", "random", (0, None)),
    ("1.5s", "hard-coded", (None, 1.5)),
])
def test_the_run_commands_budget(given: str | None, ask: str, budget: tuple[int | None, float | None]) -> None:
    from prag.cli.run_cmd import DEFAULT_LLM_BUDGET, _llm_budget

    assert DEFAULT_LLM_BUDGET == "3s"
    assert _llm_budget(given, ask) == budget


@pytest.mark.parametrize("given", ["-1", "0s", "fast", "s"])
def test_a_budget_that_is_not_a_count_nor_seconds_is_refused(given: str) -> None:
    from prag.cli.run_cmd import _llm_budget
    from prag.errors import PragError

    with pytest.raises(PragError, match=f"--llm-budget '{given}': give a number of LLM calls"):
        _llm_budget(given, "hard-coded")


def test_the_rerun_command_says_the_budget_even_when_there_was_none() -> None:
    from prag.run.card import rerun_command
    from prag.run.config import ExperimentConfig, RunConfig
    from prag.store.records import RunRecord

    for budget, seconds, said in ((None, None, "--llm-budget none"), (4, None, "--llm-budget 4"), (None, 3.0, "--llm-budget 3s")):
        config = RunConfig(ExperimentConfig(spec="alfworld-valid-seen"),
                           agent=AgentConfig(llm_budget=budget, llm_seconds=seconds))
        run = RunRecord(id="r", spec="alfworld-valid-seen", llm="local", mode="prag", k=3, rounds=1, config=config.to_dict())
        assert said in rerun_command(run)
