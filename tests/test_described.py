"""A thing the goal describes rather than names ("a(n) animal", "the animal with the longest life
span"): read as a description, asked of the LLM room by room once the words found nothing, the
rooms the goal mentions first, and focused on by search, on the real ScienceWorld simulator."""
from __future__ import annotations

import re
import shutil
from dataclasses import replace

import pytest
from support import play_until_won

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.protocol import Usage
from prag.agent.skills.described import DescribedThings, rooms_first_named, things_by_room
from prag.agent.skills.instructed import Instructed
from prag.agent.world.observed import Observed
from prag.envs.base import Task
from prag.envs.sciworld.domain import SCIWORLD
from prag.envs.sciworld.env import SciworldEnv
from prag.llm.base import Message
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.sources import StepSource

LONGEST = ("Your task is to find the animal with the longest life span.  The animals are in the 'outside' location.  "
           "Focus on the animal with the longest life span.")
QUESTION = re.compile(r"Things (?:in the (?P<room>[\w -]+)|seen|the task names): (?P<things>.*)\.\nWhich one of them is (?P<description>.*)\?")


def test_a_kind_or_a_qualified_phrase_is_a_description_and_a_name_is_not() -> None:
    animal = Instructed("Your task is to find a(n) animal. First, focus on the thing.", SCIWORLD).described
    assert animal is not None and (animal.description, animal.head) == ("a(n) animal", "animal")
    longest = Instructed(LONGEST, SCIWORLD).described
    assert longest is not None and (longest.description, longest.head) == ("the animal with the longest life span", "animal")
    assert Instructed("Your task is to boil gallium. First, focus on the substance.", SCIWORLD).described is None
    assert Instructed("Your task is to measure the melting point of chocolate. First, focus on the thermometer.",
                      SCIWORLD).described is None
    instructed = Instructed(LONGEST, SCIWORLD)
    instructed.mean("elephant")
    assert instructed.next == "elephant" and instructed.described is None


def observed_house() -> Observed:
    observed = Observed(SCIWORLD, LONGEST)
    observed.places = ["kitchen", "outside"]
    observed.visited = {"kitchen", "outside", "hallway"}
    observed.seen = {"fridge": "kitchen", "apple": "fridge", "sink": "kitchen", "elephant": "outside",
                     "crocodile": "outside", "air": "hallway", "kitchen": "hallway"}
    observed.seen_from = {"fridge": "kitchen", "apple": "kitchen", "sink": "kitchen", "elephant": "outside",
                          "crocodile": "outside", "air": "hallway", "kitchen": "hallway"}
    return observed


def test_the_things_seen_are_grouped_by_the_room_they_were_seen_from_and_the_goal_s_rooms_come_first() -> None:
    rooms = things_by_room(observed_house())
    assert rooms == {"kitchen": ["apple", "fridge", "sink"], "outside": ["crocodile", "elephant"], "hallway": ["air"]}
    assert [room for room, _ in rooms_first_named(LONGEST, rooms)] == ["outside", "kitchen", "hallway"]


CONFIRM = re.compile(r"Is the (?P<thing>.*) (?P<description>a\(n\) .*)\? Answer yes or no\.")


def knowing(answers: dict[str, str]) -> ScriptedLLM:
    """A stand-in that answers a described-thing question with the first thing listed that it
    was told is so described (shown with its states or not), else "none"; asked to confirm one,
    yes where it was told so; any other question with "look around"."""
    def named(shown: str, description: str) -> str | None:
        return next((thing for thing, said in answers.items()
                     if said == description and (shown == thing or shown.startswith(f"{thing} ("))), None)

    def answer(messages: list[Message]) -> str:
        question = messages[-1]["content"]
        if confirm := CONFIRM.fullmatch(question):
            return "yes" if named(confirm["thing"], confirm["description"]) else "no"
        asked = QUESTION.search(question)
        if asked is None:
            return "look around"
        listed = asked["things"].split(", ")
        return next((thing for shown in listed if (thing := named(shown, asked["description"]))), "none")
    return ScriptedLLM(answer, supports_choices=True)


def searching(llm: ScriptedLLM) -> PragAgent:
    """An agent whose steps are search's, or the LLM's past it."""
    return PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm")), domain=SCIWORLD)


