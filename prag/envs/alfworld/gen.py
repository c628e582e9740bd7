"""Family `alfworld-gen`: new ALFWorld games written offline, each won by its planner plan, cached.

A fresh machine has no ALFWorld data (the download needs internet). This family samples household
scenes (`alfworld_scene`), writes them in ALFWorld's standard layout with the domain and grammar
that ship inside the `alfworld` package (`alfworld_pddl`), and keeps a game only once the real
engine has played the planner's plan (`oracle_plan()`) to a win. A task set is generated once
into `cache_dir()/alfworld-gen/<hash of params>` and reused after.

    [params]
    seed = 0
    tasks_per_type = 2
    task_types = ["pick_and_place_simple", ...]   # default: all six
    difficulty = "easy"                           # tiny | easy | medium | hard
    min_receptacles = 4                           # each overrides the difficulty's value
    max_receptacles = 6
    distractors = 2
    goals = "template"                            # or "people": see prag.envs.alfworld.wording
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prag.envs.alfworld.env import TASK_TYPES, AlfworldEnv, AlfworldTaskSource
from prag.envs.alfworld.pddl import game_data, problem_text, task_dir_name, traj_data
from prag.envs.alfworld.scene import RoomSize, sample_scene
from prag.envs.alfworld.wording import instructions, parse_wording
from prag.envs.base import Task
from prag.errors import PragError, SpecError
from prag.paths import cache_dir

# Bump when generated games change for the same params, so that old caches are not reused.
GENERATOR_VERSION = 1
SPLIT = "generated"
MAX_ATTEMPTS = 20
MAX_RECEPTACLES = 20
MAX_DISTRACTORS = 30

DIFFICULTIES: dict[str, RoomSize] = {
    # Rooms of little more than the receptacles the task needs: where a 1.5B local model wins some.
    "tiny": RoomSize(min_receptacles=2, max_receptacles=4, distractors=1),
    "easy": RoomSize(min_receptacles=4, max_receptacles=6, distractors=2),
    "medium": RoomSize(min_receptacles=8, max_receptacles=12, distractors=5),
    "hard": RoomSize(min_receptacles=14, max_receptacles=20, distractors=10),
}


class GenerationError(PragError):
    """No winnable game came out of a run of seeds."""


@dataclass(frozen=True)
class GenParams:
    seed: int = 0
    tasks_per_type: int = 2
    task_types: tuple[str, ...] = TASK_TYPES
    size: RoomSize = DIFFICULTIES["easy"]

    def digest(self) -> str:
        text = json.dumps({"version": GENERATOR_VERSION, **asdict(self)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def from_params(params: dict[str, Any], spec_dir: Path) -> AlfworldTaskSource:
    """The registry's factory: validate `[params]`, generate (or reuse) the games, wrap them."""
    tasks = task_set(parse_params(params))
    wording = parse_wording(params.get("goals"), spec_dir, params.get("seed", 0))
    return AlfworldTaskSource(tasks, instructions(wording, {t.task_id: Path(t.ref).parent for t in tasks}))


def parse_params(params: dict[str, Any]) -> GenParams:
    allowed = {"seed", "tasks_per_type", "task_types", "difficulty", "min_receptacles", "max_receptacles",
               "distractors", "goals"}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise SpecError(f"alfworld-gen: unknown params {unknown}; allowed: {', '.join(sorted(allowed))}")

    def integer(key: str, default: int, low: int, high: int) -> int:
        value = params.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise SpecError(f"alfworld-gen: {key} must be an integer from {low} to {high}, got {value!r}")
        return value

    difficulty = params.get("difficulty", "easy")
    if difficulty not in DIFFICULTIES:
        raise SpecError(f"alfworld-gen: difficulty must be one of {', '.join(DIFFICULTIES)}, got {difficulty!r}")
    preset = DIFFICULTIES[difficulty]
    size = RoomSize(
        min_receptacles=integer("min_receptacles", preset.min_receptacles, 2, MAX_RECEPTACLES),
        max_receptacles=integer("max_receptacles", preset.max_receptacles, 2, MAX_RECEPTACLES),
        distractors=integer("distractors", preset.distractors, 0, MAX_DISTRACTORS),
    )
    if size.min_receptacles > size.max_receptacles:
        raise SpecError(
            f"alfworld-gen: min_receptacles ({size.min_receptacles}) is above max_receptacles "
            f"({size.max_receptacles})"
        )
    task_types = params.get("task_types", list(TASK_TYPES))
    if not isinstance(task_types, list) or not task_types or not all(isinstance(t, str) for t in task_types):
        raise SpecError(f"alfworld-gen: task_types must be a non-empty list of names, got {task_types!r}")
    bad = [t for t in task_types if t not in TASK_TYPES]
    if bad or len(set(task_types)) != len(task_types):
        raise SpecError(
            f"alfworld-gen: task_types {task_types!r} must name each type once, from: {', '.join(TASK_TYPES)}"
        )
    return GenParams(
        seed=integer("seed", 0, 0, 2**31 - 1),
        tasks_per_type=integer("tasks_per_type", 2, 1, 100),
        task_types=tuple(task_types),
        size=size,
    )


