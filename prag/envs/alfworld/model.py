"""ALFWorld's action model for means-ends search: a PDDL problem for ALFWorld's own domain
(`alfred.pddl`, shipped in the `alfworld` package), written only from what the agent observed.

The goal is read with ALFWorld's own goal templates and becomes ALFWorld's own goal formula
(`alfworld.gen.goal_library`), for the six task types. What kinds of things may hold, heat, cool
or clean which comes from ALFRED's tables (as in generated games); where things are, what is open
and what the agent holds come from `Seen` alone. Each receptacle gets a location of its own (the
agent cannot see which share one), and the agent starts at a location of no receptacle.
Only what the goal can use goes into the problem (things of the goal's kinds, the places they
were seen, the places of the goal's kinds, what the agent holds), which keeps it small and fast.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import alfworld
from alfworld.gen import constants, goal_library

from prag.envs.alfworld.env import TASK_TYPES  # the six task types prag plays
from prag.envs.alfworld.rooms import APPLIANCE, can_contain, has_property, is_openable
from prag.envs.facts import HOLDS, PLACED, STATE, GoalFacts, state_predicate
from prag.envs.model import Problem, Seen, game_name, is_open, pddl_name

AGENT = "agent1"
START = "loc_start"
LAMPS = ("DeskLamp", "FloorLamp")
# Constants the domain's preconditions name: a problem must declare them.
DOMAIN_RTYPES = ("SinkBasin", "Microwave", "Fridge")
DOMAIN_OTYPES = ("Knife", "ButterKnife")
# Words people use for the states the scene graph words so (a goal read in open vocabulary keeps
# the instruction's words: "heat some egg" reads "egg is heat").
STATE_WORDS = {"heat": "hot", "heated": "hot", "warm": "hot", "warmed": "hot", "cooled": "cool", "chill": "cool",
               "chilled": "cool", "cold": "cool", "cleaned": "clean", "wash": "clean", "washed": "clean",
               "rinse": "clean", "rinsed": "clean", "lit": "on"}
# Object states as the scene graph words them -> the domain's predicates.
STATE_FACTS = {"hot": ("isHot",), "cool": ("isCool",), "clean": ("isClean",), "on": ("isToggled", "isOn")}
# How a plan's operators read as commands (alfred.twl2); the put command is the game's grammar.
COMMANDS = {
    "gotolocation": ("go to {3}", 4),
    "openobject": ("open {2}", 3),
    "closeobject": ("close {2}", 3),
    "pickupobject": ("take {2} from {3}", 4),
    "cleanobject": ("clean {3} with {2}", 4),
    "heatobject": ("heat {3} with {2}", 4),
    "coolobject": ("cool {3} with {2}", 4),
    "toggleobject": ("use {2}", 4),
}
# ALFWorld games come in two grammars for putting things (`prag.envs.domain.ALFWORLD`): the
# command, and the pattern telling it in admissible actions. The installed alfworld's own
# grammar, which generated games use, is the first.
PUT_COMMANDS = (("move {o} to {r}", re.compile(r"move .+ to .+")), ("put {o} in/on {r}", re.compile(r"put .+ in/on .+")))


@dataclass(frozen=True)
class Goal:
    """An ALFWorld goal as its template's slots: ALFRED types ("Apple", "Fridge", "DeskLamp")."""

    task_type: str
    obj: str
    recep: str = ""
    toggle: str = ""


def read_goal(text: str) -> Goal | None:
    """The task type and slots of a goal written with ALFWorld's templates, or None."""
    goal = " ".join(text.lower().strip().rstrip(".").split())
    for task_type, pattern in _goal_patterns():
        match = pattern.fullmatch(goal)
        if match is None:
            continue
        slots = {key: _types().get(value) for key, value in match.groupdict().items()}
        if None in slots.values():
            return None
        return Goal(task_type, **slots)  # type: ignore[arg-type]
    return None


def problem(goal_text: str, seen: Seen, admissible: Sequence[str]) -> Problem | None:
    """The planning problem of reaching the goal from what is known, or None when the goal is
    not one of ALFWorld's or a thing it needs was never seen."""
    goal = read_goal(goal_text)
    return None if goal is None else _problem(goal, seen, admissible)


def facts_problem(facts: GoalFacts, seen: Seen, admissible: Sequence[str]) -> Problem | None:
    """The planning problem of a goal given as facts (prag.envs.facts; a goal read in open
    vocabulary), where the facts are one of ALFWorld's goal formulas: a thing in or on a place,
    in a state or not, or two of a kind there; a thing held with a lamp on. None for others."""
    goal = goal_of_facts(facts)
    return None if goal is None else _problem(goal, seen, admissible)


