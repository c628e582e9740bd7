"""Irrevocable actions (ScienceWorld's `focus on`): offered from the first step on what the goal
names; on anything else only in the last tenth of the step budget, by the LLM or a random draw."""
from __future__ import annotations

from dataclasses import replace

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.skills.irrevocable import Irrevocable, gamble_steps
from prag.agent.world.state import Step
from prag.envs.base import Observation
from prag.envs.sciworld.domain import SCIWORLD
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility

GOAL = "Your task is to freeze mercury. First, focus on the substance. Then, make it change its state."
ACTIONS = ["focus on substance in toilet", "focus on mercury", "open door to kitchen", "look around"]


def first() -> Observation:
    triples = [("toilet", "in", "bathroom"), ("substance in toilet", "in", "toilet"), ("substance in toilet", "isa", "water"),
               ("mercury", "in", "bathroom")]
    return Observation(GOAL, "This room is called the bathroom.", list(ACTIONS), triples, "at: bathroom", location="bathroom")


def agent(answers: list[str], seed: int = 0, max_steps: int = 100, **config: object) -> PragAgent:
    # A stand-in that takes the choices, so that what the agent offers is recorded.
    llm = ScriptedLLM(answers, supports_choices=True)
    made = PragAgent(llm, None, Visibility(), AgentConfig(think=False, **config), domain=SCIWORLD, seed=seed)  # type: ignore[arg-type]
    made.reset(bathroom(max_steps))
    return made


def bathroom(max_steps: int = 100) -> Observation:
    return replace(first(), max_steps=max_steps)


def test_a_doubtful_focus_is_not_offered_before_the_last_tenth_of_the_budget() -> None:
    played = agent(["open door to kitchen"])
    assert played.act(bathroom()).action == "open door to kitchen"
    offered = played.settings.llm.calls[0]["choices"]
    assert "focus on substance in toilet" not in offered and "focus on mercury" in offered


def test_in_the_last_tenth_it_is_offered_and_taken_with_no_check() -> None:
    played = agent(["focus on substance in toilet"], max_steps=10)  # a tenth of 10: the last step
    for _ in range(9):  # the tenth action
        played.state.steps.append(Step.of("look around", bathroom(10)))
    assert played.act(bathroom(10)).action == "focus on substance in toilet"
    assert len(played.settings.llm.calls) == 1


def test_a_thing_the_goal_names_is_offered_from_the_first_step() -> None:
    named = agent(["focus on mercury"])
    assert named.act(bathroom()).action == "focus on mercury" and len(named.settings.llm.calls) == 1


def test_past_the_llm_budget_a_random_draw_never_takes_a_doubtful_focus_early() -> None:
    drawn = {agent([], llm_budget=0, seed=seed).act(bathroom()).action for seed in range(40)}
    assert "focus on substance in toilet" not in drawn and "focus on mercury" in drawn


def test_the_gamble_steps_is_a_tenth_of_the_budget_and_at_least_a_step() -> None:
    assert (gamble_steps(100, 0.1), gamble_steps(30, 0.1), gamble_steps(5, 0.1), gamble_steps(14, 1.0)) == (10, 3, 1, 14)


def test_a_thing_is_named_by_the_actions_words_or_its_own_name_never_by_a_word_the_goal_uses_for_another() -> None:
    check = Irrevocable(SCIWORLD)
    goal = "Your task is to measure the temperature of water. First, focus on the thermometer. Next, focus on the substance."
    scene = [("substance in toilet", "isa", "water"), ("substance in pot", "isa", "gallium")]
    assert not check.doubtful("focus on thermometer in inventory", goal, scene)  # its own name, less where it is
    assert not check.doubtful("focus on substance in toilet", goal, scene)  # the scene says it is water
    assert check.doubtful("focus on substance in pot", goal, scene)  # "substance" is the goal's word for the water
    assert check.doubtful("focus on blue paint", goal, scene) and not check.doubtful("look around", goal, scene)