def task_set(params: GenParams) -> list[Task]:
    """The tasks of a parameter set: from the cache, or generated (and verified) into it first."""
    root = cache_dir() / "alfworld-gen" / params.digest()
    if not (root / "tasks.json").is_file():
        _generate_set(params, root)
    entries = json.loads((root / "tasks.json").read_text())
    return [Task(e["task_id"], e["task_type"], e["seed"], str(root / e["game"])) for e in entries]


def generate_game(task_type: str, seed: int, out_dir: Path, size: RoomSize = DIFFICULTIES["easy"]) -> Path:
    """Write one game of `task_type` under `out_dir/json_2.1.1/generated/` and return its game file.

    The game is kept only once its planner plan wins it; otherwise the next seed is tried.
    The seed that gave the game is in its directory name and in traj_data's `scene.random_seed`.
    """
    if task_type not in TASK_TYPES:
        raise SpecError(f"unknown ALFWorld task type {task_type!r}: use one of {', '.join(TASK_TYPES)}")
    for attempt in range(seed, seed + MAX_ATTEMPTS):
        scene = sample_scene(task_type, attempt, size)
        trial = f"trial_gen_{attempt}"
        game_dir = out_dir / "json_2.1.1" / SPLIT / task_dir_name(scene, attempt) / trial
        game_dir.mkdir(parents=True, exist_ok=True)
        game_file = game_dir / "game.tw-pddl"
        data = game_data(scene, problem_text(scene, f"plan_{trial}"))
        game_file.write_text(json.dumps(data))
        (game_dir / "traj_data.json").write_text(json.dumps(traj_data(scene, trial, attempt), indent=2))
        plan = _winning_plan(game_file)
        if plan:
            game_file.write_text(json.dumps({**data, "solvable": True, "walkthrough": plan}))
            return game_file
        shutil.rmtree(game_dir.parent)
    raise GenerationError(
        f"no winnable {task_type} game for seeds {seed}..{seed + MAX_ATTEMPTS - 1} with {size}: "
        "try another seed or room size"
    )


def _winning_plan(game_file: Path) -> list[str]:
    """The planner's plan if playing it through the ALFWorld adapter wins the game; [] otherwise."""
    env = AlfworldEnv(Task(game_file.parent.name, "", 0, str(game_file)), game_file)
    try:
        obs = env.reset()
        plan = env.oracle_plan()
        if obs.won or not plan:  # a game won before the first move is no task
            return []
        for command in plan:
            obs = env.step(command)
        return plan if obs.won else []
    finally:
        env.close()


def _seed_for(params: GenParams, task_type: str, index: int) -> int:
    """A stable, well-spread seed per task slot; retries walk on from it (seed + 1, ...)."""
    text = f"{params.seed}:{task_type}:{index}"
    return int(hashlib.sha256(text.encode()).hexdigest()[:7], 16)


def _generate_set(params: GenParams, root: Path) -> None:
    """Generate into a private directory, then move it into place, so a reader never sees half a set."""
    staging = root.with_name(f"{root.name}.tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    entries = []
    for task_type in params.task_types:
        for index in range(params.tasks_per_type):
            game = generate_game(task_type, _seed_for(params, task_type, index), staging, params.size)
            seed = json.loads((game.parent / "traj_data.json").read_text())["scene"]["random_seed"]
            entries.append({
                "task_id": f"{task_type}-{index}",
                "task_type": task_type,
                "seed": seed,
                "game": str(game.relative_to(staging)),
            })
    (staging / "params.json").write_text(json.dumps(asdict(params), indent=2))
    (staging / "tasks.json").write_text(json.dumps(entries, indent=2))
    root.parent.mkdir(parents=True, exist_ok=True)
    try:
        staging.rename(root)
    except OSError:  # another process finished the same set first: theirs is as good as ours
        shutil.rmtree(staging, ignore_errors=True)
        if not (root / "tasks.json").is_file():
            raise