def test_rooms_are_asked_until_one_names_a_thing_and_a_chosen_thing_is_not_offered_again() -> None:
    llm = knowing({"elephant": "the animal with the longest life span", "crocodile": "the animal with the shortest life span"})
    usage = Usage()
    described = DescribedThings(llm, usage)
    observed = observed_house()
    assert described.choose("the animal with the longest life span", "animal", LONGEST, observed) == "elephant"
    assert len(llm.calls) == 1 and usage.cost.calls == 1  # the goal's room first, and it named one
    assert llm.calls[0]["choices"] == ["crocodile", "elephant", "none"]
    assert described.choose("the animal with the longest life span", "animal", LONGEST, observed) is None  # each room once
    assert len(llm.calls) == 3  # the kitchen and the hallway, asked now, name none
    assert described.choose("the animal with the shortest life span", "animal", LONGEST, observed) == "crocodile"
    assert llm.calls[-1]["choices"] == ["crocodile", "none"]  # the elephant was chosen already


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_search_walks_the_house_asks_which_thing_is_an_animal_then_focuses_on_it_and_carries_it_to_the_box() -> None:
    """find-animal, variation 0: no thing's name says "animal". find-X searches every place for the
    word, then the LLM (a stand-in that knows the blue jay's egg is an animal) is asked room by room; the
    focus on the thing it names raises the simulator's score, and search carries it to the box:
    won, every step by find-X or search, the LLM asked questions but chose no step."""
    llm = knowing({"egg blue jay": "a(n) animal"})  # by the actions' words: a hatchling blue jay is outside too
    agent = searching(llm)
    assert play_until_won(SciworldEnv(Task("find-animal-0", "find-animal", 0), "find-animal", 0, ""), agent, 100)
    assert [d.action for d in agent.state.decisions if d.action.startswith("focus on ")][0].endswith(" blue jay")
    assert {d.source for d in agent.state.decisions} == {StepSource.FIND, StepSource.SUBGOAL}
    asked = [call["messages"][-1]["content"] for call in llm.calls]
    assert all(QUESTION.search(question) or CONFIRM.fullmatch(question) for question in asked)  # questions, no step asked
    assert asked[-1] == "Is the egg blue jay (alive) a(n) animal? Answer yes or no."


def house_with_planes() -> Observed:
    observed = observed_house()
    planes = {"inclined plane e": "kitchen", "inclined plane with a iron surface": "outside"}
    observed.seen |= planes
    observed.seen_from |= planes
    return observed


def test_where_things_seen_are_called_what_the_description_is_the_question_is_which_of_them() -> None:
    llm = ScriptedLLM(lambda messages: "inclined plane e", supports_choices=True)
    chosen = DescribedThings(llm, Usage()).choose("the inclined plane with the most friction", "inclined plane", "",
                                                  house_with_planes())
    assert chosen == "inclined plane e"
    assert [call["choices"] for call in llm.calls] == [["inclined plane e", "inclined plane with a iron surface"]]
    assert llm.calls[0]["messages"][-1]["content"].startswith("Things seen: inclined plane e, inclined plane with a")


def test_a_thing_a_focus_on_which_failed_before_is_not_offered_and_the_one_left_needs_no_question() -> None:
    llm = ScriptedLLM(lambda messages: "inclined plane e", supports_choices=True)
    chosen = DescribedThings(llm, Usage()).choose("the inclined plane with the most friction", "inclined plane", "",
                                                  house_with_planes(), ruled_out={"inclined plane e"})
    assert chosen == "inclined plane with a iron surface" and not llm.calls
    animals = ScriptedLLM(lambda messages: "none", supports_choices=True)
    grown = observed_house()
    grown.own_names["baby crocodile"] = "crocodile"  # called so now; the focus that failed said "crocodile"
    grown.seen["baby crocodile"] = grown.seen_from["baby crocodile"] = "outside"
    DescribedThings(animals, Usage()).choose("a(n) animal", "animal", "", grown, ruled_out={"elephant", "crocodile"})
    outside = [call["choices"] for call in animals.calls if "Things in the outside" in call["messages"][-1]["content"]]
    assert not outside and len(animals.calls) == 2  # nothing left outside to ask of; the kitchen and hallway asked


def test_the_things_a_fatal_focus_was_aimed_at_are_known_by_every_name_they_had() -> None:
    from prag.agent.sources.past_episodes import ThisTask, fatal_things
    from prag.retrieval.episodes import Experience
    from prag.store.records import EpisodeRecord, StepRecord

    wolf = [("juvenile juvenile wolf", "in", "outside"), ("juvenile juvenile wolf", "isa", "wolf")]
    steps = [StepRecord(0, None, "o", "at: hallway", "hallway", [], 0.0),
             StepRecord(1, "focus on juvenile juvenile wolf", "o", "at: outside", "outside", wolf, -100.0)]
    lost = EpisodeRecord("r", 0, "t", "lifespan", LONGEST, False, steps, id=1)
    this = ThisTask.of(LONGEST, steps[0], SCIWORLD)
    assert fatal_things(this, [Experience(None, lost)]) == {"juvenile juvenile wolf", "wolf"}  # type: ignore[arg-type]
    assert fatal_things(replace(this, goal="another goal"), [Experience(None, lost)]) == set()  # type: ignore[arg-type]


