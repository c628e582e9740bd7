"""High-level actions for the planner: which are admissible now, and carrying one out.

    go to <furniture | door | room>      walked by Fast Marching (fmm.py) with minigrid's
                                         left / right / forward, ending in front of the target
    pick up <item>                       from the furniture in front, hands empty
    drop <item> in|on <furniture>        into/onto the furniture in front (at most 3 per cell)
    open <x> / close <x>                 the furniture or door in front
    toggle <x>                           the sink in front, on or off
    fill <item> at <sink>                a held watering can, at a running sink
    wash <item> at <sink>                a held dirty dish, at a running sink
    water <plant> with <item>            the plant in front, from a held, filled watering can

An action that cannot be done now is refused with a reason the agent can act on; the world
is then unchanged. Door opening and closing and every walk go through minigrid's own `step`.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from minigrid.core.actions import Actions

from prag.envs.grid import fmm
from prag.envs.grid.house import HouseholdEnv, around
from prag.envs.grid.objects import (
    MAX_PER_CELL,
    CellFullError,
    Furniture,
    Item,
    NamedDoor,
    cell_of,
)

VERBS = (
    "go to X, pick up X, drop X in/on Y, open X, close X, toggle X, "
    "fill X at Y, wash X at Y, water X with Y"
)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (verb, re.compile(rx))
    for verb, rx in [
        ("go", r"go to (?P<a>.+)"),
        ("pick", r"pick up (?P<a>.+)"),
        ("drop", r"(?:drop|put) (?P<a>.+?) (?P<prep>in|on) (?P<b>.+)"),
        ("open", r"open (?P<a>.+)"),
        ("close", r"close (?P<a>.+)"),
        ("toggle", r"toggle (?P<a>.+)"),
        ("fill", r"fill (?P<a>.+?) at (?P<b>.+)"),
        ("wash", r"wash (?P<a>.+?) at (?P<b>.+)"),
        ("water", r"water (?P<a>.+?) with (?P<b>.+)"),
    ]
]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    message: str  # what happened, or why nothing did
    low_level: tuple[str, ...] = ()  # minigrid actions carried out, by name


class Refused(Exception):
    """The action cannot be done now; the message says why."""


def normalise(action: str) -> str:
    return " ".join(action.strip().strip(".!\"'").lower().split())


def admissible(world: HouseholdEnv) -> list[str]:
    """Every high-level action that would succeed in the current state."""
    room = world.agent_room
    reach = fmm.reachable(world.passable(), world.agent_cell)
    front = world.faced()
    out = [f"go to {r}" for r in _neighbour_rooms(world) if any(reach[c] for c in world.interior(r))]
    targets: list[Furniture | NamedDoor] = [*world.furniture_in(room), *world.doors_of(room)]
    for target in targets:
        if target is not front and any(reach[c] for c in _approach(world, target)):
            out.append(f"go to {target.name}")
    if isinstance(front, NamedDoor):
        out.append(f"{'close' if front.is_open else 'open'} {front.name}")
    if isinstance(front, Furniture):
        out += _at_furniture(world, front)
    return out


def _at_furniture(world: HouseholdEnv, f: Furniture) -> list[str]:
    held, out = world.held, []
    if f.kind.openable:
        out.append(f"{'close' if f.is_open else 'open'} {f.name}")
    if f.kind.toggleable:
        out.append(f"toggle {f.name}")
    if f.accessible and held is None:
        out += [f"pick up {i.name}" for i in f.items]
    if held is not None:
        if f.accessible and len(f.items) < MAX_PER_CELL:
            out.append(f"drop {held.name} {f.kind.holds} {f.name}")
        if f.kind.name == "sink" and f.is_on and held.kind.fillable and not held.is_filled:
            out.append(f"fill {held.name} at {f.name}")
        if f.kind.name == "sink" and f.is_on and held.kind.soilable and held.is_dirty:
            out.append(f"wash {held.name} at {f.name}")
        if f.kind.waterable and not f.is_watered and held.kind.fillable and held.is_filled:
            out.append(f"water {f.name} with {held.name}")
    return out


def execute(world: HouseholdEnv, action: str) -> Outcome:
    """Carry out one high-level action; a refused one leaves the world as it was."""
    text = normalise(action)
    for verb, pattern in _PATTERNS:
        match = pattern.fullmatch(text)
        if match:
            try:
                return _HANDLERS[verb](world, **match.groupdict())
            except Refused as why:
                return Outcome(False, str(why))
    return Outcome(False, f"{action!r} is not an action here; the actions are: {VERBS}")


# ---------------------------------------------------------------------------- go to
def _go(world: HouseholdEnv, a: str) -> Outcome:
    room = world.agent_room
    if a == room:
        raise Refused(f"you are already in the {room}")
    if a in world.rooms:
        if a not in _neighbour_rooms(world):
            raise Refused(f"no door of the {room} leads to the {a}")
        return _walk(world, a, world.interior(a), face=None, arrival=f"You walk into the {a}.")
    target = _visible(world, a)
    if isinstance(target, Item):
        where = world.holder_of(target)
        raise Refused(
            f"you are holding {a}" if where is None else f"{a} is {where.kind.holds} {where.name}: go to {where.name}"
        )
    if target is world.faced():
        return Outcome(True, f"You are already at {a}. {_look_at(target, room)}")
    return _walk(world, a, _approach(world, target), face=cell_of(target), arrival=f"You arrive at {a}. {_look_at(target, room)}")


def _walk(world: HouseholdEnv, name: str, targets: list[fmm.Cell], face: fmm.Cell | None, arrival: str) -> Outcome:
    route = fmm.navigate(world.passable(), world.agent_cell, world.agent_dir, targets, face)
    if route is None:
        closed = [d.name for d in world.doors_of(world.agent_room) if not d.is_open]
        hint = f" ({', '.join(closed)} {'is' if len(closed) == 1 else 'are'} closed)" if closed else ""
        raise Refused(f"you cannot reach {name} from here: no open way leads there{hint}")
    for step in route.actions:
        world.step(step)
    if world.agent_cell != route.path[-1]:  # minigrid refused a move the field allowed
        raise RuntimeError(f"walk to {name} ended at {world.agent_cell}, not {route.path[-1]}")
    return Outcome(True, arrival.strip(), tuple(a.name for a in route.actions))


def _approach(world: HouseholdEnv, target: Furniture | NamedDoor) -> list[fmm.Cell]:
    """Floor cells of the agent's room from which the target is in front of the agent."""
    room = world.agent_room
    return [c for c in around(cell_of(target)) if world.room_at(c) == room]