def goal_of_facts(facts: GoalFacts) -> Goal | None:
    """The ALFWorld goal whose formula the facts are (the inverse of prag.envs.alfworld.goals.as_facts)."""
    kind = dict(facts.things)
    types = {v: _types().get(k.replace(" ", "")) for v, k in kind.items()}
    if None in types.values():
        return None
    placed = [f for f in facts.facts if f[0] == PLACED]
    states = {state_predicate(STATE_WORDS.get(f[0][len(STATE):], f[0][len(STATE):])): f[1]
              for f in facts.facts if f[0].startswith(STATE)}
    held = [f[1] for f in facts.facts if f[0] == HOLDS]
    lit = states.get(state_predicate("on"))
    if held and lit is not None and not placed:
        return Goal("look_at_obj_in_light", str(types[held[0]]), toggle=str(types[lit]))
    if len(placed) == 2 and placed[0][2] == placed[1][2] and types[placed[0][1]] == types[placed[1][1]] and not states:
        return Goal("pick_two_obj_and_place", str(types[placed[0][1]]), str(types[placed[0][2]]))
    if len(placed) != 1 or len(states) > 1 or any(thing != placed[0][1] for thing in states.values()):
        return None
    changed = {state_predicate(word): task for task, word in (("pick_clean_then_place_in_recep", "clean"),
                                                             ("pick_heat_then_place_in_recep", "hot"),
                                                             ("pick_cool_then_place_in_recep", "cool"))}
    task = changed.get(next(iter(states), ""), "pick_and_place_simple" if not states else "")
    return Goal(task, str(types[placed[0][1]]), str(types[placed[0][2]])) if task else None


def _problem(goal: Goal, seen: Seen, admissible: Sequence[str]) -> Problem | None:
    things = {name: _types().get(_kind(name)) for name in [*seen.seen, *seen.held]}
    if any(things[t] is None for t in seen.held):
        return None  # hands full of something the model cannot put down
    wanted = {goal.obj, goal.toggle}
    relevant = [t for t, otype in things.items() if otype in wanted or t in seen.held]
    needed = 2 if goal.task_type == "pick_two_obj_and_place" else 1
    if sum(things[t] == goal.obj for t in relevant) < needed:
        return None  # exploration finds it first
    if goal.toggle and not any(things[t] == goal.toggle for t in relevant):
        return None
    held_types = {things[t] for t in seen.held}
    places = [
        p
        for p in seen.places
        if (rtype := _types().get(_kind(p)))
        and (
            p == seen.location
            or p in {seen.seen.get(t) for t in relevant}
            or rtype in (goal.recep, APPLIANCE.get(goal.task_type))
            or any(otype and can_contain(rtype, otype) for otype in held_types - wanted)
        )
    ]
    text = _problem_text(goal, seen, relevant, things, places, _locations(places, seen.location, admissible), admissible)
    return Problem(_domain(), text, _reader(_put_command([*admissible, *seen.actions])))