def test_a_kind_named_is_confirmed_and_the_things_are_shown_with_their_states() -> None:
    """The 1.5B model named the sink a living thing where no living thing was in the room; asked
    whether the sink is one, it said no: the question goes on to the next room, where the things
    are shown with their states ("elephant (alive)")."""
    def careless(messages: list[Message]) -> str:
        question = messages[-1]["content"]
        if confirm := CONFIRM.fullmatch(question):
            return "yes" if confirm["thing"] == "elephant (alive)" else "no"
        return QUESTION.search(question)["things"].split(", ")[-1].split(" (")[0]  # type: ignore[index]
    llm = ScriptedLLM(careless, supports_choices=True)
    observed = observed_house()
    observed.states = {"elephant": {"alive"}, "crocodile": {"alive"}, "fridge": {"closed"}}
    goal = "Your task is to find a(n) living thing. First, focus on the thing."
    assert DescribedThings(llm, Usage()).choose("a(n) living thing", "living thing", goal, observed) == "elephant"
    asked = [call["messages"][-1]["content"] for call in llm.calls]
    assert asked[0].startswith("Things in the kitchen: apple, fridge (closed), sink.")
    assert asked[1] == "Is the sink a(n) living thing? Answer yes or no."  # named, then not confirmed
    assert asked[2].startswith("Things in the outside: crocodile (alive), elephant (alive).")
    assert asked[3] == "Is the elephant (alive) a(n) living thing? Answer yes or no." and len(asked) == 4
    longest = ScriptedLLM(lambda messages: "crocodile", supports_choices=True)
    assert DescribedThings(longest, Usage()).choose("the animal with the longest life span", "animal", LONGEST,
                                                    observed) == "crocodile"
    assert len(longest.calls) == 1  # one thing described, not a kind: no "is it?"


def test_what_the_goal_names_is_asked_about_last() -> None:
    """"Move it to the purple box in the living room": the box is where the living thing goes.
    Asked about the living room first (the goal names it), the 1.5B model named the box."""
    llm = knowing({"purple box": "a(n) living thing", "elephant": "a(n) living thing"})
    observed = observed_house()
    observed.seen["purple box"] = observed.seen_from["purple box"] = "kitchen"
    goal = "Your task is to find a(n) living thing. First, focus on the thing. Then, move it to the purple box in the kitchen."
    described = DescribedThings(llm, Usage())
    assert described.choose("a(n) living thing", "living thing", goal, observed) == "elephant"
    first = llm.calls[0]["messages"][-1]["content"]
    assert first.startswith("Things in the kitchen: apple, fridge, sink.")  # the goal's room first, without its box
    assert described.choose("a(n) living thing", "living thing", goal, observed) == "purple box"
    assert llm.calls[-2]["messages"][-1]["content"].startswith("Things the task names: purple box.")