def _neighbour_rooms(world: HouseholdEnv) -> list[str]:
    room = world.agent_room
    return [d.other_side(room) for d in world.doors_of(room)]


def _visible(world: HouseholdEnv, name: str) -> Furniture | NamedDoor | Item:
    room = world.agent_room
    seen: list[Furniture | NamedDoor | Item] = [*world.furniture_in(room), *world.doors_of(room), *world.visible_items()]
    if world.held is not None:
        seen.append(world.held)
    for obj in seen:
        if obj.name == name:
            return obj
    raise Refused(f"you see no {name} here")


def _look_at(target: Furniture | NamedDoor, room: str) -> str:
    if isinstance(target, NamedDoor):
        return f"It leads to the {target.other_side(room)} and is {target.states()[0]}."
    if target.kind.holds and not target.accessible:
        return f"{target.name} is closed."
    parts = []
    if target.kind.holds:
        things = ", ".join(i.name for i in target.items) or "nothing"
        parts.append(f"{target.kind.holds.capitalize()} {target.name}, you see {things}.")
    if target.kind.toggleable or target.kind.waterable:
        parts.append(f"{target.name} is {', '.join(target.states())}.")
    return " ".join(parts)


# ---------------------------------------------------------------------------- manipulation
def _front(world: HouseholdEnv, name: str) -> Furniture | NamedDoor:
    target = _visible(world, name)
    if isinstance(target, Item):
        raise Refused(f"{name} is not something to do that to")
    if target is not world.faced():
        raise Refused(f"{name} is not in front of you: go to {name} first")
    return target


def _holding(world: HouseholdEnv, name: str) -> Item:
    if world.held is None or world.held.name != name:
        now = f"you are holding {world.held.name}" if world.held else "your hands are empty"
        raise Refused(f"you are not holding {name} ({now})")
    return world.held


