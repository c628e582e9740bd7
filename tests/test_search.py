"""Means-ends search: the known shortest plans on hand-made observed states, only what was observed
(a hidden thing is never walked to), and plans that win real ALFWorld games in the real engine."""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from prag.agent.world.observed import Observed
from prag.agent.world.search import means_ends
from prag.envs.alfworld.env import TASK_TYPES, AlfworldEnv, find_games
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.alfworld.rooms import is_openable
from prag.envs.alfworld.scene import sample_scene
from prag.envs.base import Environment, Observation, Task
from prag.envs.domain import ALFWORLD, GRID, TEXTWORLD
from prag.envs.grid.env import GridEnv
from prag.envs.grid.tasks import TASKS
from support import alfworld_home

KITCHEN = ["countertop 1", "fridge 1", "microwave 1", "cabinet 1", "drawer 1", "sinkbasin 1", "diningtable 1"]
BEDROOM = ["bed 1", "desk 1", "drawer 1", "shelf 1", "sidetable 1", "garbagecan 1"]


def observed(goal: str, places: list[str], seen: dict[str, str], **facts: object) -> Observed:
    """A hand-made observed state: the agent in the middle of the room unless `location` says."""
    return Observed(ALFWORLD, goal, location=str(facts.pop("location", "middle of room")), places=places,
                    seen=seen, **facts)  # type: ignore[arg-type]


def plan(state: Observed, admissible: list[str] | None = None, depth: int = 20) -> list[str] | None:
    found = means_ends(state.goal, state, admissible or [], ALFWORLD, depth)
    assert found is None or (found.source == "search" and found.goal == state.goal)
    return None if found is None else list(found.steps)


# --- the known shortest plans, per task type ------------------------------------------------------


def test_heat_then_place_opens_the_closed_target() -> None:
    state = observed("put a hot apple in fridge.", KITCHEN, {"apple 1": "countertop 1", "mug 1": "cabinet 1"})
    assert plan(state) == [
        "go to countertop 1",
        "take apple 1 from countertop 1",
        "go to microwave 1",
        "heat apple 1 with microwave 1",
        "go to fridge 1",
        "open fridge 1",
        "move apple 1 to fridge 1",
    ]


def test_a_target_seen_open_is_not_opened_again_and_a_closed_one_is() -> None:
    goal = "put a mug in cabinet."
    was_open = observed(goal, KITCHEN, {"mug 1": "diningtable 1"}, opened={"cabinet 1"})
    assert plan(was_open) == ["go to diningtable 1", "take mug 1 from diningtable 1", "go to cabinet 1", "move mug 1 to cabinet 1"]
    closed_again = observed(goal, KITCHEN, {"mug 1": "diningtable 1"}, opened={"cabinet 1"}, closed={"cabinet 1"})
    assert plan(closed_again) == [
        "go to diningtable 1", "take mug 1 from diningtable 1", "go to cabinet 1", "open cabinet 1", "move mug 1 to cabinet 1",
    ]


def test_a_place_visited_and_never_seen_open_or_closed_is_not_opened() -> None:
    state = observed("put a mug in cabinet.", KITCHEN, {"mug 1": "diningtable 1"}, visited={"cabinet 1"})
    assert plan(state) == ["go to diningtable 1", "take mug 1 from diningtable 1", "go to cabinet 1", "move mug 1 to cabinet 1"]
    seen_closed = observed(state.goal, KITCHEN, {"mug 1": "diningtable 1"}, visited={"cabinet 1"},
                           closed={"cabinet 1"}, states={"cabinet 1": {"closed"}})
    assert "open cabinet 1" in (plan(seen_closed) or [])


def test_places_the_agent_may_not_go_to_from_here_share_its_location() -> None:
    # A real valid_seen bedroom: desk 1 and drawer 1 stand at one spot, and that drawer has no door.
    state = observed("put two cd in drawer.", BEDROOM, {"cd 1": "desk 1", "cd 2": "desk 1"}, location="desk 1")
    admissible = ["go to bed 1", "go to shelf 1", "go to sidetable 1", "go to garbagecan 1",
                  "take cd 1 from desk 1", "take cd 2 from desk 1"]
    steps = plan(state, admissible)
    assert steps is not None and len(steps) == 4 and not any(s.startswith(("go to", "open")) for s in steps)


def test_cool_from_inside_the_fridge_and_the_put_grammar_of_the_admissible_actions() -> None:
    state = observed("cool some egg and put it in diningtable.", KITCHEN, {"egg 1": "fridge 1"},
                     location="fridge 1", opened={"fridge 1"})
    admissible = ["close fridge 1", "take egg 1 from fridge 1", "go to diningtable 1", "put egg 1 in/on fridge 1"]
    assert plan(state, admissible) == [
        "take egg 1 from fridge 1", "cool egg 1 with fridge 1", "go to diningtable 1", "put egg 1 in/on diningtable 1",
    ]


