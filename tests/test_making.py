"""A thing the goal names that is nowhere, made by combining things of its kind (prag.agent.skills.making):
recipes learned from what a combination made, a hyphenated name's parts made first, pairs tried
otherwise; on the real ScienceWorld simulator."""
from __future__ import annotations

import shutil

import pytest
from support import play_until_won, played_rounds, sciworld_spec

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.skills.instructed import targets
from prag.agent.skills.making import Making, made, named_parts, recipes
from prag.agent.world.state import Recipe
from prag.envs.base import Task
from prag.envs.sciworld.domain import SCIWORLD
from prag.envs.sciworld.env import SciworldEnv
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.sources import StepSource

RED, BLUE, YELLOW = "cup containing red paint", "cup containing blue paint", "cup containing yellow paint"
STUDIO = [(RED, "in", "art studio"), (BLUE, "in", "art studio"), (YELLOW, "in", "art studio"),
          ("red paint in cup", "in", RED), ("paint in cup", "in", BLUE), ("paint in cup", "isa", "blue paint"),
          ("yellow paint in cup", "in", YELLOW)]
POURS = [f"pour {a} into {b}" for a in (RED, BLUE, YELLOW) for b in (RED, BLUE, YELLOW) if a != b]
MIXED = [("cup containing blue paint and red paint", "in", "art studio"), (YELLOW, "in", "art studio"),
         ("blue paint in cup", "in", "cup containing blue paint and red paint"),
         ("red paint in cup", "in", "cup containing blue paint and red paint"), ("yellow paint in cup", "in", YELLOW)]
VIOLET = [("cup containing violet paint", "in", "art studio"), (YELLOW, "in", "art studio"),
          ("paint in cup containing violet paint", "in", "cup containing violet paint"),
          ("paint in cup containing violet paint", "isa", "violet paint"), ("yellow paint in cup", "in", YELLOW)]


def test_a_combination_is_a_recipe_of_what_was_gone_and_what_was_new_by_own_names() -> None:
    scenes = [(None, MIXED), ("mix cup containing blue paint and red paint", VIOLET)]
    assert recipes(scenes, SCIWORLD) == [Recipe(frozenset({"blue paint", "red paint"}), frozenset({"violet paint"}))]
    assert made(scenes, SCIWORLD) == ["violet paint"]
    assert recipes([(None, MIXED), ("look around", VIOLET)], SCIWORLD) == []  # no combining action


def test_a_vessel_holding_two_things_of_the_kind_is_combined_and_otherwise_a_pair_is_poured_together() -> None:
    making = Making(SCIWORLD)
    assert making.step("violet paint", MIXED, ["mix cup containing blue paint and red paint"], []) == \
        "mix cup containing blue paint and red paint"
    # No recipe known: the first pair by name (blue, red); the other's vessel poured into the first's.
    assert Making(SCIWORLD).step("orange paint", STUDIO, POURS, []) == f"pour {RED} into {BLUE}"


def test_a_known_recipe_is_followed_and_a_pair_known_to_make_something_else_is_not_tried() -> None:
    violet = Recipe(frozenset({"blue paint", "red paint"}), frozenset({"violet paint"}))
    assert Making(SCIWORLD).step("violet paint", STUDIO, POURS, [violet]) == f"pour {RED} into {BLUE}"
    assert Making(SCIWORLD).step("orange paint", STUDIO, POURS, [violet]) == f"pour {YELLOW} into {BLUE}"
    green = Recipe(frozenset({"blue paint", "yellow paint"}), frozenset({"green paint"}))
    assert Making(SCIWORLD).step("orange paint", STUDIO, POURS, [violet, green]) == f"pour {YELLOW} into {RED}"
    # What this episode made by a wrong pair is no ingredient to try.
    assert Making(SCIWORLD).step("orange paint", VIOLET, [f"pour {YELLOW} into cup containing violet paint"], [],
                                 made_here=["violet paint"]) is None


def test_things_standing_in_the_room_are_no_ingredients() -> None:
    boxes = [("red box", "in", "workshop"), ("blue box", "in", "workshop")]
    assert Making(SCIWORLD).step("violet box", boxes, ["move red box to blue box", "move blue box to red box"], []) is None


def test_a_hyphenated_name_s_parts_are_made_first_and_then_put_together() -> None:
    assert named_parts("blue-violet paint") == ["blue paint", "violet paint"] and named_parts("violet paint") == ["violet paint"]
    violet = Recipe(frozenset({"blue paint", "red paint"}), frozenset({"violet paint"}))
    assert Making(SCIWORLD).step("blue-violet paint", STUDIO, POURS, [violet]) == f"pour {RED} into {BLUE}"


def test_the_paint_you_created_is_a_made_thing_and_a_name_the_clause_lengthens_by_a_hyphen_is_the_thing_made() -> None:
    goal = ("Your task is to use chemistry to create blue-violet paint. When you are part-way done, focus on the "
            "intermediate (secondary color) paint you created.  When you are completely done, focus on the violet paint.")
    intermediate, final = targets(goal, SCIWORLD)
    assert (intermediate.words, intermediate.made, intermediate.description) == ("paint", True, None)
    assert final.words == "blue-violet paint"


def playing() -> PragAgent:
    llm = ScriptedLLM(lambda messages: "look around", supports_choices=True)
    return PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm"), llm_budget=0),
                     domain=SCIWORLD)


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_the_intermediate_paint_is_made_by_trying_pairs_and_focused_on() -> None:
    """chemistry-mix-paint-tertiary-color, dev variation 20 (yellow-orange paint; two sets of
    primaries, on the desk and in the art studio): with nothing known, blue and red make violet,
    blue and yellow green, red and yellow the orange paint the yellow-orange is made of, which is
    focused on as the intermediate paint: 77 points, every step by find-X (to the art studio) or
    search."""
    env = SciworldEnv(Task("t", "chemistry-mix-paint-tertiary-color", 20), "chemistry-mix-paint-tertiary-color", 20, "")
    agent = playing()
    play_until_won(env, agent, 12)
    actions = [d.action for d in agent.state.decisions]
    focused = [step for step in agent.state.steps if step.action == "focus on orange paint"]
    assert focused and focused[0].observation.startswith("You focus on the orange paint")
    assert {d.source for d in agent.state.decisions[: actions.index("focus on orange paint") + 1]} == {
        StepSource.FIND, StepSource.SUBGOAL}


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_wrong_pair_s_recipe_is_known_the_next_round(tmp_path) -> None:
    """chemistry-mix-paint-secondary-color, dev variation 18 (orange paint, one cup of each
    primary): round 0 tries blue and red and makes violet, which loses the task's paints; round
    1, with that recipe stored, does not try the pair again."""
    spec = sciworld_spec(tmp_path, "paint", "chemistry-mix-paint-secondary-color", "dev", 0, 45)
    llm = ScriptedLLM(lambda messages: "look around", supports_choices=True)
    first, second = played_rounds(tmp_path, llm, spec, AgentConfig(ask="hard-coded", sources=("experience", "search", "llm"),
                                                                   llm_budget=0), rounds=2)

    def mixes(episode):  # type: ignore[no-untyped-def]
        return [step.observation for step in episode.steps if step.action and step.action.startswith("mix ")]
    assert first.task_id.endswith("-18") and mixes(first)[0] == "Red and blue paint mix to produce violet paint."
    assert mixes(second) and "violet" not in mixes(second)[0]