def _pick(world: HouseholdEnv, a: str) -> Outcome:
    item = _visible(world, a)
    if not isinstance(item, Item):
        raise Refused(f"{a} cannot be picked up")
    if item is world.held:
        raise Refused(f"you are already holding {a}")
    holder = world.holder_of(item)
    assert holder is not None
    if holder is not world.faced():
        raise Refused(f"{a} is {holder.kind.holds} {holder.name}: go to {holder.name} first")
    if world.held is not None:
        raise Refused(f"your hands are full: you are holding {world.held.name}")
    holder.items.remove(item)
    world.held = item
    return Outcome(True, f"You pick up {a} from {holder.name}.")


def _drop(world: HouseholdEnv, a: str, prep: str, b: str) -> Outcome:
    item = _holding(world, a)
    target = _front(world, b)
    if isinstance(target, NamedDoor) or target.kind.holds is None:
        raise Refused(f"you cannot put things in or on {b}")
    if prep != target.kind.holds:
        raise Refused(f"things go {target.kind.holds} {b}, not {prep} it")
    if not target.accessible:
        raise Refused(f"{b} is closed: open it first")
    try:
        target.add(item)
    except CellFullError as full:
        raise Refused(f"{full}; take something out first or use another place") from None
    world.held = None
    return Outcome(True, f"You put {a} {prep} {b}.")


def _open_close(world: HouseholdEnv, a: str, want_open: bool) -> Outcome:
    verb = "open" if want_open else "close"
    target = _front(world, a)
    if isinstance(target, NamedDoor):
        if target.is_open == want_open:
            raise Refused(f"{a} is already {verb if want_open else 'closed'}")
        world.step(Actions.toggle)  # minigrid's own door toggle
        return Outcome(True, f"You {verb} {a}.", (Actions.toggle.name,))
    if not target.kind.openable:
        raise Refused(f"{a} cannot be opened or closed")
    if target.is_open == want_open:
        raise Refused(f"{a} is already {'open' if want_open else 'closed'}")
    target.is_open = want_open
    if want_open:
        things = ", ".join(i.name for i in target.items) or "nothing"
        return Outcome(True, f"You open {a}. In it, you see {things}.")
    return Outcome(True, f"You close {a}.")


def _toggle(world: HouseholdEnv, a: str) -> Outcome:
    target = _front(world, a)
    if isinstance(target, NamedDoor) or not target.kind.toggleable:
        raise Refused(f"{a} cannot be toggled")
    target.is_on = not target.is_on
    return Outcome(True, f"You turn {a} {'on' if target.is_on else 'off'}.")


def _running_sink(world: HouseholdEnv, b: str) -> Furniture:
    sink = _front(world, b)
    if isinstance(sink, NamedDoor) or sink.kind.name != "sink":
        raise Refused(f"{b} is not a sink")
    if not sink.is_on:
        raise Refused(f"{b} is off: toggle it on first")
    return sink


def _fill(world: HouseholdEnv, a: str, b: str) -> Outcome:
    item = _holding(world, a)
    _running_sink(world, b)
    if not item.kind.fillable:
        raise Refused(f"{a} cannot be filled")
    if item.is_filled:
        raise Refused(f"{a} is already filled")
    item.is_filled = True
    return Outcome(True, f"You fill {a} with water at {b}.")


def _wash(world: HouseholdEnv, a: str, b: str) -> Outcome:
    item = _holding(world, a)
    _running_sink(world, b)
    if not item.kind.soilable:
        raise Refused(f"{a} does not need washing")
    if not item.is_dirty:
        raise Refused(f"{a} is already clean")
    item.is_dirty = False
    return Outcome(True, f"You wash {a} at {b}; it is clean now.")


def _water(world: HouseholdEnv, a: str, b: str) -> Outcome:
    plant = _front(world, a)
    can = _holding(world, b)
    if isinstance(plant, NamedDoor) or not plant.kind.waterable:
        raise Refused(f"{a} does not need water")
    if not can.kind.fillable or not can.is_filled:
        raise Refused(f"{b} has no water in it: fill it at a sink first")
    if plant.is_watered:
        raise Refused(f"{a} is already watered")
    plant.is_watered, can.is_filled = True, False
    return Outcome(True, f"You water {a} with {b}; {b} is empty now.")


_HANDLERS: dict[str, Callable[..., Outcome]] = {
    "go": _go,
    "pick": _pick,
    "drop": _drop,
    "open": lambda world, a: _open_close(world, a, True),
    "close": lambda world, a: _open_close(world, a, False),
    "toggle": _toggle,
    "fill": _fill,
    "wash": _wash,
    "water": _water,
}