def test_a_question_answered_with_no_thing_listed_chooses_nothing() -> None:
    llm = ScriptedLLM(lambda messages: "a dolphin", supports_choices=True)  # a backend that does not constrain
    described = DescribedThings(llm, Usage())
    assert described.choose("a(n) animal", "animal", "find a(n) animal.", observed_house()) is None
    assert len(llm.calls) == 3  # every room asked; no answer was a thing listed there


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_the_thing_chosen_is_focused_on_by_its_own_name_after_the_words_for_it_changed_as_it_grew() -> None:
    """lifespan-longest-lived, train variation 0: the stand-in names "baby brown bear" when
    asked outside; by the time find-X has searched the house (and opened what is closed in it) it
    is called otherwise, and search, knowing it by its own name (the scene's `isa`), focuses on
    it by the words it has now: the task is won."""
    agent = searching(knowing({"baby brown bear": "the animal with the longest life span"}))
    env = SciworldEnv(Task("lifespan-longest-lived-0", "lifespan-longest-lived", 0), "lifespan-longest-lived", 0, "")
    assert play_until_won(env, agent, 60)
    last = agent.state.decisions[-1]
    assert re.fullmatch(r"focus on (\w+ )?brown bear", last.action) and last.source == StepSource.SUBGOAL
    assert agent.state.observed.room_seen("brown bear") == "outside"


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_the_model_is_asked_once_every_place_was_searched_and_only_which_of_the_things_so_called() -> None:
    """inclined-plane-friction-named-surfaces, train variation 0: find-X may find no place it can
    reach for a step before a door is opened; the question waits until every place was searched,
    and is then which of the two inclined planes seen (a stand-in answering with the first thing
    listed: asked room by room, that would be whatever the first room holds)."""
    searched_when_asked: list[bool] = []

    def first_listed(messages: list[Message]) -> str:
        asked = QUESTION.search(messages[-1]["content"])
        if asked is None:
            return "look around"
        searched_when_asked.append(not agent.state.observed.to_search())
        return asked["things"].split(", ")[0]
    llm = ScriptedLLM(first_listed, supports_choices=True)
    agent = searching(llm)
    env = SciworldEnv(Task("friction-0", "inclined-plane-friction-named-surfaces", 0), "inclined-plane-friction-named-surfaces", 0, "")
    try:
        seen = env.reset()
        agent.reset(seen)
        while not any(d.action.startswith("focus on") for d in agent.state.decisions) and len(agent.state.decisions) < 60:
            decision = agent.act(seen)
            seen = env.step(decision.action)
            agent.observe(decision.action, seen)
    finally:
        env.close()
    questions = [call for call in llm.calls if QUESTION.search(call["messages"][-1]["content"])]
    assert len(questions) == 1 and all(choice.startswith("inclined plane") for choice in questions[0]["choices"])
    assert agent.state.decisions[-1].action.startswith("focus on inclined plane")  # the one chosen: not asked again
    assert searched_when_asked == [True]


def test_the_box_a_failed_answer_carried_a_thing_into_is_ruled_out_as_a_fatal_focus_is() -> None:
    from prag.agent.skills.conditions import Conditions, branches
    from prag.agent.skills.instructed import sentences
    from prag.agent.sources.past_episodes import ThisTask, fatal_things
    from prag.retrieval.episodes import Experience
    from prag.store.records import EpisodeRecord, StepRecord

    goal = ("Your task is to determine if paper clip is electrically conductive. First, focus on the paper clip. If it "
            "is electrically conductive, place it in the green box. If it is electrically nonconductive, place it in "
            "the blue box.")
    steps = [StepRecord(0, None, "o", "at: hallway", "hallway", [], 0.0),
             StepRecord(1, "move paper clip to blue box", "o", "at: hallway", "hallway", [], -100.0)]
    lost = EpisodeRecord("r", 0, "t", "test-conductivity", goal, False, steps, id=1)
    failed = fatal_things(ThisTask.of(goal, steps[0], SCIWORLD), [Experience(None, lost)])  # type: ignore[arg-type]
    assert failed == {"blue box"}
    decided = Conditions(ScriptedLLM(lambda messages: "unknown"), Usage(), branches(sentences(goal))).ruled_out(failed)
    assert decided is not None and decided.instruction == "place it in the green box"


def test_the_box_a_win_carried_a_thing_into_decides_the_branch_in_the_next_round() -> None:
    from prag.agent.skills.conditions import Conditions, branches
    from prag.agent.skills.instructed import sentences
    from prag.agent.sources.past_episodes import ThisTask, won_things
    from prag.retrieval.episodes import Experience
    from prag.store.records import EpisodeRecord, StepRecord

    goal = ("Your task is to determine if paper clip is electrically conductive. First, focus on the paper clip. If it "
            "is electrically conductive, place it in the green box. If it is electrically nonconductive, place it in "
            "the blue box.")
    steps = [StepRecord(0, None, "o", "at: hallway", "hallway", [], 0.0),
             StepRecord(1, "move paper clip to green box", "o", "at: hallway", "hallway", [], 100.0)]
    win = EpisodeRecord("r", 0, "t", "test-conductivity", goal, True, steps, id=1)
    this = ThisTask.of(goal, steps[0], SCIWORLD)
    assert won_things(this, [Experience(None, win)]) == {"green box"}  # type: ignore[arg-type]
    decided = Conditions(ScriptedLLM(lambda messages: "unknown"), Usage(), branches(sentences(goal))).won_by({"green box"})
    assert decided is not None and decided.instruction == "place it in the green box"
    assert won_things(this, [Experience(None, replace(win, won=False))]) == set()  # type: ignore[arg-type]