def test_the_put_grammar_of_a_past_action_is_kept() -> None:
    state = observed("find two cellphone and put them in bed.", BEDROOM, {"cellphone 1": "bed 1", "cellphone 2": "desk 1"},
                     actions=["go to desk 1", "take cellphone 1 from desk 1", "go to bed 1", "put cellphone 1 in/on bed 1"])
    assert plan(state) == ["go to desk 1", "take cellphone 2 from desk 1", "go to bed 1", "put cellphone 2 in/on bed 1"]


def test_clean_then_place() -> None:
    state = observed("put a clean cloth in cabinet.", KITCHEN, {"cloth 1": "countertop 1"})
    assert plan(state) == [
        "go to countertop 1",
        "take cloth 1 from countertop 1",
        "go to sinkbasin 1",
        "clean cloth 1 with sinkbasin 1",
        "go to cabinet 1",
        "open cabinet 1",
        "move cloth 1 to cabinet 1",
    ]


def test_look_at_an_object_under_the_lamp() -> None:
    state = observed("look at alarmclock under the desklamp.", BEDROOM,
                     {"alarmclock 1": "desk 1", "desklamp 1": "sidetable 1", "book 1": "bed 1"})
    assert plan(state) == ["go to desk 1", "take alarmclock 1 from desk 1", "go to sidetable 1", "use desklamp 1"]


def test_pick_two_fetches_both_and_counts_one_already_in_place() -> None:
    state = observed("find two cellphone and put them in bed.", BEDROOM,
                     {"cellphone 1": "desk 1", "cellphone 2": "drawer 1"}, opened={"drawer 1"})
    steps = plan(state)
    assert steps is not None and len(steps) == 8
    assert sorted(steps) == sorted([
        "go to desk 1", "take cellphone 1 from desk 1", "go to bed 1", "move cellphone 1 to bed 1",
        "go to drawer 1", "take cellphone 2 from drawer 1", "go to bed 1", "move cellphone 2 to bed 1",
    ])
    assert steps.index("take cellphone 1 from desk 1") < steps.index("move cellphone 1 to bed 1")
    one_in_place = observed(state.goal, BEDROOM, {"cellphone 1": "bed 1", "cellphone 2": "desk 1"})
    assert plan(one_in_place) == ["go to desk 1", "take cellphone 2 from desk 1", "go to bed 1", "move cellphone 2 to bed 1"]


def test_place_simple_with_hands_full_puts_the_held_thing_down_first() -> None:
    state = observed("put some book on shelf.", BEDROOM, {"book 1": "bed 1"}, location="desk 1", held={"pen 1"})
    assert plan(state) == [
        "move pen 1 to desk 1", "go to bed 1", "take book 1 from bed 1", "go to shelf 1", "move book 1 to shelf 1",
    ]


def test_a_state_already_reached_is_not_redone() -> None:
    hot = observed("heat some apple and put it in countertop.", KITCHEN, {}, location="microwave 1",
                   held={"apple 1"}, states={"apple 1": {"hot"}})
    assert plan(hot) == ["go to countertop 1", "move apple 1 to countertop 1"]


# --- what search does not do -------------------------------------------------------------------


def test_a_needed_thing_never_seen_gives_no_plan() -> None:
    assert plan(observed("put a hot apple in fridge.", KITCHEN, {"mug 1": "cabinet 1"})) is None
    one_of_two = observed("put two cellphone in bed.", BEDROOM, {"cellphone 1": "desk 1"})
    assert plan(one_of_two) is None
    no_lamp = observed("examine the alarmclock with the desklamp.", BEDROOM, {"alarmclock 1": "desk 1"})
    assert plan(no_lamp) is None


def test_no_plan_when_the_needed_place_is_unknown_or_too_far_or_not_admissible() -> None:
    no_microwave = observed("put a hot apple in fridge.", ["countertop 1", "fridge 1"], {"apple 1": "countertop 1"})
    assert plan(no_microwave) is None
    state = observed("put a hot apple in fridge.", KITCHEN, {"apple 1": "countertop 1"})
    assert plan(state, depth=6) is None  # the shortest takes 7
    assert plan(state, admissible=["go to fridge 1", "go to microwave 1"]) is None  # cannot start here


def test_goals_and_families_without_an_action_model_give_no_plan() -> None:
    assert plan(observed("go dancing.", KITCHEN, {"apple 1": "countertop 1"})) is None
    textworld = Observed(TEXTWORLD, "take the coin", places=["kitchen"], seen={"coin": "kitchen"})
    assert means_ends(textworld.goal, textworld, [], TEXTWORLD) is None


# --- real games ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from alfworld_home(tmp_path_factory)


def explore(env: AlfworldEnv, skip: str = "") -> tuple[Observation, Observed]:
    """Reset, then play only the oracle plan's `go to` and `open` steps (but not `skip`): what an
    exploring agent would see, and nothing taken or changed."""
    obs = env.reset()
    state = Observed.start(obs, ALFWORLD)
    for action in env.oracle_plan():
        if action.startswith(("go to ", "open ")) and action != skip:
            obs = env.step(action)
            state.update(action, obs)
    return obs, state


