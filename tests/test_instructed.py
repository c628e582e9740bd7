"""The irrevocable steps a goal instructs ("First, focus on the thermometer. Next, focus on the
chocolate."): read in order, never from a conditional sentence, taken by search with no LLM call
once the thing is in view, on the real ScienceWorld simulator."""
from __future__ import annotations

import shutil

import pytest
from support import play_until_won

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.protocol import Decision
from prag.agent.skills.carry import Carry, CarryInstruction, carry_instruction
from prag.agent.skills.instructed import Instructed, instructed, names_the_target
from prag.envs.base import Observation, Task
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
        "gallium"]
    assert instructed("put a clean mug in the coffee machine.", ALFWORLD) == []  # a family with none


def test_an_instruction_in_a_word_for_what_the_task_is_about_names_that_thing() -> None:
    """"First, focus on the substance" after "boil gallium" is the gallium; a thing the task's first
    clause names ("sodium chloride") or an instruction naming what the task is about ("the water"
    in "measure the melting point of water") keeps its own words."""
    boil = "Your task is to boil orange juice. For compounds without a boiling point, combusting the substance is also acceptable. First, focus on the substance. Then, take actions that will cause it to change its state of matter."
    thing = Instructed(boil, SCIWORLD)
    assert thing.next == "juice"  # what find-X seeks: the clause's last word
    assert thing.left[0].called({"orange juice"}) and not thing.left[0].called({"substance", "juice box"})
    conductive = ("Your task is to determine if sodium chloride is electrically conductive. First, focus on the sodium "
                  "chloride. If it is electrically conductive, place it in the green box.")
    assert [t.about for t in Instructed(conductive, SCIWORLD).left] == [None]
    assert [t.about for t in Instructed(MELTING, SCIWORLD).left] == [None, None]
    non_living = "Your task is to find a(n) non-living thing. First, focus on the thing."
    assert Instructed(non_living, SCIWORLD).left[0].about is None  # "thing" is a word of the task's clause
    assert names_the_target(non_living, SCIWORLD, {"non-living thing"})
    assert not names_the_target(non_living, SCIWORLD, {"living thing"})  # whole words: not the end of "non-living"
    two = "Your task is to measure the temperature of water. First, focus on the thermometer. Next, focus on the substance."
    assert [t.words for t in Instructed(two, SCIWORLD).left] == ["thermometer", "substance"]  # which one is meant is open
    sugar_water = "Your task is to use chemistry to create the substance 'sugar water'. When you are done, focus on the sugar water."
    assert [t.about for t in Instructed(sugar_water, SCIWORLD).left] == [None]


def test_a_name_in_quotes_is_whole_and_what_it_ends_in_is_not_the_target() -> None:
    """'sugar water' ends in "water", but the toilet's water is not what chemistry-mix makes: a
    focus on it failed the task (run c-local-q, round 2, a random draw taken for the target's)."""
    sugar_water = "Your task is to use chemistry to create the substance 'sugar water'. When you are done, focus on the sugar water."
    assert not names_the_target(sugar_water, SCIWORLD, {"substance in toilet", "water"})
    assert names_the_target(sugar_water, SCIWORLD, {"sugar water"})
    assert names_the_target(sugar_water, SCIWORLD, {"cup containing sugar water"})
    assert names_the_target("Your task is to boil water. First, focus on the substance.", SCIWORLD, {"water"})


def test_an_indefinite_phrase_ending_the_task_names_a_kind_any_thing_of_which_is_meant() -> None:
    """"find a(n) plant. First, focus on the thing": a pea plant is a plant, as English names a kind
    of a kind; so is what the actions call "living thing in flower pot 6" a living thing. A phrase
    with a preposition ("a peach plant from seed") names no kind."""
    plant = Instructed("Your task is to find a(n) plant. First, focus on the thing. Then, move it to the red box in the "
                       "kitchen.", SCIWORLD).left[0]
    assert plant.kind and plant.words == "plant"
    assert plant.called({"living thing in flower pot 7", "pea plant"}) and plant.called({"plant"})
    assert not plant.called({"planter"}) and not plant.called({"plant pot"})
    living = Instructed("Your task is to find a(n) living thing. First, focus on the thing.", SCIWORLD).left[0]
    assert living.kind and living.called({"living thing"}) and not living.called({"thing"})
    non_living = "Your task is to find a(n) non-living thing. First, focus on the thing."
    assert not Instructed(non_living, SCIWORLD).left[0].called({"living thing"})
    assert names_the_target("Your task is to find a(n) plant. First, focus on the thing.", SCIWORLD, {"pea plant"})
    grow = ("Your task is to grow a peach plant from seed. Seeds can be found in the bedroom. First, focus on a seed. "
            "Then, make changes to the environment that grow the plant until it reaches the reproducing stage.")
    # The instruction's own indefinite article: any seed will do (a peach seed in the seed jar).
    seed = Instructed(grow, SCIWORLD).left[0]
    assert (seed.words, seed.kind) == ("seed", True) and seed.called({"peach seed"})


