"""Exploration that seeks what is new (prag.agent.asking.novelty): the step drawn past the LLM budget goes
to the task's things and to what this task has not tried, a verb drawn before its action; played
on the real pantry engine against uniform draws."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from prag.agent.asking.novelty import Explorer, named_things, pair
from prag.agent.config import AgentConfig
from prag.envs import registry
from prag.envs.sciworld.domain import SCIWORLD
from prag.llm.scripted import RandomChoiceLLM
from prag.run.config import ExecutionConfig, ExperimentConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.sources import KnowledgeSource, StepSource
from prag.store import Store
from tests.families import pantry

KITCHEN = [("ice cream", "in", "freezer"), ("stove", "in", "kitchen"), ("freezer", "in", "kitchen"),
           ("metal pot", "in", "cupboard"), ("cupboard", "in", "kitchen")]
GOAL = "Your task is to melt ice cream. First, focus on the substance."


def test_the_things_the_goal_names_are_those_of_the_task_with_what_holds_them() -> None:
    assert named_things(GOAL, KITCHEN, SCIWORLD) == {"ice cream"}
    assert pair("move ice cream to stove", SCIWORLD) == ("move", "ice cream")
    assert pair("wait1", SCIWORLD) == ("wait1", "")


def test_draws_go_to_the_task_s_things_not_yet_tried_then_to_any_action_not_tried() -> None:
    explorer = Explorer(SCIWORLD, seed=0)
    choices = ["move ice cream to stove", "move ice cream to cupboard", "pick up ice cream", "open cupboard",
               "connect stove to cupboard", "connect cupboard to stove", "activate freezer", "look around"]
    relevant = {"move ice cream to stove", "move ice cream to cupboard", "pick up ice cream",
                "activate freezer"}  # what holds the ice cream, and nothing else named
    drawn = {explorer.draw(choices, GOAL, KITCHEN, tried=set(), here="kitchen", salt=str(n)) for n in range(40)}
    assert drawn <= relevant and len(drawn) > 1
    # Every action on the task's things tried: any other not tried yet, not the same again.
    drawn = {explorer.draw(choices, GOAL, KITCHEN, tried=relevant | {"connect stove to cupboard"}, here="kitchen",
                           salt=str(n)) for n in range(40)}
    assert drawn <= {"open cupboard", "connect cupboard to stove", "look around"}


def test_an_action_on_a_part_of_a_thing_the_task_names_is_about_that_thing() -> None:
    """ScienceWorld names a motor's terminals "anode in electric motor": connecting one is acting
    on the motor the task is about, and is drawn before the hundreds of other connections."""
    workshop = [("electric motor", "in", "workshop"), ("red wire", "in", "workshop"), ("battery", "in", "workshop")]
    choices = ["connect anode in electric motor to red wire terminal 1", "connect red wire terminal 2 to anode in battery",
               "look at battery"]
    drawn = {Explorer(SCIWORLD, seed=0).draw(choices, "Your task is to turn on the electric motor.", workshop, tried=set(),
                                             here="workshop", salt=str(n)) for n in range(30)}
    assert drawn == {"connect anode in electric motor to red wire terminal 1"}


def test_a_verb_the_score_rose_after_is_tried_first_on_the_things_its_step_acted_on() -> None:
    """The score rose after the motor's anode was connected to the black wire: every other draw
    connects the black wire's other terminal, which no goal word names, before anything else."""
    workshop = [("electric motor", "in", "workshop"), ("black wire", "in", "workshop"), ("battery", "in", "workshop"),
                ("red light bulb", "in", "workshop"), ("electric motor", "is", "focused")]
    goal = "Your task is to turn on the electric motor."
    rose_after = "connect anode in electric motor to black wire terminal 1"
    onward = "connect black wire terminal 2 to anode in battery"
    choices = [onward, "connect red light bulb anode to battery cathode", "pick up battery", "look at black wire",
               rose_after, "mix battery"]
    explorer = Explorer(SCIWORLD, seed=0)

    def draws(rewarded: list[str]) -> Counter[str]:
        return Counter(explorer.draw(choices, goal, workshop, tried={rose_after}, here="workshop", salt=str(n),
                                     rewarded=rewarded) for n in range(200))

    guided, blind = draws([rose_after, "go to workshop"]), draws([])
    assert guided[onward] > 100 > 3 * blind[onward]
    assert guided[rose_after] == blind[rose_after] == 0  # tried: not drawn again
    assert draws(["go to workshop"]) == blind, "a move the score rose after says nothing of what to do here"
    assert draws(["focus on electric motor"]) == blind, "an irrevocable step that paid is done, not drawn again"


def test_a_verb_with_many_actions_weighs_as_much_as_one_with_few() -> None:
    explorer = Explorer(SCIWORLD, seed=0)
    choices = [f"connect wire {n} to wire {m}" for n in range(20) for m in range(20)] + ["open door"]
    drawn = Counter(explorer.draw(choices, "x", [], tried=set(), salt=str(n)) == "open door" for n in range(200))
    assert 60 < drawn[True] < 140  # about half, where a uniform draw gives it 1 in 401


@pytest.fixture
def pantry_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "FAMILIES", dict(registry.FAMILIES))
    registry.register("pantry", pantry.from_params, pantry.DOMAIN)


def drawn_pairs(tmp_path: Path, explore: str) -> list[set[tuple[str, str]]]:
    """The (verb, thing) pairs each pantry episode's draws took, every step drawn (no LLM step at all)."""
    agent = AgentConfig(ask="hard-coded", sources=(KnowledgeSource.LLM,), llm_budget=0, explore=explore)
    spec = Path(__file__).parent / "families" / "pantry.toml"
    config = RunConfig(ExperimentConfig(spec=str(spec), rounds=1, llm="random-choice"), agent=agent,
                       execution=ExecutionConfig(answer_cache=False))
    with Store(tmp_path / f"{explore}.db") as store:
        run = start_run(store, config)
        Runner(store, run, config, llm=RandomChoiceLLM(0)).play()  # type: ignore[arg-type]
        episodes = [store.episode(e.id) for e in store.episodes(run.id)]
    assert all(d.source == StepSource.RANDOM for e in episodes for d in e.extra.decisions)
    return [{pair(s.action, pantry.DOMAIN) for s in e.steps if s.action} for e in episodes]


def test_on_a_real_engine_novel_draws_try_more_pairs_than_uniform_ones(tmp_path: Path, pantry_family: None) -> None:
    novel, uniform = drawn_pairs(tmp_path, "novel"), drawn_pairs(tmp_path, "uniform")
    assert sum(map(len, novel)) > sum(map(len, uniform))
