"""The actions about the task's things (prag.agent.relevance), which half of the draws past the LLM
budget are taken among."""
from __future__ import annotations

from prag.agent.relevance import about_the_task
from prag.envs.sciworld.domain import SCIWORLD

MELT = ("Your task is to melt lead. First, focus on the substance. Then, take actions that will cause it to change "
        "its state of matter.")


def test_actions_naming_the_goal_s_things_or_what_holds_the_thing_focused_on_are_about_the_task() -> None:
    triples = [("lead", "is", "focused"), ("lead", "in", "metal pot"), ("metal pot", "in", "stove"),
               ("stove", "in", "kitchen"), ("fridge", "in", "kitchen"), ("substance in cup", "in", "kitchen")]
    actions = ["activate stove", "move metal pot to table", "pick up lead", "open fridge", "go to kitchen",
               "look at substance in cup", "focus on substance in cup"]
    assert about_the_task(actions, MELT, triples, SCIWORLD, "kitchen") == [
        "activate stove", "move metal pot to table", "pick up lead"]


def test_with_nothing_focused_only_the_goal_s_words_count() -> None:
    goal = "Your task is to turn on the electric buzzer. First, focus on the electric buzzer."
    actions = ["connect battery anode to anode in buzzer", "connect battery anode to blue wire terminal 1", "open door"]
    assert about_the_task(actions, goal, [], SCIWORLD, "workshop") == ["connect battery anode to anode in buzzer"]
