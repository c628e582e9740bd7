"""Described things answered by experience across variations and tasks (prag.agent.skills.answered): a
focus that raised the score answered its description rightly, one that failed the task wrongly,
by the thing's own name; a later episode takes the right one with no LLM question."""
from __future__ import annotations

import re
import shutil
from collections import Counter

import pytest
from support import played_rounds, sciworld_spec

from prag.agent.config import AgentConfig
from prag.agent.protocol import Usage
from prag.agent.skills.answered import answers, likeness
from prag.agent.skills.described import DescribedThings
from prag.agent.world.observed import Observed
from prag.envs.sciworld.domain import SCIWORLD
from prag.llm.base import Message
from prag.llm.scripted import ScriptedLLM
from prag.store.records import EpisodeRecord, StepRecord

THEN = ("Your task is to find the animal with the longest life span, then the shortest life span. First, focus on "
        "the animal with the longest life span.  Then, focus on the animal with the shortest life span. The animals "
        "are in the 'outside' location.")
LONGEST, SHORTEST = "the animal with the longest life span", "the animal with the shortest life span"
QUESTION = re.compile(r"Things (?:in the (?P<room>[\w -]+)|seen): (?P<things>.*)\.\nWhich one of them is (?P<description>.*)\?")
OUTSIDE = [("egg parrot", "isa", "parrot"), ("ant", "in", "outside"), ("egg parrot", "in", "outside"),
           ("baby baby wolf", "isa", "wolf")]


def played(goal: str, steps: list[tuple[str | None, float]]) -> EpisodeRecord:
    records = [StepRecord(t, action, "", "", "outside", OUTSIDE, score) for t, (action, score) in enumerate(steps)]
    return EpisodeRecord("r", 0, "t", "lifespan", goal, False, records)


def test_a_focus_that_raised_the_score_counts_for_its_description_and_one_that_failed_the_task_against() -> None:
    """The first focus answers the first described instruction, the second the second; the
    parrot by its own name ("egg parrot" in the actions). A focus that changed nothing counts
    neither way."""
    right_then_wrong = played(THEN, [(None, 0), ("look around", 0), ("focus on egg parrot", 83), ("focus on ant", -100)])
    assert answers([right_then_wrong], SCIWORLD) == {LONGEST: Counter(parrot=1), SHORTEST: Counter(ant=-1)}
    wolf_failed = played(THEN, [(None, 0), ("focus on baby baby wolf", -100)])
    idle = played(THEN, [(None, 0), ("focus on ant", 0)])
    tally = answers([right_then_wrong, wolf_failed, idle], SCIWORLD)
    assert tally[LONGEST] == Counter(parrot=1, wolf=-1) and tally[SHORTEST] == Counter(ant=-1)


def test_a_named_instruction_is_no_description_and_its_focus_counts_for_nothing() -> None:
    boil = "Your task is to boil water. First, focus on the substance. Then, take actions that will cause it to boil."
    assert answers([played(boil, [(None, 0), ("focus on egg parrot", 70)])], SCIWORLD) == {}


def outside(things: dict[str, str]) -> Observed:
    observed = Observed(SCIWORLD, THEN)
    observed.places, observed.visited = ["outside"], {"outside"}
    observed.seen = dict.fromkeys(things, "outside")
    observed.seen_from = dict.fromkeys(things, "outside")
    observed.own_names = {thing: own for thing, own in things.items() if own != thing}
    return observed


def asking_stand_in() -> ScriptedLLM:
    """Names the first thing listed: a stand-in for the LLM, to see whether and what it is asked."""
    return ScriptedLLM(lambda messages: unstated(messages[-1]["content"].split(": ", 1)[1].split(", ")[0].split(".")[0]),
                       supports_choices=True)


def unstated(shown: str) -> str:
    """A thing as a question shows it ("ant (alive)"), by its name."""
    return re.sub(r" \([^()]*\)$", "", shown)


def test_the_thing_experience_answered_is_taken_with_no_question_and_one_that_only_failed_is_not_offered() -> None:
    things = {"ant": "ant", "baby baby wolf": "wolf", "egg parrot": "parrot"}
    llm = asking_stand_in()
    described = DescribedThings(llm, Usage())
    assert described.choose(LONGEST, "animal", THEN, outside(things), known=Counter(parrot=2, wolf=-1)) == "egg parrot"
    assert llm.calls == []
    # Only failures known: the wolf is not offered; the LLM is asked about the rest.
    described = DescribedThings(llm, Usage())
    assert described.choose(LONGEST, "animal", THEN, outside(things), known=Counter(wolf=-1)) == "ant"
    assert "baby baby wolf" not in llm.calls[-1]["messages"][-1]["content"]


