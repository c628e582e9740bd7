"""The grid world's action model for means-ends search: its rules (actions.py) as a PDDL domain,
and a problem written only from what the agent observed.

The world has no PDDL of its own, so the domain below says its rules: walking into a next room
through an open door, to furniture or a door of the agent's room; opening and closing; picking
up from open furniture with empty hands, dropping in/on open furniture; toggling a sink; filling
or washing a held thing at a running sink; watering a plant from a filled can. What the agent
knows (`Seen`) gives the rooms, which doors join them, where furniture and things are and their
states; what kinds of furniture hold, open or toggle comes from the world's kind tables. A
cell's limit of three things is left out (the planner never fills one: a task's things fit).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prag.envs.grid.objects import FURNITURE, ITEMS
from prag.envs.model import Problem, Seen, game_name, is_open, pddl_name

DOMAIN = """
(define (domain grid-household)
 (:requirements :adl :typing)
 (:types room item kind spot - object place door centre - spot)
 (:predicates
  (agent-in ?r - room) (at ?s - spot) (spot-in ?s - spot ?r - room) (centre-of ?c - centre ?r - room)
  (joins ?d - door ?a - room ?b - room) (door-open ?d - door)
  (openable ?p - place) (open ?p - place) (holder ?p - place)
  (in ?i - item ?p - place) (holding ?i - item) (hand-empty)
  (sink ?p - place) (running ?p - place) (fillable ?i - item) (filled ?i - item) (dirty ?i - item)
  (waterable ?p - place) (watered ?p - place))
 (:action go-room :parameters (?a - room ?b - room ?d - door ?s - spot ?c - centre)
  :precondition (and (agent-in ?a) (at ?s) (spot-in ?s ?a) (joins ?d ?a ?b) (door-open ?d) (centre-of ?c ?b))
  :effect (and (not (agent-in ?a)) (agent-in ?b) (not (at ?s)) (at ?c)))
 (:action go-to :parameters (?s - spot ?t - spot ?r - room)
  :precondition (and (agent-in ?r) (at ?s) (spot-in ?s ?r) (spot-in ?t ?r) (not (at ?t)) (not (centre-of ?t ?r)))
  :effect (and (not (at ?s)) (at ?t)))
 (:action open-door :parameters (?d - door)
  :precondition (and (at ?d) (not (door-open ?d))) :effect (door-open ?d))
 (:action open :parameters (?p - place)
  :precondition (and (at ?p) (openable ?p) (not (open ?p))) :effect (open ?p))
 (:action close :parameters (?p - place)
  :precondition (and (at ?p) (openable ?p) (open ?p)) :effect (not (open ?p)))
 (:action pick-up :parameters (?i - item ?p - place)
  :precondition (and (at ?p) (in ?i ?p) (hand-empty) (or (not (openable ?p)) (open ?p)))
  :effect (and (not (in ?i ?p)) (holding ?i) (not (hand-empty))))
 (:action drop :parameters (?i - item ?p - place)
  :precondition (and (at ?p) (holding ?i) (holder ?p) (or (not (openable ?p)) (open ?p)))
  :effect (and (in ?i ?p) (not (holding ?i)) (hand-empty)))
 (:action toggle-on :parameters (?p - place)
  :precondition (and (at ?p) (sink ?p) (not (running ?p))) :effect (running ?p))
 (:action toggle-off :parameters (?p - place)
  :precondition (and (at ?p) (sink ?p) (running ?p)) :effect (not (running ?p)))
 (:action fill :parameters (?i - item ?p - place)
  :precondition (and (at ?p) (sink ?p) (running ?p) (holding ?i) (fillable ?i) (not (filled ?i)))
  :effect (filled ?i))
 (:action wash :parameters (?i - item ?p - place)
  :precondition (and (at ?p) (sink ?p) (running ?p) (holding ?i) (dirty ?i)) :effect (not (dirty ?i)))
 (:action water :parameters (?p - place ?i - item)
  :precondition (and (at ?p) (waterable ?p) (not (watered ?p)) (holding ?i) (filled ?i))
  :effect (and (watered ?p) (not (filled ?i))))
)
"""

# How a plan's operators read as the world's commands (actions.py); "drop" is filled in below.
COMMANDS: dict[str, str] = {
    "go-room": "go to {1}",
    "go-to": "go to {1}",
    "open-door": "open {0}",
    "open": "open {0}",
    "close": "close {0}",
    "pick-up": "pick up {0}",
    "toggle-on": "toggle {0}",
    "toggle-off": "toggle {0}",
    "fill": "fill {0} at {1}",
    "wash": "wash {0} at {1}",
    "water": "water {0} with {1}",
}


@dataclass(frozen=True)
class Goal:
    """A grid task's goal: kinds of things to put in/on a kind of furniture, and the rest it asks."""

    things: tuple[str, ...] = ()  # kinds of thing that go into `into`
    into: str = ""  # kind of furniture
    close: bool = False  # `into` closed at the end
    only: bool = False  # nothing else in `into`
    clean: bool = False  # the things washed
    plants: int = 0  # how many plants to water
    sink_off: bool = False


