"""Written instructions read by what reward showed they meant (prag.agent.goals.written), followed
as sub-goals with guesses where no reward explained a line yet (prag.agent.goals.subgoals); on
hand-made episodes of a post room nobody adapted prag to, then on real TextWorld cooking games
with their goal schema withheld."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from support import fresh_cache, played_rounds
from prag.agent.asking.hints import Situation, SubGoal
from prag.agent.goals.subgoals import SubGoals
from prag.agent.goals.written import Written, learn, lines
from prag.cli.run_cmd import DEFAULT
from prag.envs.base import Observation
from prag.envs.domain import TEXTWORLD
from prag.llm.scripted import RandomChoiceLLM
from prag.store.records import EpisodeRecord, StepRecord

GOAL = "A parcel is waiting. Read the note on the desk, then post the parcel."
NOTE = "The note says:\n\nblue parcel\n\nweigh the blue parcel\nstamp the blue parcel\n"
DESK = [("note", "on", "desk"), ("blue parcel", "on", "shelf")]
HELD = [("note", "on", "desk"), ("blue parcel", "in", "inventory")]


def step(t: int, action: str | None, text: str, score: float, triples: list) -> StepRecord:
    return StepRecord(t, action, text, "", "post room", triples, score)


def posted(steps: list[StepRecord], won: bool = False) -> EpisodeRecord:
    return EpisodeRecord("r", 0, "post-1", "post", GOAL, won, steps)


def note_read_then_parcel_stamped() -> EpisodeRecord:
    return posted([
        step(0, None, GOAL, 0, DESK),
        step(1, "examine note", NOTE, 0, DESK),
        step(2, "take blue parcel from shelf", "You take the blue parcel from the shelf.", 1, HELD),
        # "weigh" and "stamp" are both four words naming the parcel: the world's answer echoes one.
        step(3, "press blue parcel with stamper", "You stamped the blue parcel.", 2, HELD),
    ])


def test_a_rewarded_step_teaches_what_the_line_read_before_it_means_and_which_action_read_it() -> None:
    written = learn([note_read_then_parcel_stamped()], TEXTWORLD)
    # Where the parcel was taken from is left out: another parcel is found where it is.
    assert written.meanings == {"{x}": Counter({"take {x}": 1}),
                                "stamp the {x}": Counter({"press {x} with stamper": 1})}
    assert written.readings() == ["examine note"]  # the goal names the note
    other_note = "red parcel\nweigh the red parcel\nstamp the red parcel"
    assert written.commands(other_note) == ["take red parcel", "weigh the red parcel", "press red parcel with stamper"]
    # The task's own sentences are no list: "a parcel is waiting" is not a parcel to take.
    assert written.commands(GOAL, listed=False) == [line for line in lines(GOAL)]


def test_an_answer_to_an_action_on_a_thing_says_nothing_of_what_to_do_with_it() -> None:
    episode = posted([
        step(0, None, GOAL, 0, DESK),
        step(1, "take blue parcel from shelf", "You take the blue parcel from the shelf.", 0, HELD),
        step(2, "press blue parcel with stamper", "You stamped the blue parcel.", 1, HELD),
    ])
    assert learn([episode], TEXTWORLD).meanings == {}


def test_looking_around_a_room_the_goal_only_says_to_be_around_is_no_reading() -> None:
    """A room's description lists every thing in it, so its lines "explain" any step on them. The
    goal saying "around the kitchen" does not make "look around" an action on a thing it names:
    a ScienceWorld round followed its lines ("a electric buzzer which is off") as instructions."""
    goal = "Your task is to measure the temperature of the water, which is located around the kitchen."
    room = [("water", "in", "kitchen"), ("thermometer", "in", "kitchen")]
    described = "This room is called the kitchen. In it, you see:\na thermometer\na water"
    looked = EpisodeRecord("r", 0, "water-1", "measure", goal, False, [
        step(0, None, goal, 0, room),
        step(1, "look around", described, 0, room),
        step(2, "move thermometer to inventory", "You move the thermometer to the inventory.", 5, room),
    ])
    assert learn([looked], TEXTWORLD).readings() == []
    examined = EpisodeRecord("r", 0, "water-1", "measure", goal.replace("water,", "water in the note,"), False, [
        step(0, None, goal, 0, room), step(1, "look at note", described, 0, room),
        step(2, "move thermometer to inventory", "You move the thermometer to the inventory.", 5, room)])
    assert learn([examined], TEXTWORLD).readings() == ["look at note"], "a thing the goal names, past its particle"


def test_a_step_that_ended_the_game_early_marks_its_meaning_of_the_line_as_not_it() -> None:
    lost = posted([
        step(0, None, GOAL, 0, DESK),
        step(1, "examine note", NOTE, 0, DESK),
        step(2, "take blue parcel from shelf", "You take the blue parcel from the shelf.", 1, HELD),
        step(3, "press blue parcel with stamper", "The parcel tears. *** You lost! ***", 1, HELD),
    ])
    written = learn([lost], TEXTWORLD, cap=50)
    # Nothing tells "weigh" from "stamp" here: a failure is marked against both.
    assert written.failed == Counter({("weigh the {x}", "press {x} with stamper"): 1,
                                      ("stamp the {x}", "press {x} with stamper"): 1})
    assert learn([lost], TEXTWORLD, cap=3).failed == Counter()  # the cap ended it, not the step
    stamped = note_read_then_parcel_stamped()
    assert learn([lost, stamped], TEXTWORLD, cap=50).command("stamp the red parcel") == "stamp the red parcel", \
        "as often failed as rewarded: not followed, left to a guess"
    assert learn([lost, stamped, stamped], TEXTWORLD, cap=50).command("stamp the red parcel") \
        == "press red parcel with stamper"


def test_a_guess_for_a_line_of_no_known_meaning() -> None:
    written = Written({"{x}": Counter({"take {x}": 3}), "stamp the {x}": Counter({"press {x} with stamper": 2})},
                      verbs=frozenset({"take", "press", "weigh", "drop"}))
    # Its own verb first.
    assert written.trial("weigh the red parcel", ["press red parcel with roller", "weigh red parcel on scale"]) \
        == ("weigh red parcel on scale", True)
    # One meaning to one line: not the stamper's press, which another line means; another press.
    assert written.trial("flatten the red parcel", ["press red parcel with stamper", "press red parcel with roller",
                                                     "drop red parcel"]) == ("press red parcel with roller", True)
    # A verb the game uses that cannot be taken yet: the tool a rewarded meaning used, taken first.
    assert written.trial("weigh the red parcel", ["take stamper from desk", "drop red parcel"]) \
        == ("take stamper from desk", False)
    assert written.trial("take red parcel", ["drop red parcel"]) is None  # a command, no line to guess for
    # A verb no reward followed is tried on what the task's own words name, not on a means read on the way.
    assert written.trial("fold the red parcel", ["drop red parcel"], goal=GOAL) is None
    assert written.trial("fold the red parcel", ["drop red parcel"], goal="Drop the red parcel.") \
        == ("drop red parcel", True)
    assert written.trial("weigh the red parcel", ["press red parcel with roller"], tried={"press red parcel with roller"}) \
        is None


def test_the_llm_asked_while_a_line_is_followed_is_told_the_line() -> None:
    now = Situation(goal=GOAL, history=[], locations=[], graphs=[], outcomes=Counter(), allowed=["look"], held=set(),
                    retrieved=[], utterances=[], seen={}, written="flatten the red parcel")
    assert SubGoal().notes(now) == ['Note: the text you read says to do next: "flatten the red parcel".']
    assert SubGoal().notes(replace(now, written=None)) == []


def seen(text: str, admissible: list[str], score: float) -> Observation:
    return Observation(GOAL, text, admissible, [], "", location="post room", score=score)


def test_a_guess_that_raised_no_score_is_followed_by_another_and_a_sentence_naming_nothing_is_given_up() -> None:
    written = Written({"stamp the {x}": Counter({"press {x} with stamper": 2})},
                      verbs=frozenset({"press", "drop", "take"}))
    # The world starts at a score of its own: a guess that leaves it there raised nothing.
    goals = SubGoals.start(["flatten the red parcel", "a parcel is waiting", "take red parcel"], TEXTWORLD,
                           seen(GOAL, [], 5), patience=15, trial=written.trial)
    here = ["drop red parcel", "press red parcel with roller", "press red parcel with iron"]
    assert goals.step(seen("", here, 5)) == "press red parcel with iron"
    goals.observe(1, "press red parcel with iron", seen("Nothing happens.", here, 5))
    assert goals.step(seen("", here, 5)) == "press red parcel with roller", "the same guess is not tried twice"
    goals.observe(2, "press red parcel with roller", seen("You flattened the red parcel.", here, 6))
    assert [(g.command, g.how) for g in goals.goals if g.met_at is not None] == [("flatten the red parcel", "tried")]
    for t in (3, 4, 5):
        assert goals.step(seen("", ["look"], 6)) is None
        goals.observe(t, "look", seen("A post room.", ["look"], 6))
    assert goals.goals[1].how == "given up" and goals.current is not None and goals.current.command == "take red parcel"


def test_a_line_whose_thing_is_at_hand_waits_for_search_to_find_where_it_can_be_done() -> None:
    written = Written({"stamp the {x}": Counter({"press {x} with stamper": 2})}, verbs=frozenset({"press", "drop"}))
    goals = SubGoals.start(["frank the red parcel"], TEXTWORLD, seen(GOAL, [], 0), patience=15, trial=written.trial)
    for t in range(1, 6):  # the franking machine is in another room: nothing here to guess
        assert goals.step(seen("", ["drop red parcel", "go north"], 0)) is None
        goals.observe(t, "go north", seen("A hall.", ["drop red parcel", "go north"], 0))
    assert goals.current is not None and goals.current.command == "frank the red parcel"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from fresh_cache(tmp_path_factory)


def test_cooking_games_with_their_goal_schema_withheld_are_won_from_the_recipes_reward_explained(
        tmp_path: Path, cache: Path) -> None:
    as_run = replace(DEFAULT.agent, llm_seconds=3.0)  # `prag run textworld-cooking-learned --llm random --rounds 3`
    played = played_rounds(tmp_path, RandomChoiceLLM(0), "textworld-cooking-learned", as_run, rounds=3)
    won = [sum(e.won for e in played if e.round == r) for r in range(3)]
    assert won[0] == 0 and won[2] >= 7, won
    last = [e for e in played if e.round == 2]
    for episode in last:
        # The cookbook read by what reward showed, then the recipe's lines as commands.
        subgoals = episode.extra.subgoals
        assert subgoals[0].command == "examine cookbook" and subgoals[0].how == "taken"
        assert any(g.command.startswith("take ") for g in subgoals[1:])
