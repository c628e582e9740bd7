"""The irrevocable steps a goal instructs ("First, focus on the thermometer. Next, focus on the
chocolate."): read in order, never from a conditional sentence, taken by search with no LLM call
once the thing is in view, on the real ScienceWorld simulator."""
from __future__ import annotations

import shutil

import pytest

from prag.agent.agent import AgentConfig, PragAgent
from prag.agent.instructed import instructed
from prag.agent.protocol import Decision
from prag.envs.base import Task
from prag.envs.domain import ALFWORLD
from prag.envs.sciworld.domain import SCIWORLD
from prag.envs.sciworld.env import SciworldEnv
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.sources import StepSource

MELTING = ("Your task is to measure the melting point of chocolate, which is located around the kitchen. First, focus "
           "on the thermometer. Next, focus on the chocolate. If the melting point of chocolate is above 50.0 degrees "
           "celsius, focus on the yellow box. If the melting point of chocolate is below 50.0 degrees celsius, focus "
           "on the blue box. The boxes are located around the kitchen.")


def test_the_unconditional_instructions_are_read_in_order() -> None:
    assert instructed(MELTING, SCIWORLD) == ["thermometer", "chocolate"]
    assert instructed("Your task is to use chemistry to create orange paint. When you are done, focus on the orange paint.",
                      SCIWORLD) == ["orange paint"]
    assert instructed("Your task is to boil gallium. First, focus on the substance. Then, make it boil.", SCIWORLD) == [
        "substance"]
    assert instructed("put a clean mug in the coffee machine.", ALFWORLD) == []  # a family with none


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_word_no_thing_is_called_by_is_sought_but_never_focused_on() -> None:
    """boil: "First, focus on the substance": the water is "substance in ..." isa water; search
    looks room after room for a thing called "substance" and focuses on none."""
    decisions = play("boil", 25)
    assert not [d for d in decisions if d.action.startswith("focus on")]
    assert {d.source for d in decisions} >= {StepSource.FIND}


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_find_x_opens_doors_to_the_instructed_thing_and_search_focuses_on_it_with_no_llm_call() -> None:
    decisions = play("use-thermometer", 30)
    focus = decisions[-1]
    assert focus.action.startswith("focus on thermometer") and focus.source == StepSource.SUBGOAL
    assert {d.source for d in decisions} == {StepSource.FIND, StepSource.SUBGOAL}  # no LLM call


def play(task: str, limit: int) -> list[Decision]:
    """Up to `limit` steps of variation 0 of `task`, until the first focus, with a stand-in LLM
    that always answers "look around" (so a focus is search's); the score must rise at a focus."""
    env = SciworldEnv(Task(f"{task}-0", task, 0), task, 0, "")
    try:
        seen = env.reset()
        llm = ScriptedLLM(lambda messages: "look around", supports_choices=True)
        agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm")), domain=SCIWORLD)
        agent.reset(seen)
        for _ in range(limit):
            decision = agent.act(seen)
            before, seen = seen.score, env.step(decision.action)
            agent.observe(decision.action, seen)
            if decision.action.startswith("focus on"):
                assert seen.score > before  # the simulator's score says it was the thing meant
                break
        return agent.state.decisions
    finally:
        env.close()