_LIST = r"(?P<things>.+)"
_GOALS: list[tuple[re.Pattern[str], dict[str, bool]]] = [
    (re.compile(rf"put away the groceries: put {_LIST} in the (?P<into>\w+), then close the (?P=into)"), {"close": True}),
    (re.compile(rf"throw away the trash: put {_LIST} in the (?P<into>\w+), and nothing else"), {"only": True}),
    (re.compile(rf"collect the toys: put {_LIST} in the (?P<into>\w+)"), {}),
    (
        re.compile(rf"wash the dishes: clean {_LIST} at the sink, put them in the (?P<into>\w+), then turn the sink off"),
        {"clean": True, "sink_off": True},
    ),
    (
        re.compile(r"water (?:the plant|all (?P<plants>\d+) plants) with the watering can, filled at the sink, "
                   r"then turn the sink off"),
        {"sink_off": True},
    ),
]


def read_goal(text: str) -> Goal | None:
    """A grid task's goal from its sentence (tasks/*.py write them), or None."""
    goal = " ".join(text.lower().strip().rstrip(".").split())
    for pattern, flags in _GOALS:
        match = pattern.fullmatch(goal)
        if match is None:
            continue
        slots = match.groupdict()
        things = tuple(
            re.sub(r"^(?:the|a|an|some) ", "", kind.strip())
            for kind in re.split(r",\s*|\s+and\s+", slots.get("things") or "")
            if kind.strip()
        )
        plants = int(slots["plants"]) if slots.get("plants") else (0 if things else 1)
        return Goal(things, slots.get("into") or "", plants=plants, **flags)
    return None


def problem(goal_text: str, seen: Seen, admissible: Sequence[str]) -> Problem | None:
    """The planning problem of reaching the goal from what is known, or None when the goal is not
    a grid task's or something it needs (a thing, the furniture, enough plants, a sink) was never seen."""
    goal = read_goal(goal_text)
    if goal is None:
        return None
    furniture = [p for p in seen.places if _kind(p) in FURNITURE and p in seen.room_of]
    # The things the goal can use: those it names, the can, what is held, what lies in the goal's
    # furniture (a trash goal wants nothing else there). Others stay where they are.
    wanted = set(goal.things) | ({"watering can"} if goal.plants else set())
    items = [
        i for i in [*seen.seen, *sorted(seen.held)]
        if _kind(i) in wanted or i in seen.held or _kind(seen.seen.get(i, "")) == goal.into
    ]
    rooms = sorted({seen.room_of[p] for p in seen.room_of} | {r for r in seen.places if _kind(r) == r})
    kinds_seen = {_kind(i) for i in items}
    places_of = [_kind(p) for p in furniture]
    if any(k not in kinds_seen for k in goal.things) or (goal.into and goal.into not in places_of):
        return None
    needs_water = goal.plants > 0
    if needs_water and (places_of.count("plant") < goal.plants or "watering can" not in kinds_seen):
        return None
    if (goal.clean or needs_water) and "sink" not in places_of:
        return None
    room = _room(seen, rooms)
    if room is None or any(_kind(i) not in ITEMS for i in items):
        return None
    text = _problem_text(goal, seen, room, rooms, furniture, items)
    return Problem(DOMAIN, text, _reader())


