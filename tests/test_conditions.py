"""The goal's conditional instructions ("If the unknown substance B temperature is above -50.0
degrees celsius, place it in the blue box."): read into branches, decided by a measurement read
from an observation or by what the LLM knows, and carried out by search, on the real ScienceWorld
simulator."""
from __future__ import annotations

import re
import shutil

import pytest
from support import play_until_won, played_rounds, sciworld_spec

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.protocol import Usage
from prag.agent.skills.carry import Carry
from prag.agent.skills.conditions import Conditions, branches, comparison, question
from prag.agent.skills.instructed import sentences
from prag.agent.skills.irrevocable import gambling
from prag.envs.base import Observation, Task
from prag.envs.sciworld.domain import SCIWORLD
from prag.envs.sciworld.env import SciworldEnv
from prag.llm.base import Message
from prag.llm.scripted import RandomChoiceLLM, ScriptedLLM
from prag.retrieval.index import Visibility
from prag.sources import StepSource

THERMOMETER = (
    "Your task is to measure the temperature of unknown substance B, which is located around the bathroom. "
    "First, focus on the thermometer. Next, focus on the unknown substance B. If the unknown substance B temperature "
    "is above -50.0 degrees celsius, place it in the blue box. If the unknown substance B temperature is below -50.0 "
    "degrees celsius, place it in the orange box. The boxes are located around the bedroom.")
CONDUCTIVE = (
    "Your task is to determine if sodium chloride is electrically conductive. First, focus on the sodium chloride. "
    "If it is electrically conductive, place it in the green box. If it is electrically nonconductive, place it in "
    "the blue box.")
MELTING = ("Your task is to measure the melting point of lead. First, focus on the thermometer. Next, focus on the "
           "lead. If the melting point of lead is above 50.0 degrees celsius, focus on the red box. If the melting "
           "point of lead is below 50.0 degrees celsius, focus on the green box.")
USE = "use thermometer on unknown substance"
# What the scene says the actions' "unknown substance" is.
SCENE = [("unknown substance", "isa", "unknown substance B"), ("thermometer", "isa", "thermometer")]


def conditions(goal: str, llm: ScriptedLLM | None = None) -> Conditions:
    return Conditions(llm or ScriptedLLM([]), Usage(), branches(sentences(goal)))


def test_a_conditional_sentence_is_a_branch_and_a_comparison_is_read_with_its_bound_and_unit() -> None:
    found = branches(sentences(THERMOMETER))
    assert [b.instruction for b in found] == ["place it in the blue box", "place it in the orange box"]
    compared = comparison(found[0].condition)
    assert compared is not None and (compared.subject, compared.above, compared.bound, compared.units) == (
        "the unknown substance b temperature", True, -50.0, "degrees celsius")
    assert comparison("it is electrically conductive") is None
    assert question("it is electrically conductive", "sodium chloride") == "Is sodium chloride electrically conductive?"


def test_a_reading_counts_only_for_the_thing_the_condition_names_and_the_quantity_it_compares() -> None:
    compared = comparison(branches(sentences(THERMOMETER))[0].condition)
    assert compared is not None
    reading = "the thermometer measures a temperature of 28 degrees celsius"
    assert compared.read({"unknown substance b", "unknown substance"}, reading) == 28.0
    assert compared.read({"orange juice"}, reading) is None  # another thing measured
    melting = comparison(branches(sentences(MELTING))[0].condition)
    assert melting is not None and melting.read({"lead"}, "the thermometer measures a temperature of 20 degrees celsius") is None


def test_the_latest_reading_decides_the_branch_and_one_at_the_bound_decides_none() -> None:
    decided = conditions(THERMOMETER)
    steps = [(USE, "the thermometer measures a temperature of -60 degrees celsius", SCENE),
             ("look around", "This room is called the bedroom.", SCENE),
             (USE, "the thermometer measures a temperature of 21 degrees celsius", SCENE)]
    branch = decided.measured(steps, SCIWORLD)
    assert branch is not None and branch.instruction == "place it in the blue box" and not decided.open
    at_bound = conditions(THERMOMETER)
    assert at_bound.measured([(USE, "the thermometer measures a temperature of -50 degrees celsius", SCENE)], SCIWORLD) is None
    assert at_bound.open


