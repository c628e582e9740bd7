"""Sampling one household scene for an ALFWorld task: the room, its receptacles, where things lie.

A scene is drawn from a seeded `random.Random` only (no set iteration, no global random state),
so the same seed and room size give the same scene in every process. Entity names follow ALFRED's
mangled ids (`Mug_bar__plus_01_dot_20_bar_...`, `loc_bar_3_bar__minus_2_bar_1_bar_45`) because
ALFWorld's demangler turns exactly those into "mug 1", "cabinet 2", ...
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from alfworld.gen import goal_library

from prag.envs.alfworld.rooms import (
    APPLIANCE,
    BASIN_FIXTURE,
    LAMP,
    PROPERTY,
    Room,
    can_contain,
    has_property,
    rooms_for,
)


@dataclass(frozen=True)
class RoomSize:
    """How big a generated room is: a range of receptacle counts and a number of distractors."""

    min_receptacles: int
    max_receptacles: int
    distractors: int


@dataclass(frozen=True)
class Receptacle:
    id: str
    type: str
    location: str


@dataclass(frozen=True)
class Thing:
    """An object instance; `receptacle` is the id of what it lies in/on ("" for a fixture)."""

    id: str
    type: str
    receptacle: str
    location: str


@dataclass(frozen=True)
class Scene:
    task_type: str
    room: str
    target: str  # object type the goal is about
    parent: str  # receptacle type the goal puts it in ("" for look_at_obj_in_light)
    toggle: str  # lamp type for look_at_obj_in_light, else ""
    goal: str  # the goal sentence, from ALFWorld's templates
    receptacles: tuple[Receptacle, ...]
    things: tuple[Thing, ...]
    agent_location: str


def sample_scene(task_type: str, seed: int, size: RoomSize) -> Scene:
    """A scene for `task_type` with a receptacle count drawn from `size` and its distractors.

    The room holds at least the receptacles the task needs (goal receptacle, appliance, where the
    target starts, the lamp's table) and at most what the room type has room for.
    """
    rng = random.Random(seed)
    receptacles = rng.randint(size.min_receptacles, size.max_receptacles)
    room = rng.choice(rooms_for(task_type))
    target, parent = rng.choice(_goal_choices(task_type, room))
    sources = [t for t in room.receptacles if can_contain(t, target) and t != parent]
    source = rng.choice(sources)
    lamp_holder = rng.choice(room.lamp_holders) if task_type == "look_at_obj_in_light" else ""
    required = _unique([parent, APPLIANCE.get(task_type, ""), source, lamp_holder])
    types = _furnish(room, required, receptacles, rng)

    names = _Names(rng)
    recs = tuple(Receptacle(names.receptacle(t), t, names.location()) for t in types)
    things: list[Thing] = []

    def put(obj_type: str, rec: Receptacle) -> None:
        things.append(Thing(names.entity(obj_type), obj_type, rec.id, rec.location))

    n_targets = 2 if task_type == "pick_two_obj_and_place" else 1
    put(target, rng.choice([r for r in recs if r.type == source]))
    for _ in range(n_targets - 1):
        put(target, rng.choice([r for r in recs if r.type in sources]))
    if lamp_holder:
        put(LAMP, rng.choice([r for r in recs if r.type == lamp_holder]))
    for _ in range(size.distractors):
        kinds = [o for o in room.objects if o != target and any(can_contain(r.type, o) for r in recs)]
        if not kinds:
            break
        kind = rng.choice(kinds)
        put(kind, rng.choice([r for r in recs if can_contain(r.type, kind)]))
    # The sink or bathtub itself stands where its basin is, as in ALFRED scenes.
    for rec in recs:
        if rec.type in BASIN_FIXTURE:
            fixture = rec.id.removesuffix(f"_bar_{rec.type}")
            things.append(Thing(fixture, BASIN_FIXTURE[rec.type], "", rec.location))

    template = rng.choice(goal_library.gdict[task_type]["templates"])
    toggle = LAMP if lamp_holder else ""
    goal = template.format(obj=target.lower(), recep=parent.lower(), toggle=toggle.lower(), mrecep="")
    return Scene(task_type, room.name, target, parent, toggle, goal, recs, tuple(things), names.location())


def _goal_choices(task_type: str, room: Room) -> list[tuple[str, str]]:
    """(target type, goal receptacle type) pairs this room can stage, with a start elsewhere."""
    prop = PROPERTY.get(task_type)
    choices = []
    for obj in room.objects:
        if prop and not has_property(obj, prop):
            continue
        holders = [t for t in room.receptacles if can_contain(t, obj)]
        if task_type == "look_at_obj_in_light":
            if holders:
                choices.append((obj, ""))
            continue
        for parent in holders:
            # Putting the object back into the appliance that changed it is legal but pointless.
            if parent != APPLIANCE.get(task_type) and any(h != parent for h in holders):
                choices.append((obj, parent))
    return choices


def _furnish(room: Room, required: list[str], size: int, rng: random.Random) -> list[str]:
    """Receptacle types of the room: the required ones, then random furniture up to `size`."""
    left = dict(room.receptacles)
    types = []
    for t in required:
        types.append(t)
        left[t] -= 1
    while len(types) < size:
        free = [t for t, n in left.items() if n > 0]
        if not free:
            break
        t = rng.choice(free)
        types.append(t)
        left[t] -= 1
    rng.shuffle(types)
    return types


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


class _Names:
    """Fresh ALFRED-style ids: a type and three coordinates; locations on a grid."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def _fresh(self, make: Callable[[], str]) -> str:
        while (name := make()) in self._used:
            pass
        self._used.add(name)
        return name

    def entity(self, kind: str) -> str:
        def make() -> str:
            xyz = (self._rng.uniform(-3, 3), self._rng.uniform(0, 2.5), self._rng.uniform(-3, 3))
            return kind + "".join(f"_bar_{_signed(v)}" for v in xyz)

        return self._fresh(make)

    def receptacle(self, kind: str) -> str:
        fixture = BASIN_FIXTURE.get(kind)
        return f"{self.entity(fixture)}_bar_{kind}" if fixture else self.entity(kind)

    def location(self) -> str:
        def make() -> str:
            rng = self._rng
            parts = (rng.randint(-10, 10), rng.randint(-10, 10), rng.randint(0, 3), rng.choice((-30, 0, 15, 30, 45, 60)))
            return "loc" + "".join(f"_bar_{'_minus_' + str(-p) if p < 0 else p}" for p in parts)

        return self._fresh(make)


def _signed(value: float) -> str:
    """ALFRED's mangling of a coordinate: -1.5 -> "_minus_01_dot_50"."""
    sign = "_minus_" if value < 0 else "_plus_"
    return sign + f"{abs(value):05.2f}".replace(".", "_dot_")