def _problem_text(
    goal: Goal,
    seen: Seen,
    things: list[str],
    types: dict[str, str | None],
    places: list[str],
    loc: dict[str, str],
    admissible: Sequence[str],
) -> str:
    otypes = sorted({t for t in (types[x] for x in things) if t} | {goal.obj} | set(DOMAIN_OTYPES) | ({goal.toggle} - {""}))
    rtypes = sorted({_types()[_kind(p)] for p in places} | set(DOMAIN_RTYPES) | ({goal.recep} - {""}))
    declared = [f"{AGENT} - agent", f"{START} - location"]
    declared += [f"{t}Type - otype" for t in otypes] + [f"{t}Type - rtype" for t in rtypes]
    declared += [f"{pddl_name(t)} - object" for t in things]
    declared += [f"{pddl_name(p)} - receptacle" for p in places] + [f"{x} - location" for x in sorted(set(loc.values()))]

    at = loc.get(seen.location or "", START)
    facts = [f"(atLocation {AGENT} {at})"]
    for place in places:
        rtype = _types()[_kind(place)]
        facts += [f"(receptacleType {pddl_name(place)} {rtype}Type)", f"(receptacleAtLocation {pddl_name(place)} {loc[place]})"]
        # ALFRED's table says which types open; a place visited and never seen open or closed
        # does not (some real games' cabinets are open shelves). Where the agent stands, the
        # admissible actions say it: "open P" (closed), "close P" (open), neither (no door).
        shown = seen.states.get(place, set()) & {"open", "closed"}
        if admissible and at != START and loc[place] == at:
            openable, opened = f"open {place}" in admissible or f"close {place}" in admissible, f"close {place}" in admissible
        else:
            openable = is_openable(rtype) and bool(shown or place not in seen.visited)
            opened = is_open(seen, place)
        if openable:
            facts.append(f"(openable {pddl_name(place)})")
            if opened:
                facts.append(f"(opened {pddl_name(place)})")
    for rtype in rtypes:
        facts += [f"(canContain {rtype}Type {otype}Type)" for otype in otypes if can_contain(rtype, otype)]
    for thing in things:
        name, otype = pddl_name(thing), str(types[thing])
        facts.append(f"(objectType {name} {otype}Type)")
        facts.append(f"(toggleable {name})" if otype in LAMPS else f"(pickupable {name})")
        for prop, predicate in (("Heatable", "heatable"), ("Coolable", "coolable"), ("Cleanable", "cleanable")):
            if has_property(otype, prop):
                facts.append(f"({predicate} {name})")
        for state in seen.states.get(thing, ()):
            facts += [f"({fact} {name})" for fact in STATE_FACTS.get(state, ())]
        if thing in seen.held:
            facts += [f"(holds {AGENT} {name})", f"(holdsAny {AGENT})"]
        elif seen.seen.get(thing) in places:
            place = seen.seen[thing]
            facts += [f"(inReceptacle {name} {pddl_name(place)})", f"(objectAtLocation {name} {loc[place]})"]
    formula = goal_library.gdict[goal.task_type]["pddl"].format(obj=goal.obj, recep=goal.recep, toggle=goal.toggle)
    return (
        "(define (problem observed) (:domain alfred)\n(:objects\n  "
        + "\n  ".join(declared)
        + ")\n(:init\n  "
        + "\n  ".join(facts)
        + ")\n"
        + formula.replace("#", "-")
    )


def _reader(put: str) -> Callable[[str], str]:
    """Operator -> command, with the game's put command."""

    def command(operator: str) -> str:
        name, *args = operator.split()
        names = [game_name(a) for a in args]
        if name == "putobject":
            return put.format(o=names[2], r=names[3])
        template, arity = COMMANDS[name]
        if len(names) < arity:
            raise ValueError(f"operator {operator!r} has too few arguments")
        return template.format(*names)

    return command


def _put_command(actions: Sequence[str]) -> str:
    """The put command of the game's grammar, as admissible or past actions show it; else the
    installed grammar's (a wrong guess is not admissible when its turn comes: the agent searches
    again, and then the admissible actions show it)."""
    for template, pattern in PUT_COMMANDS:
        if any(pattern.fullmatch(action) for action in actions):
            return template
    return PUT_COMMANDS[0][0]


def _kind(name: str) -> str:
    return re.sub(r" \d+$", "", name)


def _locations(places: list[str], here: str | None, admissible: Sequence[str]) -> dict[str, str]:
    """Place -> its location: one of its own, except that the places the agent may not `go to`
    from where it stands (the admissible actions say so) share the agent's location."""
    loc = {p: _loc(p) for p in places}
    if here in loc and any(a.startswith("go to ") for a in admissible):
        loc.update({p: loc[here] for p in places if f"go to {p}" not in admissible})
    return loc


def _loc(place: str | None) -> str:
    return f"loc_{pddl_name(place or 'start')}"


@cache
def _types() -> dict[str, str]:
    """Lower-case kind as the game writes it -> ALFRED type ("countertop" -> "CounterTop")."""
    return {t.lower(): t for t in [*constants.OBJECTS, *constants.RECEPTACLES]}


@cache
def _domain() -> str:
    return Path(alfworld.ALFRED_PDDL_PATH).read_text()


@cache
def _goal_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """ALFWorld's goal templates of the six task types as patterns with named slots."""
    patterns = []
    for task_type in TASK_TYPES:
        for template in goal_library.gdict[task_type]["templates"]:
            # "in" and "on" are one link word here ("put some mug in cabinet" is read too).
            rx = re.sub(r"\\ (?:in|on)\\ ", r" (?:in|on) ", re.escape(template))
            for slot in ("obj", "recep", "toggle"):
                rx = rx.replace(re.escape("{" + slot + "}"), f"(?P<{slot}>[a-z]+)")
            patterns.append((task_type, re.compile(rx)))
    return patterns