def test_the_llm_is_asked_which_action_measures_among_those_naming_the_thing_and_the_instrument() -> None:
    llm = ScriptedLLM(["connect thermometer to unknown substance", USE, USE], supports_choices=True)
    asker = conditions(THERMOMETER, llm)
    admissible = [USE, "focus on unknown substance", "eat unknown substance", "connect thermometer to unknown substance",
                  "connect unknown substance to thermometer", "open door to hallway"]
    instructed = ["thermometer", "unknown substance b"]
    assert asker.measuring(admissible, instructed, SCIWORLD, SCENE) == "connect thermometer to unknown substance"
    assert llm.calls[0]["choices"] == [USE, "connect thermometer to unknown substance",
                                       "connect unknown substance to thermometer", "none"]
    # It read nothing: asked again, without the verb tried either way round.
    assert asker.measuring(admissible, instructed, SCIWORLD, SCENE) == USE
    assert llm.calls[1]["choices"] == [USE, "none"]
    assert asker.measuring(admissible, instructed, SCIWORLD, SCENE) is None  # nothing left to offer
    assert len(llm.calls) == 2


def test_the_llm_saying_none_stops_the_questions_about_measuring() -> None:
    llm = ScriptedLLM(["none"], supports_choices=True)
    asker = conditions(THERMOMETER, llm)
    assert asker.measuring([USE], ["thermometer"], SCIWORLD, SCENE) is None
    assert asker.measuring([USE], ["thermometer"], SCIWORLD, SCENE) is None
    assert len(llm.calls) == 1


def test_a_known_quantity_is_asked_in_words_and_compared_and_unknown_or_no_number_decides_nothing() -> None:
    knows = conditions(MELTING, ScriptedLLM(["The melting point of lead is 327.5 degrees Celsius."]))
    branch = knows.known("lead")
    assert branch is not None and branch.instruction == "focus on the red box"
    assert knows.answers == {"What is the melting point of lead, in degrees celsius?":
                             "the melting point of lead is 327.5 degrees celsius"}
    assert conditions(MELTING, ScriptedLLM(["Unknown."])).known("lead") is None
    assert conditions(MELTING, ScriptedLLM(["It melts when heated."])).known("lead") is None


def test_a_yes_or_no_condition_takes_the_other_of_two_branches_on_no() -> None:
    llm = ScriptedLLM(["no"], supports_choices=True)
    branch = conditions(CONDUCTIVE, llm).known("sodium chloride")
    assert branch is not None and branch.instruction == "place it in the blue box"
    assert llm.calls[0]["choices"] == ["yes", "no", "unknown"]
    assert llm.calls[0]["messages"][-1]["content"].startswith("Is sodium chloride electrically conductive?")


def test_a_decided_carry_in_other_words_is_done_by_the_family_s_put_on_the_thing_focused_last() -> None:
    carry = Carry(THERMOMETER, SCIWORLD)
    assert carry.instruction is None  # conditional: no instruction until decided
    assert carry.instruct("place it in the blue box")
    triples = [("thermometer", "is", "focused"), ("unknown substance", "is", "focused"),
               ("thermometer", "in", "inventory"), ("unknown substance", "in", "inventory"), ("blue box", "in", "bedroom"),
               *SCENE]
    seen = Observation(goal=THERMOMETER, text="", admissible=["move unknown substance to blue box",
                       "move thermometer to blue box"], scene_triples=triples, scene_text="")
    taken = ["focus on thermometer", "focus on unknown substance"]
    assert carry.step(seen, taken) == "move unknown substance to blue box"


def measuring_stand_in(knows: str = "") -> ScriptedLLM:
    """Answers the measuring question with the offered action that uses something, a quantity
    question with `knows`, anything else with "look around"."""
    def answer(messages: list[Message]) -> str:
        asked = messages[-1]["content"]
        if "Which action measures" in asked:
            offered = asked.removeprefix("Actions: ").split(".\n")[0].split("; ")
            return next(action for action in offered if action.startswith("use "))
        return knows if asked.startswith("What is") else "look around"
    return ScriptedLLM(answer, supports_choices=True)


