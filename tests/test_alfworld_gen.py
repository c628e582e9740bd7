"""Generated ALFWorld games: all six task types, won by their plan in the real engine, seeded, cached."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from prag.envs.alfworld import gen as alfworld_gen
from prag.envs.alfworld.env import TASK_TYPES, AlfworldTaskSource
from prag.envs.alfworld.gen import (
    DIFFICULTIES,
    GenParams,
    generate_game,
    parse_params,
    task_set,
)
from prag.envs.alfworld.rooms import is_openable
from prag.envs.alfworld.scene import RoomSize, sample_scene
from prag.envs.base import Task
from prag.envs.registry import factory
from prag.envs.spec import load_spec
from prag.errors import SpecError

REPO = Path(__file__).resolve().parents[1]
# The command that turns the object into the state the goal asks for.
STATE_CHANGE = {
    "pick_clean_then_place_in_recep": "clean ",
    "pick_heat_then_place_in_recep": "heat ",
    "pick_cool_then_place_in_recep": "cool ",
    "look_at_obj_in_light": "use ",
}


@pytest.fixture(scope="session", autouse=True)
def alfworld_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["ALFWORLD_DATA"] = str(tmp_path_factory.mktemp("alfworld_data"))


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("generated")
    return {t: generate_game(t, 11, out) for t in TASK_TYPES}


def play(game_file: Path, commands: list[str]) -> tuple[str, bool]:
    """Play commands through the ALFWorld adapter; the goal and whether the game was won."""
    task = Task(game_file.parent.name, "", 0, str(game_file))
    env = AlfworldTaskSource([task]).make(task)
    try:
        obs = env.reset()
        goal, won = obs.goal, obs.won
        for command in commands:
            obs = env.step(command)
            won = obs.won
        return goal, won
    finally:
        env.close()


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_every_task_type_is_written_in_alfworld_layout_and_won_by_its_plan(
    games: dict[str, Path], task_type: str
) -> None:
    game_file = games[task_type]
    assert game_file.parts[-5:-3] == ("json_2.1.1", "generated")
    assert game_file.parent.parent.name.startswith(task_type + "-")
    game = json.loads(game_file.read_text())
    assert {"pddl_domain", "grammar", "pddl_problem", "solvable"} <= set(game) and game["solvable"] is True
    traj = json.loads((game_file.parent / "traj_data.json").read_text())
    assert traj["task_type"] == task_type
    target = traj["pddl_params"]["object_target"]
    assert re.search(rf"\(objectType \?o1? {target}Type\)", game["pddl_problem"])  # the goal formula
    goal = traj["turk_annotations"]["anns"][0]["task_desc"]

    shown_goal, won = play(game_file, game["walkthrough"])
    assert won
    assert shown_goal == goal[0].lower() + goal[1:]  # "Your task is to: heat some egg and put it in ..."
    assert target.lower() in goal


def test_alfworlds_own_loader_collects_every_generated_game(games: dict[str, Path]) -> None:
    from alfworld.agents.environment.alfred_tw_env import AlfredTWEnv

    split = next(iter(games.values())).parents[2]
    config = {"dataset": {"data_path": str(split), "num_train_games": -1},
              "env": {"task_types": [1, 2, 3, 4, 5, 6], "goal_desc_human_anns_prob": 0}}
    loader = AlfredTWEnv(config, train_eval="train")
    assert sorted(loader.game_files) == sorted(str(g) for g in games.values())


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_wrong_actions_do_not_win(games: dict[str, Path], task_type: str) -> None:
    plan = json.loads(games[task_type].read_text())["walkthrough"]
    assert not play(games[task_type], plan[:-1])[1]
    if task_type in STATE_CHANGE:  # skipping the heat/cool/clean/lamp step leaves the goal unmet
        skipped = [c for c in plan if not c.startswith(STATE_CHANGE[task_type])]
        assert len(skipped) == len(plan) - 1
        assert not play(games[task_type], skipped)[1]


def test_same_seed_gives_byte_identical_files_in_any_process(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from prag.envs.alfworld.gen import generate_game;"
        "generate_game('pick_heat_then_place_in_recep', 5, Path(sys.argv[1]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "a")], check=True, env=env, cwd=REPO)
    generate_game("pick_heat_then_place_in_recep", 5, tmp_path / "b")
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) == 2
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_different_seeds_give_different_games(tmp_path: Path) -> None:
    problems = {
        json.loads(generate_game("pick_and_place_simple", seed, tmp_path).read_text())["pddl_problem"]
        for seed in (1, 2, 3)
    }
    assert len(problems) == 3


def test_a_game_its_plan_does_not_win_is_dropped_for_the_next_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_check = alfworld_gen._winning_plan
    calls: list[Path] = []

    def first_game_lost(game_file: Path) -> list[str]:  # scripted stand-in: the first game "loses"
        calls.append(game_file)
        return [] if len(calls) == 1 else real_check(game_file)

    monkeypatch.setattr(alfworld_gen, "_winning_plan", first_game_lost)
    game_file = generate_game("look_at_obj_in_light", 40, tmp_path)
    assert game_file.parent.name == "trial_gen_41"
    assert json.loads((game_file.parent / "traj_data.json").read_text())["scene"]["random_seed"] == 41
    assert not calls[0].exists()
    assert [p.parent.name for p in tmp_path.rglob("game.tw-pddl")] == ["trial_gen_41"]


def test_room_size_and_distractors_follow_params() -> None:
    for size in (RoomSize(4, 6, 2), DIFFICULTIES["hard"]):
        closed_starts = 0
        for seed in range(30):
            scene = sample_scene("pick_clean_then_place_in_recep", seed, size)
            assert size.min_receptacles <= len(scene.receptacles) <= size.max_receptacles
            movable = [t for t in scene.things if t.receptacle and t.type != scene.target]
            assert len(movable) == size.distractors
            where = {r.id: r.type for r in scene.receptacles}
            closed_starts += any(is_openable(where[t.receptacle]) for t in scene.things if t.type == scene.target)
        assert 5 <= closed_starts < 30  # the target is sometimes behind a door, sometimes in plain sight


def test_a_twenty_receptacle_room_is_won_by_its_plan(tmp_path: Path) -> None:
    game_file = generate_game("pick_and_place_simple", 3, tmp_path, RoomSize(20, 20, 10))
    game = json.loads(game_file.read_text())
    assert game["pddl_problem"].count(" - receptacle") >= 18  # bedrooms hold at most 19
    assert play(game_file, game["walkthrough"])[1]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"tasks_per_typ": 2}, r"unknown params \['tasks_per_typ'\]"),
        ({"seed": "zero"}, "seed must be an integer"),
        ({"tasks_per_type": 0}, "tasks_per_type must be an integer from 1"),
        ({"task_types": ["pick_and_place"]}, "must name each type once, from: pick_and_place_simple"),
        ({"task_types": []}, "non-empty list"),
        ({"difficulty": "trivial"}, "difficulty must be one of tiny, easy, medium, hard"),
        ({"min_receptacles": 9, "max_receptacles": 5}, r"min_receptacles \(9\) is above max_receptacles \(5\)"),
        ({"max_receptacles": 50}, "max_receptacles must be an integer from 2 to 20"),
        ({"distractors": True}, "distractors must be an integer"),
    ],
)
def test_bad_params_fail_with_a_message_that_says_what_to_fix(params: dict, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        parse_params(params)


def test_params_fill_defaults_and_overrides() -> None:
    params = parse_params({"difficulty": "medium", "distractors": 0, "task_types": ["look_at_obj_in_light"]})
    assert params.size == RoomSize(8, 12, 0)
    assert params.task_types == ("look_at_obj_in_light",)
    assert parse_params({}) == GenParams()


def test_the_default_spec_is_a_small_set_of_every_type() -> None:
    spec = load_spec(str(REPO / "envs" / "alfworld-mini.toml"))
    params = parse_params(spec.params)
    assert spec.env == "alfworld-gen" and 20 <= spec.max_steps <= 40
    assert set(params.task_types) == set(TASK_TYPES) and params.tasks_per_type >= 2
    assert 12 <= len(params.task_types) * params.tasks_per_type <= 24
    assert params.size.max_receptacles <= 8


def test_a_task_set_is_generated_once_then_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRAG_CACHE", str(tmp_path))
    params = {"seed": 4, "tasks_per_type": 2, "task_types": ["pick_and_place_simple"]}
    source = factory("alfworld-gen")(params, REPO / "envs")
    assert isinstance(source, AlfworldTaskSource)
    first = source.tasks()
    assert [t.task_id for t in first] == ["pick_and_place_simple-0", "pick_and_place_simple-1"]
    assert all(Path(t.ref).is_file() and str(tmp_path / "alfworld-gen") in t.ref for t in first)
    assert first[0].seed != first[1].seed
    stamps = {t.ref: Path(t.ref).stat().st_mtime_ns for t in first}

    def no_generation(*args: object, **kwargs: object) -> Path:
        raise AssertionError("the cached set was generated again")

    monkeypatch.setattr(alfworld_gen, "generate_game", no_generation)
    assert task_set(parse_params(params)) == first
    assert {t.ref: Path(t.ref).stat().st_mtime_ns for t in first} == stamps
    with pytest.raises(AssertionError, match="generated again"):
        task_set(parse_params({**params, "seed": 5}))  # other params, other cache entry