def test_the_stages_of_a_thing_are_that_thing_as_it_is_at_each_and_no_description_to_choose_for() -> None:
    """"focus on the 4 life stages of the dove, starting from earliest to latest": the dove, by
    whatever its stage calls it ("egg dove", "hatchling dove"); the words after the comma say how.
    Nothing is asked to be chosen for it where nothing is called so (the goal's "pear plant" is no
    thing's name: a model asked to choose for it focused the closet), and once one stage was acted
    on, the instruction is not sought any more: the stages come one at a time."""
    dove = "Your task is to focus on the 4 life stages of the dove, starting from earliest to latest."
    (stages,) = Instructed(dove, SCIWORLD).left
    assert (stages.words, stages.kind, stages.stages, stages.description) == ("dove", True, True, None)
    assert names_the_target(dove, SCIWORLD, {"egg dove"}) and names_the_target(dove, SCIWORLD, {"hatchling dove"})
    assert not names_the_target(dove, SCIWORLD, {"egg moth"})
    plant = Instructed("Your task is to focus on the life stages of the pear plant, starting from earliest to latest. "
                       "The plants are located outside.", SCIWORLD)
    assert plant.next == "pear plant" and plant.described is None
    here = Observation(dove, "", ["focus on seed plant"], [], "")
    assert plant.step(here, []) is None and plant.next == "pear plant"
    assert plant.step(here, ["focus on seed plant"]) is None and plant.next is None
    # A thing's one property is no stage of it: "the melting point of tin" is no "tin".
    assert instructed("Your task is to measure the melting point of tin. First, focus on the melting point of tin.",
                      SCIWORLD) == ["melting point of tin"]


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_search_seeks_the_substance_the_task_is_about_and_focuses_on_it_with_no_llm_call() -> None:
    """boil: "First, focus on the substance": the water is "substance in ..." isa water; search
    walks to it and takes the focus (the simulator's score rises: `play`)."""
    decisions = play("boil", 40)
    focus = decisions[-1]
    assert focus.action.startswith("focus on") and focus.source == StepSource.SUBGOAL
    assert {d.source for d in decisions} <= {StepSource.FIND, StepSource.SUBGOAL}


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_find_x_opens_doors_to_the_instructed_thing_and_search_focuses_on_it_with_no_llm_call() -> None:
    decisions = play("use-thermometer", 30)
    focus = decisions[-1]
    assert focus.action.startswith("focus on thermometer") and focus.source == StepSource.SUBGOAL
    assert {d.source for d in decisions} == {StepSource.FIND, StepSource.SUBGOAL}  # no LLM call


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_first_focus_on_a_seed_is_taken_on_any_seed_with_no_llm_call() -> None:
    """grow-plant: "First, focus on a seed.": find-X walks to the seed jar, and search focuses on a
    peach seed in it (the simulator's score rises: `play`)."""
    decisions = play("grow-plant", 60)
    assert decisions[-1].action.startswith("focus on") and decisions[-1].source == StepSource.SUBGOAL
    assert {d.source for d in decisions} == {StepSource.FIND, StepSource.SUBGOAL}


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_search_seeks_a_thing_of_the_kind_the_task_names_and_focuses_on_it_with_no_llm_call() -> None:
    """find-plant: find-X walks the house until a thing whose name ends in "plant" is in view, and
    search focuses on it (the simulator's score rises: `play`)."""
    decisions = play("find-plant", 60)
    focus = decisions[-1]
    assert focus.action.startswith("focus on") and focus.source == StepSource.SUBGOAL
    assert {d.source for d in decisions} == {StepSource.FIND, StepSource.SUBGOAL}


def test_an_instruction_to_move_what_was_focused_on_is_read_unless_conditional() -> None:
    goal = "Your task is to find a(n) animal. First, focus on the thing. Then, move it to the purple box in the workshop."
    assert carry_instruction(goal, SCIWORLD) == CarryInstruction("move", "to", "purple box", "workshop")
    assert carry_instruction("Your task is to find a(n) plant. First, focus on the thing. Then, move it to the blue "
                             "box.", SCIWORLD) == CarryInstruction("move", "to", "blue box", None)
    conductive = ("Your task is to determine if sodium chloride is electrically conductive. First, focus on the sodium "
                  "chloride. If it is electrically conductive, place it in the green box.")
    assert carry_instruction(conductive, SCIWORLD) is None  # what to do depends on what is found
    assert carry_instruction("put it in the drawer.", ALFWORLD) is None  # the family marks no irrevocable step


