"""The environment interface every task family implements (after TextWorld's core).

An environment plays one task. `reset()` and `step()` both return an `Observation`;
success is `Observation.won`, the environment's own win signal, never `done`
(which is also true when a step cap is hit).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Triple = tuple[str, str, str]


@dataclass(frozen=True)
class Task:
    """One playable task of a task set: what the runner schedules and the store records."""

    task_id: str  # stable within its task set, e.g. "pick_and_place_simple-3"
    task_type: str  # e.g. "pick_heat_then_place_in_recep"
    seed: int
    ref: str = ""  # where the task comes from: a game file, generator params, ...


@dataclass
class Observation:
    """What the agent sees after reset or a step."""

    goal: str
    text: str
    admissible: list[str]
    scene_triples: list[Triple]
    scene_text: str  # the scene graph as the text that gets embedded
    won: bool = False
    done: bool = False
    infos: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Environment(Protocol):
    """One task, played from `reset()` by `step(action)` until `done`."""

    task: Task

    @property
    def shortest_path_length(self) -> int | None:
        """Length of a shortest known plan (for SPL), known after `reset()`."""
        ...

    def reset(self) -> Observation: ...

    def step(self, action: str) -> Observation: ...

    def close(self) -> None: ...


class TaskSource(Protocol):
    """A family's task set built from a spec: lists its tasks and makes environments."""

    def tasks(self) -> list[Task]: ...

    def make(self, task: Task) -> Environment: ...


def scene_text_from_triples(location: str | None, triples: list[Triple]) -> str:
    """The canonical text form of a scene graph: key node first, then one triple per line.

    Sorted so that the same scene always embeds to the same text (and the cache hits).
    """
    head = [f"at: {location}"] if location else []
    return "\n".join(head + [f"{s} {r} {o}" for s, r, o in sorted(set(triples))])


_PLACED = re.compile(r"(?P<thing>.+?) (?P<relation>in|on) (?P<place>.+)")


def placed_in_scene(scene: str) -> list[tuple[str, str, str]]:
    """The (thing, "in" or "on", place) lines of a scene graph's text form, in order.

    Read back from the stored text, so past episodes of any environment can say where things were.
    """
    return [
        (match["thing"], match["relation"], match["place"])
        for line in scene.splitlines()
        if (match := _PLACED.fullmatch(line)) and match["thing"] != "agent"
    ]
