"""Irrevocable actions (ScienceWorld's `focus on`): taken on what the goal names, checked with
the model on anything else, withheld after a "no", never drawn at random."""
from __future__ import annotations

from prag.agent.agent import AgentConfig, PragAgent
from prag.envs.base import Observation
from prag.envs.sciworld.domain import SCIWORLD
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility

GOAL = "Your task is to freeze mercury. First, focus on the substance. Then, make it change its state."
ACTIONS = ["focus on substance in toilet", "focus on mercury", "open door to kitchen", "look around"]


def bathroom() -> Observation:
    triples = [("toilet", "in", "bathroom"), ("substance in toilet", "in", "toilet"), ("mercury", "in", "bathroom")]
    return Observation(GOAL, "This room is called the bathroom.", list(ACTIONS), triples, "at: bathroom", location="bathroom")


def agent(answers: list[str], seed: int = 0, **config: object) -> PragAgent:
    # A stand-in that takes the choices, so that what the agent offers is recorded.
    llm = ScriptedLLM(answers, supports_choices=True)
    made = PragAgent(llm, None, Visibility(), AgentConfig(think=False, **config), domain=SCIWORLD, seed=seed)  # type: ignore[arg-type]
    made.reset(bathroom())
    return made


def test_a_no_withholds_the_focus_for_the_episode_and_the_step_is_chosen_again() -> None:
    played = agent(["focus on substance in toilet", "no", "open door to kitchen", "look around"])
    assert played.act(bathroom()).action == "open door to kitchen"
    check = played.settings.llm.calls[1]
    assert check["choices"] == ["yes", "no"] and "cannot be undone" in check["messages"][-1]["content"]
    # Chosen again among the actions that are no gamble; the next step does not offer it again.
    assert played.settings.llm.calls[2]["choices"] == ["focus on mercury", "open door to kitchen", "look around"]
    played.act(bathroom())
    assert "focus on substance in toilet" not in played.settings.llm.calls[3]["choices"]


def test_a_yes_takes_it_and_a_thing_the_goal_names_needs_no_check() -> None:
    assert agent(["focus on substance in toilet", "yes"]).act(bathroom()).action == "focus on substance in toilet"
    named = agent(["focus on mercury"])
    assert named.act(bathroom()).action == "focus on mercury" and len(named.settings.llm.calls) == 1


def test_past_the_llm_budget_a_random_draw_never_takes_a_doubtful_focus() -> None:
    drawn = {agent([], llm_budget=0, seed=seed).act(bathroom()).action for seed in range(40)}
    assert "focus on substance in toilet" not in drawn and "focus on mercury" in drawn