def test_things_answered_as_often_are_asked_about_among_themselves() -> None:
    llm = asking_stand_in()
    described = DescribedThings(llm, Usage())
    chosen = described.choose(LONGEST, "animal", THEN, outside({"ant": "ant", "baby baby wolf": "wolf", "egg parrot": "parrot"}),
                              known=Counter(parrot=1, wolf=1))
    assert chosen == "baby baby wolf"
    assert llm.calls[-1]["messages"][-1]["content"].startswith("Things seen: wolf, parrot.")  # by their own names


def test_what_the_right_answers_were_like_narrows_the_question_where_none_of_them_is_seen() -> None:
    """A crocodile, alive, was the right answer outside (a person's correction of another
    variation). Here no crocodile is seen: the question goes first outside, though the goal names
    the workshop, and offers only the living things there, with no "none"."""
    croc = [("crocodile", "in", "outside"), ("crocodile", "is", "alive"), ("fire pit", "in", "outside")]
    right = EpisodeRecord("r", 0, "t", "lifespan", THEN, True, [
        StepRecord(0, None, "", "", "outside", croc, 0), StepRecord(1, "focus on crocodile", "", "", "outside", croc, 50)])
    alike = likeness([right], SCIWORLD)
    assert alike == {LONGEST: Counter({"is alive": 1, "in outside": 1})}
    observed = Observed(SCIWORLD, THEN)
    observed.places, observed.visited = ["workshop", "outside"], {"workshop", "outside"}
    here = {"red wire": "workshop", "ant": "outside", "axe": "outside", "beaver": "outside", "fire pit": "outside"}
    observed.seen, observed.seen_from = dict(here), dict(here)
    observed.states = {"ant": {"alive"}, "beaver": {"alive"}}
    llm = asking_stand_in()
    goal = "Focus on the animal with the longest life span. Then, move it to the purple box in the workshop."
    assert DescribedThings(llm, Usage()).choose(LONGEST, "animal", goal, observed, alike=alike[LONGEST]) == "ant"
    (call,) = llm.calls
    assert call["messages"][-1]["content"] == (f"Things in the outside: ant (alive), beaver (alive).\nWhich one of them is {LONGEST}? "
                                               "Answer with its name.")


def knows_the_parrot(messages: list[Message]) -> str:
    """A stand-in that names the parrot as the longest-lived where it is listed, else the first
    thing listed; any other question is answered "look around"."""
    asked = QUESTION.search(messages[-1]["content"])
    if asked is None:
        return "look around"
    listed = [unstated(thing) for thing in asked["things"].split(", ")]
    return next((thing for thing in listed if "parrot" in thing and asked["description"] == LONGEST), listed[0])


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_training_game_s_answer_is_taken_in_another_task_s_variation_with_no_question(tmp_path) -> None:
    """Trained on lifespan-longest-lived (train variation 4: the parrot is the longest-lived, and
    the stand-in names it when asked), the test game of the other lifespan task (dev variation 66:
    the parrot again, beside other animals) focuses on the parrot first with no question about the
    longest life span, and scores for it."""
    llm = ScriptedLLM(knows_the_parrot, supports_choices=True)
    trained, test = played_rounds(tmp_path, llm, sciworld_spec(tmp_path, "then", "lifespan-longest-lived-then-shortest-lived",
                                                                "dev", 68, 30),
                                  AgentConfig(ask="hard-coded", sources=("experience", "search", "llm")),
                                  train=sciworld_spec(tmp_path, "longest", "lifespan-longest-lived", "train", 68, 30))
    assert trained.won and test.task_type == "lifespan-longest-lived-then-shortest-lived"
    focuses = [step for step in test.steps if step.action and step.action.startswith("focus on")]
    assert "parrot" in str(focuses[0].action) and (focuses[0].score or 0) > 0
    # The one question of the test game is about the shortest life span.
    assert test.llm_calls == 1 and SHORTEST in llm.calls[-1]["messages"][-1]["content"]
