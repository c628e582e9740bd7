"""The household grid world: every registered task, its solver, navigation, the per-cell limit."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from gymnasium.utils.env_checker import check_env
from minigrid.core.actions import Actions

from prag.envs.base import Environment, Task
from prag.envs.grid import TASKS, GridEnv, from_params
from prag.envs.grid.actions import admissible, execute
from prag.envs.grid.objects import (
    MAX_PER_CELL,
    CellFullError,
    Furniture,
    Item,
    NamedDoor,
)
from prag.envs.grid.scene import relation_matrix, scene_triples
from prag.envs.grid.solver import Planner
from prag.envs.spec import load_spec
from prag.errors import SpecError

NAMES = sorted(TASKS)
SEEDS = range(6)


def make(name: str, seed: int, **kwargs) -> GridEnv:
    return GridEnv(Task(f"{name}-{seed}", name, seed), **kwargs)


def play(env: GridEnv, plan: list[str]) -> list:
    return [env.reset()] + [env.step(a) for a in plan]


def seed_where(name: str, condition, tries: int = 60) -> int:
    """The first seed whose freshly built world meets the condition."""
    for seed in range(tries):
        world = TASKS[name]()
        world.reset(seed=seed)
        if condition(world):
            return seed
    raise AssertionError(f"no seed of {name} below {tries} meets the condition")


# ------------------------------------------------------------------ every task
@pytest.mark.parametrize("name", NAMES)
def test_minigrid_env_passes_gymnasium_checks(name):
    check_env(TASKS[name](room_size=6), skip_render_check=True)


@pytest.mark.parametrize("name", NAMES)
def test_adapter_api(name):
    env = make(name, 0)
    assert isinstance(env, Environment)
    assert env.shortest_path_length is None
    obs = env.reset()
    assert obs.goal and obs.goal[0].isupper() and obs.goal.endswith(".")
    assert "You are in the" in obs.text and "You are holding" in obs.text
    assert not obs.won and not obs.done
    assert obs.admissible and all(isinstance(a, str) for a in obs.admissible)
    assert obs.scene_text.startswith("at: ")
    assert all(len(t) == 3 and all(isinstance(p, str) for p in t) for t in obs.scene_triples)
    assert env.shortest_path_length == len(env.oracle_plan()) > 0
    # every admissible action really is possible: each succeeds on a fresh copy
    for action in obs.admissible:
        fresh = TASKS[name]()
        fresh.reset(seed=0)
        assert execute(fresh, action).ok, action


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_episode(name):
    a, b = make(name, 3), make(name, 3)
    a.reset()
    b.reset()
    plan = a.oracle_plan()
    assert b.oracle_plan() == plan
    for x, y in zip(play(a, plan), play(b, plan)):
        assert (x.goal, x.text, x.admissible, x.scene_triples, x.won) == (y.goal, y.text, y.admissible, y.scene_triples, y.won)
    houses = set()
    for seed in range(4):
        env = make(name, seed)
        obs = env.reset()
        houses.add((obs.goal, obs.text, tuple(env.oracle_plan())))
    assert len(houses) > 1, "different seeds should build different houses"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", SEEDS)
def test_solver_plan_wins(name, seed):
    env = make(name, seed)
    env.reset()
    plan = env.oracle_plan()
    observations = play(env, plan)
    assert all(o.infos["valid"] for o in observations[1:])
    assert [o.won for o in observations] == [False] * len(plan) + [True], "won exactly at the plan's end"
    assert observations[-1].done
    assert env.shortest_path_length == len(plan)


@pytest.mark.parametrize("name", NAMES)
def test_wrong_plans_do_not_win(name):
    env = make(name, 1)
    env.reset()
    plan = env.oracle_plan()
    short = play(env, plan[:-1])
    assert not any(o.won for o in short) and not short[-1].done
    shuffled = plan[:]
    random.Random(0).shuffle(shuffled)
    played = play(env, shuffled)
    assert not played[-1].won
    assert not all(o.infos["valid"] for o in played[1:]), "a shuffled plan breaks some precondition"


@pytest.mark.parametrize("name", NAMES)
def test_scene_graph_shows_only_the_agents_room(name):
    world = TASKS[name]()
    world.reset(seed=2)
    names, relations, matrix = relation_matrix(world)
    triples = scene_triples(world)
    assert matrix.shape == (len(relations), len(names), len(names))
    # only true pairs become triples, one per true cell of the matrix
    assert len([t for t in triples if t[1] != "is"]) == int(matrix.sum())
    subjects = {t[0] for t in triples} | {t[2] for t in triples}
    here = world.agent_room
    for piece in world.furniture:
        assert (piece.name in subjects) == (world.room_at(piece.cur_pos) == here)
    for piece in world.furniture:
        for item in piece.items:
            seen = world.room_at(piece.cur_pos) == here and piece.accessible
            assert (item.name in subjects) == seen, item.name


# ------------------------------------------------------------------ actions and navigation
def test_unreachable_room_is_refused_with_reason_and_the_episode_goes_on():
    seed = seed_where("put_away_groceries", lambda w: not w.doors[0].is_open)
    env = make("put_away_groceries", seed)
    start = env.reset()
    here = start.infos["room"]
    other = env.world.doors[0].other_side(here)
    assert f"go to {other}" not in start.admissible
    obs = env.step(f"go to {other}")
    assert not obs.infos["valid"] and not obs.won and not obs.done
    assert "cannot reach" in obs.infos["reason"] and "door 1 is closed" in obs.infos["reason"]
    assert obs.text.startswith("Nothing happens:")
    assert obs.infos["agent_pos"] == start.infos["agent_pos"], "a refused walk does not move the agent"
    for action in ["go to door 1", "open door 1", f"go to {other}"]:
        obs = env.step(action)
        assert obs.infos["valid"], obs.text
    assert obs.infos["room"] == other


def test_walk_through_a_door_is_minigrids_own_low_level_actions():
    seed = seed_where("put_away_groceries", lambda w: w.doors[0].is_open)
    env = make("put_away_groceries", seed)
    obs = env.reset()
    here = obs.infos["room"]
    other = env.world.doors[0].other_side(here)
    target = env.world.furniture_in(other)[0]
    walked = [env.step(f"go to {other}"), env.step(f"go to {target.name}")]
    assert all(o.infos["valid"] for o in walked)
    low = walked[0].infos["low_level"] + walked[1].infos["low_level"]
    assert set(low) <= {"left", "right", "forward"} and "forward" in low
    assert env.world.faced() is target
    # the same low-level actions through minigrid's step reach the same place in a fresh house
    fresh = TASKS["put_away_groceries"]()
    fresh.reset(seed=seed)
    for name in low:
        fresh.step(Actions[name])
    assert fresh.agent_cell == env.world.agent_cell and fresh.agent_dir == env.world.agent_dir
    assert fresh.room_at(fresh.agent_cell) == other


def test_go_to_walks_around_furniture_and_walls_in_a_four_room_house():
    env = make("throw_away_trash", 0)
    env.reset()
    for door in env.world.doors:
        door.is_open = True
    # cross to the diagonally opposite room: two doors, around the walls between
    rooms = env.world.rooms
    here = env.world.agent_room
    far = next(r for r in rooms if r != here and r not in {d.other_side(here) for d in env.world.doors_of(here)})
    planner = Planner(env.world)
    planner.enter(far)
    assert env.world.agent_room == far
    for piece in env.world.furniture_in(far):
        planner.reach(piece)
        assert env.world.faced() is piece


def test_invalid_actions_get_reasons():
    env = make("wash_dishes", 0)
    env.reset()
    cases = {
        "fly to the moon": "not an action here",
        "pick up plate 1": "go to table 1 first",
        "go to fridge 9": "you see no fridge 9 here",
        "toggle sink 1": "you see no sink 1 here",
    }
    for action, reason in cases.items():
        obs = env.step(action)
        assert not obs.infos["valid"] and reason in obs.infos["reason"], (action, obs.infos["reason"])
        assert not obs.done


# ------------------------------------------------------------------ three objects per cell
def test_a_fourth_object_in_one_cell_is_refused():
    seed = seed_where("collect_toys", lambda w: len(w.toys) == 3)
    world = TASKS["collect_toys"]()
    world.reset(seed=seed)
    planner = Planner(world)
    world.solve(planner)
    box = world.box
    assert len(box.items) == MAX_PER_CELL == 3 and world.goal_reached()
    book = next(i for i in world.items if i.kind.name == "book")
    planner.fetch(book)
    planner.reach(box)
    assert f"drop {book.name} in {box.name}" not in admissible(world)
    outcome = execute(world, f"drop {book.name} in {box.name}")
    assert not outcome.ok
    assert "already holds 3 objects, the limit for one cell" in outcome.message
    assert len(box.items) == 3 and world.held is book


def test_furniture_refuses_a_fourth_item_directly():
    from prag.envs.grid.objects import FURNITURE, ITEMS

    table = Furniture(FURNITURE["table"], "table 1")
    for n in range(3):
        table.add(Item(ITEMS["apple"], f"apple {n}"))
    with pytest.raises(CellFullError, match="limit"):
        table.add(Item(ITEMS["apple"], "apple 4"))


# ------------------------------------------------------------------ the spec family
def test_spec_file_opens_and_makes_playable_tasks():
    source = load_spec("grid-household").open()
    tasks = source.tasks()
    assert len(tasks) == 15 and {t.task_type for t in tasks} == set(TASKS)
    assert len({t.task_id for t in tasks}) == 15
    env = source.make(tasks[0])
    assert env.reset().admissible


@pytest.mark.parametrize(
    "params, message",
    [
        ({"colour": "red"}, "unknown params ['colour']"),
        ({"tasks": ["make_coffee"]}, "unknown tasks ['make_coffee']"),
        ({"tasks": "collect_toys"}, "'tasks' must be a non-empty list"),
        ({"per_task": 0}, "'per_task' must be an integer >= 1"),
        ({"size": 40}, "'size' (room size in cells) must be 5..12"),
        ({"seed": True}, "'seed' must be an integer"),
    ],
)
def test_bad_params_say_what_to_fix(params, message):
    with pytest.raises(SpecError) as err:
        from_params(params, Path("."))
    assert message in str(err.value)


def test_objects_are_minigrid_world_objects_and_doors():
    world = TASKS["throw_away_trash"]()
    world.reset(seed=0)
    assert all(isinstance(world.grid.get(*f.cur_pos), Furniture) for f in world.furniture)
    assert all(isinstance(world.grid.get(*d.cur_pos), NamedDoor) for d in world.doors)
    assert len(world.doors) == 4 and len(world.rooms) == 4