def searching(llm: ScriptedLLM, gamble_window: float = 0.1) -> PragAgent:
    config = AgentConfig(ask="hard-coded", sources=("search", "llm"), gamble_window=gamble_window)
    return PragAgent(llm, None, Visibility(), config, domain=SCIWORLD)


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_search_measures_the_substance_reads_the_thermometer_and_carries_it_to_the_box_the_reading_says() -> None:
    """use-thermometer, train variation 0: the thermometer and the substance are focused on and
    taken along, the stand-in names the action that measures, the reading (25 degrees, below the
    bound of 100) takes the second branch, and search carries the substance to the green box seen
    in the bathroom: won, every step by find-X or search."""
    llm = measuring_stand_in()
    agent = searching(llm)
    assert play_until_won(SciworldEnv(Task("use-thermometer-0", "use-thermometer", 0), "use-thermometer", 0, ""), agent, 60)
    actions = [d.action for d in agent.state.decisions]
    assert "use thermometer on unknown substance" in actions
    assert actions[-1] == "move unknown substance to green box"
    assert {d.source for d in agent.state.decisions} == {StepSource.FIND, StepSource.SUBGOAL}
    assert sum("Which action measures" in call["messages"][-1]["content"] for call in llm.calls) == 1


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_what_the_llm_knows_decides_a_branch_only_where_a_gamble_may_be_taken() -> None:
    """measure-melting-point-known-substance, train variation 1 (lead; bound 50 degrees): the
    melting point is no reading of a thermometer. With the default gamble window the episode has
    earned a score a wrong branch would lose, so the LLM is not asked; with a window of the whole
    budget (a model that knows better) it is, and its answer (327 degrees) wins the task."""
    def play(window: float, limit: int) -> tuple[bool, ScriptedLLM]:
        llm = measuring_stand_in(knows="The melting point of lead is 327 degrees Celsius.")
        task = "measure-melting-point-known-substance"
        return play_until_won(SciworldEnv(Task(f"{task}-1", task, 1), task, 1, ""), searching(llm, window), limit), llm
    won, llm = play(1.0, 40)
    assert won
    cautious_won, cautious = play(0.1, 30)
    assert not cautious_won
    assert not any(call["messages"][-1]["content"].startswith("What is") for call in cautious.calls)


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_thing_seen_before_its_turn_is_sought_where_it_was_seen_first() -> None:
    """use-thermometer, dev variation 358: the unknown substance B is seen in the bedroom before the
    thermometer is found in the kitchen; search then walks back to the bedroom for it rather than
    searching the rooms not yet seen (it went to the workshop and foundry before, and lost)."""
    agent = searching(measuring_stand_in())
    assert play_until_won(SciworldEnv(Task("use-thermometer-358", "use-thermometer", 358), "use-thermometer", 358, ""),
                          agent, 60)
    rooms = [d.action.removeprefix("go to ") for d in agent.state.decisions if d.action.startswith("go to ")]
    after_thermometer = rooms[[d.action for d in agent.state.decisions if d.action.startswith("go to ")].index(
        "go to kitchen") + 1:]
    assert "workshop" not in after_thermometer[:after_thermometer.index("bedroom")]


MENDEL = ("Your task is to determine whether tall plant height is a dominant or recessive trait in the pea plant. "
          "If the trait is dominant, focus on the red box. If the trait is recessive, focus on the green box.")


def test_a_branch_whose_focus_failed_this_task_before_is_ruled_out_and_the_other_taken() -> None:
    decided = conditions(MENDEL)
    assert decided.ruled_out({"red box"}) is not None
    assert decided.taken is not None and decided.taken.instruction == "focus on the green box"
    for failed in (set(), {"blue box"}):
        undecided = conditions(MENDEL)
        assert undecided.ruled_out(failed) is None and undecided.taken is None
        assert len(undecided.left(failed)) == 2


def test_a_branch_is_drawn_among_those_left_alike_for_the_same_goal() -> None:
    both = conditions(MENDEL).left(set())
    draws = {conditions(MENDEL).drawn(both, MENDEL).instruction for _ in range(3)}
    assert len(draws) == 1
    green = conditions(MENDEL).left({"red box"})
    assert conditions(MENDEL).drawn(green, MENDEL).instruction == "focus on the green box"


