"""The prag adapter of the household grid world: `GridEnv` and the `grid` task family.

A task's type is a registered grid task name, its seed picks the house. The agent plays
high-level actions (actions.py); the episode is won when the task's goal predicate holds,
never merely because it is done.

Spec params (`env = "grid"`):
    tasks    = ["put_away_groceries", ...]   registered task names (default: all)
    per_task = 3                             instances per task (seeds seed, seed+1, ...)
    seed     = 0
    size     = 6                             room size in cells, walls included (5..12)
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prag.envs.base import (
    check_task_count,
    Environment,
    KnowsItsPlan,
    Observation,
    Task,
    scene_text_from_triples,
)
from prag.envs.grid import actions, scene
from prag.envs.grid.solver import find_plan
from prag.envs.grid.tasks import TASKS
from prag.errors import PragError, SpecError

DEFAULT_ROOM_SIZE = 6
ROOM_SIZES = range(5, 13)


class GridEnv(KnowsItsPlan):
    """One household grid task, played by high-level actions (implements `Environment`)."""

    goal_sentence: str | None = None  # its goals are told in its own words

    def __init__(self, task: Task, room_size: int = DEFAULT_ROOM_SIZE) -> None:
        if task.task_type not in TASKS:
            raise SpecError(f"unknown grid task {task.task_type!r}; known: {', '.join(TASKS)}")
        if room_size not in ROOM_SIZES:
            raise SpecError(f"grid room size must be {ROOM_SIZES.start}..{ROOM_SIZES.stop - 1}, got {room_size}")
        self.task = task
        self.room_size = room_size
        self._cls = TASKS[task.task_type]
        self.world = self._cls(room_size=room_size)
        self._plan: list[str] | None = None
        self._steps = 0
        self._over = False


    def reset(self) -> Observation:
        self.world.reset(seed=self.task.seed)
        if self._plan is None:
            self._plan = find_plan(self._cls, self.task.seed, self.room_size)
        self._steps = 0
        self._over = False
        return self._observe("", {"valid": True, "low_level": []})

    def step(self, action: str) -> Observation:
        if self._over:
            raise PragError("the episode is over: call reset() to play again")
        outcome = actions.execute(self.world, action)
        self._steps += 1
        feedback = outcome.message if outcome.ok else f"Nothing happens: {outcome.message}."
        infos = {"valid": outcome.ok, "low_level": list(outcome.low_level)}
        if not outcome.ok:
            infos["reason"] = outcome.message
        return self._observe(feedback, infos)

    def close(self) -> None:
        self.world.close()

    def _observe(self, feedback: str, infos: dict[str, Any]) -> Observation:
        won = self.world.goal_reached()
        self._over = won
        description = scene.describe(self.world)
        triples = scene.scene_triples(self.world)
        location = scene.location(self.world)
        infos.update(steps=self._steps, room=self.world.agent_room, agent_pos=self.world.agent_cell)
        return Observation(
            goal=self.world.goal_text(),
            text=f"{feedback}\n{description}" if feedback else description,
            admissible=actions.admissible(self.world),
            scene_triples=triples,
            scene_text=scene_text_from_triples(location, triples),
            won=won,
            done=self._over,
            infos=infos,
            location=location,
        )


class GridTaskSource:
    """The tasks of a `grid` spec and the environments that play them."""

    def __init__(self, names: list[str], per_task: int, seed: int, room_size: int) -> None:
        self.room_size = room_size
        self._tasks = [
            Task(
                task_id=f"{name}-{i}",
                task_type=name,
                seed=seed + i,
                ref=f"grid:{name}?seed={seed + i}&size={room_size}",
            )
            for name in names
            for i in range(per_task)
        ]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def make(self, task: Task) -> Environment:
        return GridEnv(task, room_size=self.room_size)


def from_params(params: dict[str, Any], spec_dir: Path) -> GridTaskSource:
    """The `grid` family's factory: validates a spec's [params] table."""
    allowed = {"tasks", "per_task", "seed", "size"}
    unknown = set(params) - allowed
    if unknown:
        raise SpecError(f"grid: unknown params {sorted(unknown)}; allowed: {', '.join(sorted(allowed))}")
    names = params.get("tasks", list(TASKS))
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise SpecError(f"grid: 'tasks' must be a non-empty list of task names, got {names!r}")
    bad = [n for n in names if n not in TASKS]
    if bad:
        raise SpecError(f"grid: unknown tasks {bad}; known: {', '.join(TASKS)}")
    per_task = _int(params, "per_task", 3, minimum=1)
    check_task_count("grid", len(names) * per_task, f"'tasks' ({len(names)}) × 'per_task' ({per_task})")
    seed = _int(params, "seed", 0, minimum=0)
    size = _int(params, "size", DEFAULT_ROOM_SIZE, minimum=ROOM_SIZES.start)
    if size not in ROOM_SIZES:
        raise SpecError(f"grid: 'size' (room size in cells) must be {ROOM_SIZES.start}..{ROOM_SIZES.stop - 1}, got {size}")
    return GridTaskSource(names, per_task, seed, size)


def _int(params: dict[str, Any], key: str, default: int, minimum: int) -> int:
    value = params.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise SpecError(f"grid: {key!r} must be an integer >= {minimum}, got {value!r}")
    return value