def test_the_thing_marked_is_carried_by_its_present_name_and_a_refused_pick_up_is_not_asked_again() -> None:
    goal = "Your task is to find a(n) plant. First, focus on the thing. Then, move it to the blue box in the kitchen."
    carry = Carry(goal, SCIWORLD)
    here = [("living thing in flower pot 6", "in", "flower pot 6"), ("living thing in flower pot 6", "is", "focused")]
    seen = Observation(goal, "", ["pick up living thing in flower pot 6", "look around"], here, "")
    assert carry.step(seen, []) == "pick up living thing in flower pot 6"
    assert carry.step(seen, ["pick up living thing in flower pot 6"]) is None  # refused once: left to the others
    held = [("living thing in inventory", "in", "inventory"), ("living thing in inventory", "is", "focused"),
            ("blue box", "in", "kitchen")]
    seen = Observation(goal, "", ["move living thing in inventory to blue box", "move living thing in inventory to sink"],
                       held, "")
    assert carry.step(seen, []) == "move living thing in inventory to blue box"
    assert carry.step(seen, ["move living thing in inventory to blue box"]) is None  # done
    away = Observation(goal, "", ["go to hallway"], held[:2], "")
    assert carry.seeking(away, []) == CarryInstruction("move", "to", "blue box", "kitchen")


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_search_focuses_on_a_thing_of_the_kind_then_carries_it_to_the_box_and_wins_with_no_llm_call() -> None:
    """find-plant, variation 0: focus on a plant, pick it up (the scene still marks it focused under
    its new name), go to the room the goal names and move it to the box: the game is won by search
    alone (the stand-in LLM answers "look around" and is never asked)."""
    llm = ScriptedLLM(lambda messages: "look around", supports_choices=True)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm")), domain=SCIWORLD)
    assert play_until_won(SciworldEnv(Task("find-plant-0", "find-plant", 0), "find-plant", 0, ""), agent, 80)
    actions = [d.action for d in agent.state.decisions]
    focus = next(i for i, action in enumerate(actions) if action.startswith("focus on"))
    assert actions[focus + 1].startswith("pick up") and actions[-1].startswith("move ")
    assert {d.source for d in agent.state.decisions} == {StepSource.FIND, StepSource.SUBGOAL}


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_the_grown_orange_nowhere_is_read_as_an_orange_and_the_game_is_won_by_search_alone() -> None:
    """grow-fruit, a test variation: "focus on the grown orange". Nothing anywhere is called so;
    once every place was searched and nothing is left closed, the instruction is read by its name,
    "orange", and the focus on one wins the game (the simulator's score accepts it). A word before
    a name it is not: "the grown orange" is no qualified description and no kind."""
    instructed = Instructed("Your task is to grow a orange. To complete the task, focus on the grown orange.", SCIWORLD)
    assert instructed.next == "grown orange" and not instructed.by_its_name({"apple"})
    assert instructed.by_its_name({"orange", "apple"}) and instructed.next == "orange"
    made = Instructed("Your task is to use chemistry to create the substance 'sugar water'. When you are done, "
                      "focus on the sugar water.", SCIWORLD)
    assert made.next == "sugar water" and not made.by_its_name({"water", "sugar"})  # what the task makes
    llm = ScriptedLLM(lambda messages: "look around", supports_choices=True)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm")), domain=SCIWORLD)
    assert play_until_won(SciworldEnv(Task("grow-fruit-102", "grow-fruit", 102), "grow-fruit", 102, ""), agent, 60)
    assert agent.state.decisions[-1].action == "focus on orange"


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


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_thing_s_stages_are_focused_as_they_come_watched_between_with_no_correction() -> None:
    """identify-life-stages-1, variation 0 ("the 4 life stages of the turtle"), no correction and
    no store: search finds the turtle's egg, focuses it, watches it ("look at egg turtle") until it
    is called otherwise, and focuses each stage it grows to: won, with a stand-in LLM that only
    looks around."""
    llm = ScriptedLLM(lambda messages: "look around", supports_choices=True)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm")), domain=SCIWORLD)
    env = SciworldEnv(Task("identify-life-stages-1-0", "identify-life-stages-1", 0), "identify-life-stages-1", 0, "")
    assert play_until_won(env, agent, 100)
    focuses = [d for d in agent.state.decisions if d.action.startswith("focus on")]
    assert [d.action.split()[-1] for d in focuses] == ["turtle"] * 4 and len({d.action for d in focuses}) == 4
    assert all(d.source == StepSource.SUBGOAL for d in focuses)
    assert any(d.action == "look at egg turtle" and d.source == StepSource.SUBGOAL for d in agent.state.decisions)


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_thing_whose_stages_are_watched_is_walked_back_to_once_out_of_view() -> None:
    """The same turtle; once its egg is focused, the agent is walked to the greenhouse (as the
    LLM's steps went to the kitchen): find-X takes the way back outside to the turtle (its own
    name), and the task is won."""
    llm = ScriptedLLM(lambda messages: "look around", supports_choices=True)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm")), domain=SCIWORLD)
    env = SciworldEnv(Task("identify-life-stages-1-0", "identify-life-stages-1", 0), "identify-life-stages-1", 0, "")
    try:
        seen = env.reset()
        agent.reset(seen)
        walked_away = False
        for _ in range(100):
            action = agent.act(seen).action
            if walked_away is False and agent.state.steps[-1].action == "focus on egg turtle":
                action, walked_away = "go to greenhouse", True
            seen = env.step(action)
            agent.observe(action, seen)
            if seen.won:
                break
    finally:
        env.close()
    assert walked_away and seen.won
    back = [d for d in agent.state.decisions if d.action == "go to outside"]
    assert back and back[-1].source == StepSource.FIND