@pytest.mark.parametrize(("t", "score", "chance", "gambles"), [
    (95, 0, 0.0, True),    # the last tenth, nothing to forfeit
    (95, 11, 0.0, False),  # a score earned, no chance known
    (95, 11, 0.5, True),   # one of two branches: 50 to win in expectation, 11 to forfeit
    (95, 60, 0.5, False),
    (50, 0, 0.5, False),   # not yet the last tenth
])
def test_a_gamble_is_taken_in_the_last_tenth_where_its_chance_outweighs_the_score_held(
        t: int, score: float, chance: float, gambles: bool) -> None:
    observation = Observation("goal", "text", [], [], "scene", score=score)
    assert gambling(observation, t, 100, 0.1, chance=chance) is gambles


@pytest.mark.parametrize(("score", "chance", "later", "gambles"), [
    (60, 0.5, 1, True),    # over two rounds: 50 + 100 in expectation against 60 + 60 kept
    (78, 0.5, 1, False),   # 150 against 156
    (78, 0.5, 2, True),    # over three: 250 against 234
    (60, 0.5, 0, False),   # no later round learns from a wrong answer: 50 against 60
    (60, 0.0, 2, False),   # no chance known
])
def test_where_later_rounds_play_the_task_again_a_branch_is_answered_at_once_if_it_pays_over_them(
        score: float, chance: float, later: int, gambles: bool) -> None:
    observation = Observation("goal", "text", [], [], "scene", score=score)
    assert gambling(observation, 20, 100, 0.1, chance=chance, later=later) is gambles


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_learning_round_answers_a_branch_it_cannot_measure_and_the_next_round_wins(tmp_path) -> None:
    """test-conductivity, a dev variation: nothing measures whether the paper clip conducts, and
    60 points are earned once it is focused on. Waiting for the last tenth of the steps, every
    round kept 60 (the draws had carried the clip off by then). With rounds to come, round 0
    carries it to a box at once; a wrong box is ruled out for round 1, which carries it to the
    other and wins. The last round, with none to come, gambles nothing: it takes the box round
    1's win took (its replay, cut of detours, did not reach that step)."""
    spec = sciworld_spec(tmp_path, "conducts", "test-conductivity", "dev", 0, 40)
    agent = AgentConfig(ask="hard-coded", sources=("experience", "search", "progress", "llm"))
    first, second, last = played_rounds(tmp_path, RandomChoiceLLM(0), spec, agent, rounds=3)
    assert re.fullmatch(r"move paper clip to (green|blue) box", first.steps[-1].action or "")
    assert second.won and second.score == 100
    assert last.won and last.steps[-1].action == second.steps[-1].action


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_branch_drawn_wrong_is_ruled_out_by_the_next_round_which_wins(tmp_path) -> None:
    """mendelian-genetics-known-plant, the train variation seed 2 draws ("round seed shape":
    dominant, the blue box). The stand-in knows nothing ("unknown"), so where a gamble may be
    taken (here the whole budget) a box is drawn: the orange one, which fails the task. The next
    round replays the way to the greenhouse (its progress), rules the orange box out and focuses
    on the blue one: won, with no LLM call deciding it."""
    spec = sciworld_spec(tmp_path, "mendel", "mendelian-genetics-known-plant", "train", 2, 40)
    llm = ScriptedLLM(lambda messages: "unknown" if "unknown" in messages[-1]["content"] else "look around",
                      supports_choices=True)
    agent = AgentConfig(ask="hard-coded", sources=("experience", "search", "llm"), gamble_window=1.0)
    first, second = played_rounds(tmp_path, llm, spec, agent, rounds=2)
    assert not first.won and first.steps[-1].action == "focus on orange box" and first.score == 0
    assert second.won and second.steps[-1].action == "focus on blue box"
    assert second.extra.decisions[-1].source == StepSource.SUBGOAL
    # The knowledge was asked first, in round 0: "unknown" left the draw.
    assert llm.calls[0]["messages"][-1]["content"].startswith("Is the trait dominant?")