def play_search(env: Environment, obs: Observation, state: Observed, replans: int = 0) -> bool:
    """Play the searched plan; a step that is not admissible when its turn comes (ALFWorld's put
    grammar is unknown until something is held; the grid's walk into a room may end facing some
    furniture) makes the agent search again, up to `replans` times, as the mediator would."""
    found = means_ends(obs.goal, state, obs.admissible, state.domain)
    while found is not None:
        for action in found.steps:
            if obs.won or action not in obs.admissible:
                break
            obs = env.step(action)
            state.update(action, obs)
        if obs.won or replans == 0:
            return obs.won
        replans -= 1
        found = means_ends(obs.goal, state, obs.admissible, state.domain)
    return False


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_the_searched_plan_wins_a_generated_game_in_the_real_engine(generated: Path, task_type: str) -> None:
    game = generate_game(task_type, 7, generated, DIFFICULTIES["medium"])
    env = AlfworldEnv(Task(game.parent.name, task_type, 0, str(game)), game)
    try:
        obs, state = explore(env)
        assert not obs.won
        assert play_search(env, obs, state)
    finally:
        env.close()


def _hidden_game(out: Path) -> tuple[Path, str]:
    """A generated place-simple game whose object starts in a closed receptacle, and that receptacle."""
    for seed in range(100):
        scene = sample_scene("pick_and_place_simple", seed, DIFFICULTIES["easy"])
        types = {r.id: r.type for r in scene.receptacles}
        if any(t.type == scene.target and is_openable(types[t.receptacle]) for t in scene.things):
            game = generate_game("pick_and_place_simple", seed, out, DIFFICULTIES["easy"])
            opens = [a for a in json.loads(game.read_text())["walkthrough"] if a.startswith("open ")]
            if opens and game.parent.name.endswith(f"_{seed}"):
                return game, opens[0]
    raise AssertionError("no game with its object in a closed receptacle in 100 seeds")


def test_a_thing_in_a_closed_place_never_opened_is_not_walked_to(generated: Path) -> None:
    game, opening = _hidden_game(generated)
    place = opening.removeprefix("open ")
    env = AlfworldEnv(Task(game.parent.name, "pick_and_place_simple", 0, str(game)), game)
    try:
        obs, state = explore(env, skip=opening)
        # The engine knows where the object is; the agent does not, and neither does search.
        assert place in state.visited and place in state.closed and place not in state.seen.values()
        assert means_ends(obs.goal, state, obs.admissible, ALFWORLD) is None
        for action in (f"go to {place}", opening):
            obs = env.step(action)
            state.update(action, obs)
        assert place in state.seen.values()  # it was there all along
        assert play_search(env, obs, state)
    finally:
        env.close()


# Real valid_seen games whose things an exploring agent sees, in rooms the engine loads in seconds
# (a kitchen's can take a minute); the generated games above cover all six types.
REAL_GAMES = {
    "pick_and_place_simple": "pick_and_place_simple-Pencil-None-Desk-310",
    "pick_two_obj_and_place": "pick_two_obj_and_place-Book-None-Desk-302",
}


@pytest.mark.parametrize("task_type", sorted(REAL_GAMES))
def test_the_searched_plan_wins_a_real_alfworld_game(alfworld_data: Path, task_type: str) -> None:
    os.environ["ALFWORLD_DATA"] = str(alfworld_data)
    games = [g for g in find_games(alfworld_data / "json_2.1.1" / "valid_seen") if g.task_id.startswith(REAL_GAMES[task_type])]
    assert games, f"no {REAL_GAMES[task_type]} game in valid_seen"
    env = AlfworldEnv(games[0].task(), games[0].game_file)
    try:
        obs, state = explore(env)
        # These games write "put X in/on Y", which the admissible actions show once something is held.
        assert play_search(env, obs, state, replans=1)
    finally:
        env.close()


# --- the grid world --------------------------------------------------------------------------------


def explore_grid(env: GridEnv, rooms: int | None = None) -> tuple[Observation, Observed]:
    """Reset, then play the oracle plan's `go to` and `open` steps (only until `rooms` rooms were
    entered, when given): nothing picked up, washed or toggled."""
    obs = env.reset()
    state = Observed.start(obs, GRID)
    entered = 1
    for action in env.oracle_plan():
        if not action.startswith(("go to ", "open ")):
            continue
        if action.removeprefix("go to ") in env.world.rooms:
            entered += 1
            if rooms is not None and entered > rooms:
                break
        obs = env.step(action)
        state.update(action, obs)
    return obs, state


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("seed", [0, 1])
def test_the_searched_plan_wins_a_grid_task(task: str, seed: int) -> None:
    env = GridEnv(Task(f"{task}-{seed}", task, seed))
    try:
        obs, state = explore_grid(env)
        assert not obs.won
        assert play_search(env, obs, state, replans=4)
    finally:
        env.close()


def test_grid_things_in_rooms_never_entered_give_no_plan() -> None:
    env = GridEnv(Task("trash", "throw_away_trash", 1))
    try:
        obs, state = explore_grid(env, rooms=1)  # the first room only
        assert means_ends(obs.goal, state, obs.admissible, GRID) is None
    finally:
        env.close()
