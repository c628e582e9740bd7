"""Skills behind one protocol (prag.agent.skills.skill), declared by the family that can use them
(`Domain.skills`, names of prag.agent.skills.repertoire). ScienceWorld declares them all; each skill a
second world can use is played here on Errand (tests/families/errand.py), a real engine whose goals
spell instructions in its own words. The LLM is a scripted stand-in answering the skills' questions
(which thing a description names, which action measures a quantity); every step is the agent's."""
from __future__ import annotations

from dataclasses import replace

import pytest

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.protocol import Decision
from prag.agent.skills.repertoire import SKILLS
from prag.envs.base import Observation
from prag.envs.domain import Domain
from prag.envs.sciworld.domain import SCIWORLD
from prag.errors import PragError
from prag.llm.base import Message
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from tests.families.errand import DOMAIN, ErrandSource


def answers(messages: list[Message]) -> str:
    """A scripted stand-in for the LLM: the fruit is the apple; the scale measures a weight."""
    text = messages[-1]["content"]
    if "Which one of them is" in text:  # by the name it is asked by ("apple", its own name, where one apple is seen)
        return next((thing for thing in text.split(": ", 1)[1].split(".\n")[0].split(", ") if thing.startswith("apple")), "none")
    if text.startswith("Is the "):  # confirming the thing it named is of the kind
        return "yes" if text.startswith("Is the apple") else "no"
    if "Which action measures" in text:
        offered = text.split("Actions: ")[1].split(".\n")[0].split("; ")
        return next((action for action in offered if action.startswith("weigh")), offered[0])
    return "look"


def played(shape: str, domain: Domain = DOMAIN, steps: int = 25) -> tuple[bool, list[Decision]]:
    """The first Errand task of `shape`, played by search and the stand-in."""
    source = ErrandSource(shape, 1, 0)
    env = source.make(source.tasks()[0])
    observation: Observation = env.reset()
    config = AgentConfig(ask="hard-coded", sources=("search", "llm"), readers=(), think=False)
    agent = PragAgent(ScriptedLLM(answers, supports_choices=True), None, Visibility(), config, domain=domain)
    agent.reset(observation)
    decisions = []
    while not observation.done and len(decisions) < steps:
        decision = agent.act(observation)
        decisions.append(decision)
        observation = env.step(decision.action)
        agent.observe(decision.action, observation)
    return observation.won, decisions


def chosen_by_search(decisions: list[Decision]) -> list[str]:
    return [d.action for d in decisions if d.source in ("find", "subgoal")]


def test_instructed_find_take_along_and_carry_play_a_second_worlds_errand() -> None:
    won, decisions = played("carry")
    assert won
    steps = chosen_by_search(decisions)
    assert "open box 1" in steps  # find: the cup is in the closed box
    assert steps.index("choose cup 1") < steps.index("take cup 1 from box 1")  # instructed, then readied
    assert steps[-2:] == ["go to basket 1", "put cup 1 in basket 1"]  # carried where the goal says
    assert all(d.source != "llm" for d in decisions)


def test_described_the_llm_chooses_the_thing_the_words_describe_once_every_place_was_searched() -> None:
    won, decisions = played("described")
    steps = chosen_by_search(decisions)
    assert won and "choose apple 1" in steps
    assert steps.index("choose apple 1") > steps.index("go to basket 1")  # every place searched first


def test_conditions_measure_then_decide_the_branch_and_the_carry_follows_it() -> None:
    won, decisions = played("branch")
    steps = chosen_by_search(decisions)
    assert won
    assert steps.index("weigh apple 1") < steps.index("put apple 1 on counter 1")  # 7 kg: above 5, the counter


@pytest.mark.parametrize("shape", ["carry", "described", "branch"])
def test_a_family_that_declares_no_skills_gets_none(shape: str) -> None:
    won, decisions = played(shape, replace(DOMAIN, skills=()))
    assert not won
    assert not any(d.action.startswith("choose") and d.source == "subgoal" for d in decisions)


def test_the_family_s_order_is_the_order_tried() -> None:
    """Described before find: the LLM is never asked (nothing is `nowhere` while find-X has a
    place to look), so the order changes nothing here; carry before instructed: the choice is
    still made first, since nothing is marked to carry before it."""
    for skills in (("described", *DOMAIN.skills[:-1]), ("carry", "instructed", "take-along", "find")):
        won, _ = played("carry", replace(DOMAIN, skills=skills))
        assert won
    won, decisions = played("carry", replace(DOMAIN, skills=("find", "instructed")))
    assert not won and "choose cup 1" in chosen_by_search(decisions)  # no carry declared: chosen, never carried


def test_a_skill_the_agent_does_not_have_is_an_error_naming_those_it_has() -> None:
    with pytest.raises(PragError, match="declares skills prag does not have: fly.*instructed, take-along"):
        played("carry", replace(DOMAIN, skills=("instructed", "fly")))


def test_sciworld_declares_every_skill_in_the_order_search_tried_them_before() -> None:
    assert SCIWORLD.skills == tuple(SKILLS)