def _problem_text(goal: Goal, seen: Seen, room: str, rooms: list[str], furniture: list[str], items: list[str]) -> str:
    doors = sorted({d for d in seen.room_of if _kind(d) == "door"} | set(seen.ways.values()))
    declared = [f"{pddl_name(r)} - room" for r in rooms] + [f"{_centre(r)} - centre" for r in rooms]
    declared += [f"{pddl_name(p)} - place" for p in furniture] + [f"{pddl_name(d)} - door" for d in doors]
    declared += [f"{pddl_name(i)} - item" for i in items]

    at = seen.location if seen.location in furniture or seen.location in doors else None
    facts = [f"(agent-in {pddl_name(room)})", f"(at {pddl_name(at) if at else _centre(room)})"]
    facts += [f"({fact} {_centre(r)} {pddl_name(r)})" for r in rooms for fact in ("centre-of", "spot-in")]
    if not seen.held:
        facts.append("(hand-empty)")
    for place in furniture:
        kind, name = FURNITURE[_kind(place)], pddl_name(place)
        states = seen.states.get(place, set())
        facts.append(f"(spot-in {name} {pddl_name(seen.room_of[place])})")
        facts += [f"({fact} {name})" for fact, holds in (
            ("holder", kind.holds is not None),
            ("openable", kind.openable),
            ("open", kind.openable and is_open(seen, place)),
            ("sink", kind.name == "sink"),
            ("running", kind.toggleable and "on" in states),
            ("waterable", kind.waterable),
            ("watered", kind.waterable and "watered" in states),
        ) if holds]
    for door in doors:
        # The rooms a door joins: the one it was seen in, and those it was seen leading to.
        joined = list(dict.fromkeys([
            *([seen.room_of[door]] if door in seen.room_of else []),
            *sorted(r for r, way in seen.ways.items() if way == door and r in rooms),
        ]))
        facts += [f"(spot-in {pddl_name(door)} {pddl_name(r)})" for r in joined]
        if len(joined) == 2:
            a, b = (pddl_name(r) for r in joined)
            facts += [f"(joins {pddl_name(door)} {a} {b})", f"(joins {pddl_name(door)} {b} {a})"]
        if is_open(seen, door):
            facts.append(f"(door-open {pddl_name(door)})")
    for item in items:
        kind, name = ITEMS[_kind(item)], pddl_name(item)
        states = seen.states.get(item, set())
        if item in seen.held:
            facts.append(f"(holding {name})")
        elif seen.seen.get(item) in furniture:
            facts.append(f"(in {name} {pddl_name(seen.seen[item])})")
        facts += [f"({fact} {name})" for fact, holds in (
            ("fillable", kind.fillable),
            ("filled", kind.fillable and "filled" in states),
            ("dirty", kind.soilable and "dirty" in states),
        ) if holds]
    return (
        "(define (problem observed) (:domain grid-household)\n(:objects\n  "
        + "\n  ".join(declared)
        + ")\n(:init\n  "
        + "\n  ".join(facts)
        + ")\n(:goal (and "
        + " ".join(_goal_facts(goal, furniture, items))
        + ")))"
    )


def _goal_facts(goal: Goal, furniture: list[str], items: list[str]) -> list[str]:
    """The goal as facts about the things and furniture seen (one of several of a kind will do)."""
    into = [pddl_name(p) for p in furniture if _kind(p) == goal.into]
    facts = []
    for kind in goal.things:
        wash = goal.clean
        facts.append(_any([
            f"(and (in {pddl_name(i)} {p}) (not (dirty {pddl_name(i)})))" if wash else f"(in {pddl_name(i)} {p})"
            for i in items if _kind(i) == kind for p in into
        ]))
    if goal.close:
        facts += [f"(not (open {p}))" for p in into]
    if goal.only:
        facts += [f"(not (in {pddl_name(i)} {p}))" for i in items if _kind(i) not in goal.things for p in into]
    if goal.plants:
        facts += [f"(watered {pddl_name(p)})" for p in furniture if _kind(p) == "plant"]
    if goal.sink_off:
        facts += [f"(not (running {pddl_name(p)}))" for p in furniture if _kind(p) == "sink"]
    return facts


def _any(facts: list[str]) -> str:
    return facts[0] if len(facts) == 1 else "(or " + " ".join(facts) + ")"


def _reader() -> Callable[[str], str]:
    """Operator -> command; a drop says "in" or "on" as the furniture's kind holds things."""

    def command(operator: str) -> str:
        name, *args = operator.split()
        names = [game_name(a) for a in args]
        if name == "drop":
            return f"drop {names[0]} {FURNITURE[_kind(names[1])].holds} {names[1]}"
        return COMMANDS[name].format(*names)

    return command


def _room(seen: Seen, rooms: list[str]) -> str | None:
    """The room the agent is in: where it stands, or the room of the furniture or door it faces."""
    if seen.location in rooms:
        return seen.location
    return seen.room_of.get(seen.location or "")


def _kind(name: str) -> str:
    """The kind of a name: without its number ("banana peel 1" -> "banana peel"); a room is its own."""
    return re.sub(r" \d+$", "", name)


def _centre(room: str) -> str:
    """The spot in the middle of a room, where the agent stands after walking in."""
    return "centre_" + pddl_name(room)
