"""The environment interface every task family implements (after TextWorld's core).

An environment plays one task. `reset()` and `step()` both return an `Observation`;
success is `Observation.won`, the environment's own win signal, never `done`
(which is also true when a step cap is hit). Step caps and action filters are wrappers
(`prag.envs.wrappers`), applied where a spec opens its environments.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from prag.errors import PragError, SpecError

Triple = tuple[str, str, str]

# The most tasks a spec's counts may ask for. Real sets hold a few thousand (ALFWorld's train split
# 3,553 games, ScienceWorld's variations about 7,200); a count past this is a slip, refused before
# a task is built: a grid spec of 10**8 tasks grew to 24 GB before the OOM killer ended it.
MAX_TASKS = 100_000


def check_task_count(where: str, count: int, how: str) -> None:
    """Refuse a spec whose counts ask for more than MAX_TASKS tasks (`how` says how they multiply)."""
    if count > MAX_TASKS:
        raise SpecError(f"{where}: {how} ask for {count:,} tasks, over the {MAX_TASKS:,} a task set may have: "
                        "give smaller counts, or split the set into several specs")


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
    location: str | None = None  # the scene graph's key node: where the agent is
    # The family's score after this step where it keeps one (ScienceWorld: 0-100 with partial
    # credit, below 0 when the task failed); None where a game is only won or not.
    score: float | None = None
    # The episode's step cap (the spec's wrapper sets it; None: uncapped): the agent's mediator
    # weighs how much of the episode is left.
    max_steps: int | None = None


@runtime_checkable
class Environment(Protocol):
    """One task, played from `reset()` by `step(action)` until `done`."""

    task: Task

    @property
    def shortest_path_length(self) -> int | None:
        """Length of a shortest known plan (for SPL), known after `reset()`."""
        ...

    @property
    def goal_sentence(self) -> str | None:
        """The family's own goal sentence, known after `reset()`, where the task tells the goal in
        other words (a spec's `goals`), else None: the store keeps it to tell whether the goal
        was read right; never shown to the agent."""
        ...

    def reset(self) -> Observation: ...

    def step(self, action: str) -> Observation: ...

    def oracle_plan(self) -> list[str]:
        """A winning plan from the start, known after `reset()`: for checks, SPL and oracle
        baselines, never shown to an agent."""
        ...

    def close(self) -> None: ...


class KnowsItsPlan:
    """For environments that learn their oracle's plan at reset: `shortest_path_length` and
    `oracle_plan()` from the plan they keep in `_plan`; `goal_sentence` None unless set."""

    _plan: list[str] | None = None
    # No goal told in other words unless the family says so (a spec's `goals`: prag.envs.goals).
    goal_sentence: str | None = None

    @property
    def shortest_path_length(self) -> int | None:
        return None if self._plan is None else len(self._plan)

    def oracle_plan(self) -> list[str]:
        """The oracle's winning plan from the start (for checks and SPL, never for the agent)."""
        if self._plan is None:
            raise PragError("the plan is known after reset(): call reset() first")
        return list(self._plan)


class TaskSource(Protocol):
    """A family's task set built from a spec: lists its tasks and makes environments."""

    def tasks(self) -> list[Task]: ...

    def make(self, task: Task) -> Environment: ...


def canonical(triples: Iterable[Triple]) -> list[Triple]:
    """A scene graph's triples in their one stored order: sorted, without repeats."""
    return sorted(set(triples))


def scene_text_from_triples(location: str | None, triples: Iterable[Triple]) -> str:
    """The canonical text form of a scene graph: key node first, then one triple per line.

    Sorted so that the same scene always embeds to the same text (and the cache hits).
    """
    head = [f"at: {location}"] if location else []
    return "\n".join(head + [f"{s} {r} {o}" for s, r, o in canonical(triples)])


# The relations of every family's scene graphs (ALFWorld, TextWorld, the grid), to split a text
# line back into its triple; a line with none of them splits at its last two spaces.
_LINE = re.compile(
    r"(?P<s>.+?) (?P<r>in|on|at|is|holds|needs|inside|onTop|inRoom|nextTo|leadsTo|faces|(?:north|south|east|west) of)"
    r" (?P<o>.+)|(?P<s2>.+) (?P<r2>\S+) (?P<o2>\S+)"
)


def scene_from_text(text: str) -> tuple[str | None, list[Triple]]:
    """The key node and triples of a scene graph's text form: only for stores written before
    triples were kept (migration 4); everything else reads the triples themselves."""
    location: str | None = None
    triples: list[Triple] = []
    for line in text.splitlines():
        if line.startswith("at: ") and location is None and not triples:
            location = line[len("at: ") :]
        elif match := _LINE.fullmatch(line):
            s, r, o = (match["s"], match["r"], match["o"]) if match["s"] else (match["s2"], match["r2"], match["o2"])
            triples.append((s, r, o))
    return location, triples