def test_a_word_the_goal_uses_for_something_else_does_not_name_the_target() -> None:
    """Both ended an episode at step 1 when any word of the goal counted (zero-shot, the 1.5B model)."""
    check = Irrevocable(SCIWORLD)
    goal = ("Your task is to measure the temperature of unknown substance B, which is located around the kitchen. "
            "First, focus on the thermometer. Next, focus on the unknown substance B. If the unknown substance B "
            "temperature is above 50.0 degrees celsius, place it in the orange box.")
    assert check.doubtful("focus on orange", goal, []) and check.doubtful("focus on kitchen", goal, [])
    assert not check.doubtful("focus on unknown substance B in inventory", goal, [])


def test_with_a_score_earned_a_doubtful_focus_is_never_offered() -> None:
    played = agent(["look around"], max_steps=10)
    for _ in range(9):  # the tenth action: in the gamble window
        played.state.steps.append(Step.of("look around", bathroom(10)))
    played.act(replace(bathroom(10), score=8.0))
    assert "focus on substance in toilet" not in played.settings.llm.calls[0]["choices"]


def test_a_window_of_the_whole_budget_leaves_every_focus_to_the_llm_whatever_the_score() -> None:
    played = agent(["focus on substance in toilet"], gamble_window=1.0)
    assert played.act(replace(bathroom(), score=8.0)).action == "focus on substance in toilet"


def test_a_thing_already_focused_on_is_never_offered_again_whatever_the_window() -> None:
    """ScienceWorld fails the task on a second focus on the thermometer (a dev variation of
    use-thermometer lost so): the scene marks what was focused on, and a focus on it is held back."""
    focused = replace(bathroom(), scene_triples=[*first().scene_triples, ("mercury", "is", "focused")])
    for window in (0.1, 1.0):
        played = agent(["open door to kitchen"], gamble_window=window)
        played.act(focused)
        assert "focus on mercury" not in played.settings.llm.calls[0]["choices"]
    drawn = {agent([], llm_budget=0, seed=seed).act(focused).action for seed in range(40)}
    assert "focus on mercury" not in drawn


def test_a_step_into_a_box_a_conditional_branch_names_waits_as_a_doubtful_focus_does() -> None:
    """"If it is electrically conductive, place it in the green box": a random "pour table into
    green box" answered the branch and failed test-conductivity at 60 points."""
    goal = ("Your task is to determine if sodium chloride is electrically conductive. First, focus on the sodium "
            "chloride. If it is electrically conductive, place it in the green box. If it is electrically "
            "nonconductive, place it in the blue box.")
    actions = ["pour table into green box", "move sodium chloride to blue box", "open green box", "look around"]
    seen = Observation(goal, "This room is called the kitchen.", actions, [], "at: kitchen", location="kitchen", score=60)
    held = Irrevocable(SCIWORLD).deferred(actions, goal, seen, 10, 100, 0.1)
    assert held == {"pour table into green box", "move sodium chloride to blue box"}
    assert Irrevocable(SCIWORLD).deferred(actions, goal, seen, 10, 100, 1.0) == set()


def test_a_focus_a_conditional_branch_says_to_take_waits_until_the_branch_is_decided() -> None:
    """"If the melting point ... is above 50.0 degrees celsius, focus on the green box": a stored
    route of another variation ended in its own answer, and the progress source took it here
    (both melting-point tasks failed outright in round 1)."""
    goal = ("Your task is to measure the melting point of orange juice. First, focus on the thermometer. Next, focus "
            "on the orange juice. If the melting point of orange juice is above 50.0 degrees celsius, focus on the "
            "green box. If the melting point of orange juice is below 50.0 degrees celsius, focus on the blue box.")
    actions = ["focus on green box", "focus on blue box", "focus on orange juice", "open green box"]
    seen = Observation(goal, "This room is called the kitchen.", actions, [], "at: kitchen", location="kitchen", score=78)
    assert Irrevocable(SCIWORLD).deferred(actions, goal, seen, 43, 100, 0.1) == {"focus on green box", "focus on blue box"}
    assert Irrevocable(SCIWORLD).deferred(actions, goal, seen, 43, 100, 1.0) == set()
