"""The find-X skill and what the agent observed: search order (the semantic memory's ranking,
unranked places after), opening closed places, stopping once the thing is seen; on hand-made
ALFWorld observations, on generated games played on the real ALFWorld engine, and on the grid.
A thing hidden in a closed place is found by exploring, never read from the game's state."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prag.agent.skills.explore import find_plan, missing, search_order
from prag.agent.world.observed import Observed
from prag.agent.world.places import Places, Ranking, no_ranking
from prag.envs.alfworld.env import AlfworldEnv, AlfworldTaskSource, find_games
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.base import Environment, Observation, Task
from prag.envs.domain import ALFWORLD, GRID, Domain
from prag.envs.grid.env import GridEnv

PLACES = ["cabinet 1", "countertop 1", "drawer 1", "fridge 1", "garbagecan 1"]
GOAL = "put some apple on garbagecan."


def seen(location: str | None, triples: list[tuple[str, str, str]] = (), here: str | None = None) -> Observation:
    """An ALFWorld observation at `location`: go-to actions to every other place, and `open`
    of the place when it is closed."""
    admissible = [f"go to {p}" for p in PLACES if p != location]
    if (location, "is", "closed") in triples:
        admissible.append(f"open {location}")
    return Observation(GOAL, here or f"You arrive at {location}.", admissible, list(triples), "", location=location)


def ranking_of(table: dict[str, list[tuple[str, int]]]) -> Ranking:
    return lambda kind: table.get(kind, [])


def test_places_are_searched_in_the_order_the_semantic_memory_ranks_their_kinds_then_as_listed():
    observed = Observed.start(seen("middle of room"), ALFWORLD)
    assert missing(observed) == ["apple"]
    ranking = ranking_of({"apple": [("fridge", 5), ("countertop", 2)]})
    assert search_order(["apple"], observed, Places(ALFWORLD, memory=ranking)) == [
        "fridge 1", "countertop 1", "garbagecan 1", "cabinet 1", "drawer 1",
    ]
    # A newspaper may be in a drawer too: behind a door, after the places seen on arrival.
    assert search_order(["newspaper"], observed, Places(ALFWORLD)) == [
        "countertop 1", "garbagecan 1", "cabinet 1", "drawer 1", "fridge 1",
    ]
    # Without a ranking: where ALFWorld may put an apple, first what is seen on arrival, then
    # what must be opened (the fridge); never an apple in a cabinet or a drawer: those last.
    assert search_order(["apple"], observed, Places(ALFWORLD)) == [
        "countertop 1", "garbagecan 1", "fridge 1", "cabinet 1", "drawer 1",
    ]
    # What was seen outranks the rules: the memory's kinds first, whatever the rules say.
    odd = ranking_of({"apple": [("drawer", 1)]})
    assert search_order(["apple"], observed, Places(ALFWORLD, memory=odd))[:2] == ["drawer 1", "countertop 1"]
    # A kind the rules do not name is searched as listed.
    assert search_order(["unicorn"], observed, Places(ALFWORLD)) == PLACES


def test_a_closed_place_is_opened_and_the_plan_ends_once_the_thing_is_seen():
    ranking = ranking_of({"apple": [("fridge", 5), ("countertop", 2)]})
    observed = Observed.start(seen("middle of room"), ALFWORLD)
    places = Places(ALFWORLD, memory=ranking)
    plan = find_plan(missing(observed), observed, places)
    assert plan is not None and plan.source == "find" and plan.steps == ("go to fridge 1",)

    observed.update("go to fridge 1", seen("fridge 1", [("fridge 1", "is", "closed")]))
    assert "fridge 1" in observed.visited and "fridge 1" not in observed.searched  # closed: not seen inside
    assert find_plan(missing(observed), observed, places).steps == ("open fridge 1",)

    observed.update("open fridge 1", seen("fridge 1", [("fridge 1", "is", "open")]))  # empty
    assert "fridge 1" in observed.searched
    assert find_plan(missing(observed), observed, places).steps == ("go to countertop 1",)

    observed.update("go to countertop 1", seen("countertop 1", [("apple 1", "on", "countertop 1")]))
    assert observed.seen == {"apple 1": "countertop 1"} and missing(observed) == []
    assert find_plan(missing(observed), observed, places) is None


def test_what_is_held_is_no_longer_where_it_was_seen():
    observed = Observed.start(seen("countertop 1", [("apple 1", "on", "countertop 1")]), ALFWORLD)
    observed.update("take apple 1 from countertop 1", seen("countertop 1", [("agent", "holds", "apple 1")]))
    assert observed.held == {"apple 1"} and observed.seen == {} and observed.where("apple") == ["apple 1"]


# --- the real ALFWorld engine ---------------------------------------------------------------------


def explore(env: Environment, domain: Domain, ranking: Ranking, limit: int = 40) -> tuple[Observed, list[str]]:
    """Follow the find-X skill's plans from reset until it has none; the observed and the actions."""
    observed = Observed.start(env.reset(), domain)
    places = Places(domain, memory=ranking)
    actions: list[str] = []
    while (plan := find_plan(missing(observed), observed, places)) is not None and len(actions) < limit:
        action = plan.steps[0]
        observed.update(action, env.step(action))
        actions.append(action)
    return observed, actions


