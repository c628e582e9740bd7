"""The irrevocable steps a goal instructs ("First, focus on the thermometer. Next, focus on the
chocolate."): read in order, never from a conditional sentence, taken by search with no LLM call
once the thing is in view, on the real ScienceWorld simulator."""
from __future__ import annotations

import shutil

import pytest

from prag.agent.agent import AgentConfig, PragAgent
from prag.agent.instructed import instructed
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
def test_search_focuses_on_the_instructed_things_once_in_view_and_never_on_a_word_no_thing_has() -> None:
    env = SciworldEnv(Task("use-thermometer-0", "use-thermometer", 0), "use-thermometer", 0, "")
    try:
        first = env.reset()
        assert instructed(first.goal, SCIWORLD)[0] == "thermometer"
        # A stand-in LLM that always answers "look around", so that any focus is search's.
        llm = ScriptedLLM(lambda messages: "look around", supports_choices=True)
        agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm")), domain=SCIWORLD)
        agent.reset(first)
        assert agent.act(first).action == "look around"  # no thermometer in view yet
        seen = env.step("open door to kitchen")
        agent.observe("open door to kitchen", seen)
        seen = env.step("go to kitchen")
        agent.observe("go to kitchen", seen)
        decision = agent.act(seen)
        assert decision.action.startswith("focus on thermometer") and decision.source == StepSource.SUBGOAL
        assert not decision.asked
        focused = env.step(decision.action)
        assert focused.score > seen.score  # the simulator's score says it was the thing meant
    finally:
        env.close()