@pytest.fixture(scope="module")
def hidden_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A generated medium game whose object starts in a closed receptacle that is not the first
    one listed: (game file, the object's kind, its receptacle). Read from the planner's plan, which
    only the test sees."""
    out = tmp_path_factory.mktemp("games")
    for seed in range(40):
        game = generate_game("pick_and_place_simple", seed * 7, out, DIFFICULTIES["medium"])
        env = AlfworldEnv(Task("hidden", "pick_and_place_simple", 0, str(game)), game)
        try:
            first = env.reset()
            plan = env.oracle_plan()
        finally:
            env.close()
        opened = [step.removeprefix("open ") for step in plan if step.startswith("open ")]
        take = next(step for step in plan if step.startswith("take "))
        thing, place = take.removeprefix("take ").split(" from ")
        listed = [a.removeprefix("go to ") for a in first.admissible if a.startswith("go to ")]
        if opened and opened[0] == place and listed.index(place) > 1:
            return game, ALFWORLD.kind(thing), place
    pytest.fail("no generated game hides its object in a closed receptacle")


def test_a_hidden_thing_is_found_by_exploring_in_order_not_read_from_the_game(hidden_game):
    game, kind, place = hidden_game
    env = AlfworldEnv(Task("hidden", "pick_and_place_simple", 0, str(game)), game)
    try:
        first = Observed.start(env.reset(), ALFWORLD)
        order = search_order([kind], first, Places(ALFWORLD))
        observed = first
        actions: list[str] = []
        while (plan := find_plan(missing(observed), observed, Places(ALFWORLD))) is not None:
            assert observed.where(kind) == []  # not known before its place was opened
            action = plan.steps[0]
            observed.update(action, env.step(action))
            actions.append(action)
    finally:
        env.close()
    assert actions[0] != f"go to {place}"
    assert actions[-2:] == [f"go to {place}", f"open {place}"]
    assert observed.where(kind) and observed.seen[observed.where(kind)[0]] == place
    # Every place before it in the search order was searched first: it explored, in order.
    before = order[: order.index(place)]
    assert set(before) <= observed.searched
    assert [a for a in actions if a.startswith("go to ")] == [f"go to {p}" for p in order[: len(before) + 1]]


def test_the_ranking_leads_straight_to_the_kind_of_place_things_were_found_in(hidden_game):
    game, kind, place = hidden_game
    ranking = ranking_of({kind: [(ALFWORLD.kind(place), 4)]})
    runs = {}
    for name, rank in (("ranked", ranking), ("unranked", no_ranking)):
        env = AlfworldEnv(Task("hidden", "pick_and_place_simple", 0, str(game)), game)
        try:
            runs[name] = explore(env, ALFWORLD, rank)
        finally:
            env.close()
    observed, actions = runs["ranked"]
    assert observed.where(kind) and missing(observed) == []
    assert actions[0] == f"go to {place}" or ALFWORLD.kind(actions[0].removeprefix("go to ")) == ALFWORLD.kind(place)
    assert len(actions) < len(runs["unranked"][1])


# --- the grid: rooms behind doors -----------------------------------------------------------------


def test_on_the_grid_a_closed_door_is_opened_to_search_the_room_behind_it():
    env = GridEnv(Task("toys", "collect_toys", 1))
    try:
        observed, actions = explore(env, GRID, no_ranking)
    finally:
        env.close()
    assert actions == ["go to door 1", "open door 1", "go to playroom"]
    assert missing(observed) == [] and observed.where("toy car")
    assert "door 1" not in observed.places  # a way through, not a place to search


# --- a real ALFWorld room ---------------------------------------------------------------------------


def test_in_a_real_living_room_the_side_tables_come_before_twenty_one_drawers(alfworld_data: Path):
    """valid_seen's "put a newspaper in sofa" (room 224): listed first are 21 drawers, and the
    newspaper is on a side table. Searched in listed order it was seen at step 49 of 50; with
    ALFWorld's placement rules the places seen on arrival come first."""
    (game,) = [g for g in find_games(alfworld_data / "json_2.1.1" / "valid_seen")
               if g.task_id.startswith("pick_and_place_simple-Newspaper-None-Sofa-224/")]
    env = AlfworldTaskSource([game.task()]).make(game.task())
    try:
        observed, actions = explore(env, ALFWORLD, no_ranking, limit=50)
    finally:
        env.close()
    assert observed.where("newspaper") and len(actions) <= 10
    assert not any(action.startswith("open drawer") for action in actions)


def test_a_room_seen_through_a_door_two_rooms_back_is_reached_by_walking_back():
    """ScienceWorld's house: the workshop's door is in the hallway. From outside, beyond the
    kitchen, no unsearched place is one door away: find-X walks back towards the hallway."""
    from prag.envs.sciworld.domain import SCIWORLD

    goal = "Your task is to boil gallium. First, focus on the substance."

    def room(name: str, doors: dict[str, str], admissible: list[str]) -> Observation:
        triples = [(door, "leadsTo", to) for door, to in doors.items()]
        triples += [(door, "is", "closed" if to == "workshop" else "open") for door, to in doors.items()]
        triples.append(("chair", "in", name))
        return Observation(goal, f"This room is called the {name}.", admissible, triples, "", location=name)

    hallway = room("hallway", {"door to kitchen": "kitchen", "door to workshop": "workshop"},
                   ["go to kitchen", "open door to workshop", "look around"])
    observed = Observed.start(hallway, SCIWORLD)
    observed.update("go to kitchen", room("kitchen", {"door to hallway": "hallway", "door to outside": "outside"},
                                          ["go to hallway", "go to outside", "look around"]))
    observed.update("go to outside", room("outside", {"door to kitchen": "kitchen"}, ["go to kitchen", "look around"]))
    assert observed.to_search() == ["workshop"]
    places = Places(SCIWORLD, memory=ranking_of({}))
    assert find_plan(["gallium"], observed, places).steps == ("go to kitchen",)
    observed.update("go to kitchen", room("kitchen", {"door to hallway": "hallway", "door to outside": "outside"},
                                          ["go to hallway", "go to outside", "look around"]))
    assert find_plan(["gallium"], observed, places).steps == ("go to hallway",)
    observed.update("go to hallway", hallway)
    assert find_plan(["gallium"], observed, places).steps == ("open door to workshop", "go to workshop")


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_once_every_room_is_searched_what_is_closed_in_them_is_opened(tmp_path: Path) -> None:
    """measure-melting-point-known-substance, a dev variation: the orange juice "located around the
    kitchen" is in its fridge. find-X walked the nine rooms, found none, and three rounds never
    focused on it; now the fridge is opened once the rooms are searched, and the juice focused on."""
    from support import played_rounds, sciworld_spec

    from prag.agent.config import AgentConfig
    from prag.llm.scripted import RandomChoiceLLM

    spec = sciworld_spec(tmp_path, "juice", "measure-melting-point-known-substance", "dev", 0, 45)
    (episode,) = played_rounds(tmp_path, RandomChoiceLLM(0), spec,
                               AgentConfig(ask="hard-coded", sources=("experience", "search", "llm")))
    actions = [step.action for step in episode.steps]
    assert "focus on orange juice" in actions
    assert actions.index("open fridge") < actions.index("focus on orange juice")


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_closed_thing_no_action_opens_is_not_walked_back_to(tmp_path: Path) -> None:
    """chemistry-mix-paint-secondary-color, a test variation: violet paint is to be made, so it is
    seen nowhere; the search of closed things met one in the kitchen no admissible action opened,
    passed on to one in the hallway, and from there was led back to the kitchen's, to and fro for
    fifty steps (30 points, where the paint is made and the task won otherwise)."""
    from support import played_rounds, sciworld_spec

    from prag.agent.config import AgentConfig
    from prag.llm.scripted import RandomChoiceLLM

    spec = sciworld_spec(tmp_path, "paint", "chemistry-mix-paint-secondary-color", "test", 0, 100)
    (episode,) = played_rounds(tmp_path, RandomChoiceLLM(0), spec,
                               AgentConfig(ask="hard-coded", sources=("experience", "search", "llm")))
    assert episode.won
