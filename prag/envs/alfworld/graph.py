"""The scene graph of an ALFWorld step, after P-RAG: where the agent is, then what it sees there.

A pure function of what the agent has been told (its actions and the engine's feedback so far)
and of the engine's facts. The engine knows where everything is; the agent knows only what it
was shown. So a fact enters the graph only when it concerns the receptacle the agent stands at
(and its inside is visible: open, or not a container that closes) or what the agent holds, and
only when every object in it has been named in the feedback the agent read. As the agent is the
only one who moves things, a named object's current place is something the agent has seen.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from prag.envs.base import Triple

Fact = tuple[str, tuple[str, ...]]  # (predicate, argument names), e.g. ("inreceptacle", ("mug 1", "desk 1"))

START = "middle of room"  # where every ALFWorld game starts: "You are in the middle of a room."

# Object states worth a node: the engine's predicate -> the word in the graph.
STATES: dict[str, str] = {
    "ishot": "hot",
    "iscool": "cool",
    "isclean": "clean",
    "issliced": "sliced",
    "istoggled": "on",
}

NOTHING = "Nothing happens."  # the engine's answer to an action it does not admit

# Commands aimed at a receptacle, in both grammars ALFWorld games use ("put X in/on Y", "move X to Y").
_AIMED = [
    re.compile(r"(?:go to|open|close|examine) (?P<r>.+)"),
    re.compile(r"(?:take .+ from|put .+ in/on|move .+ to|(?:heat|cool|clean) .+ with) (?P<r>.+)"),
]


def current_location(history: Sequence[tuple[str, str]], receptacles: set[str]) -> str:
    """The receptacle the agent last went to or acted on, from the (action, feedback) pairs so far.

    Read from the actions, not the facts: several receptacles often share one engine location
    ("loc 12"), and the agent faces the one it went to, or the one it just used there
    ("put apple 1 in/on countertop 2" after "go to coffeemachine 1").
    """
    location = START
    for action, feedback in history:
        if not action or feedback.strip() == NOTHING:
            continue
        for pattern in _AIMED:
            match = pattern.fullmatch(action.strip())
            if match and match.group("r") in receptacles:
                location = match.group("r")
                break
    return location


def named_entities(feedback: Iterable[str], entities: Iterable[str]) -> set[str]:
    """The entities named in the feedback as whole names ("cup 1" is not named by "cup 10")."""
    names = sorted({e for e in entities if e}, key=len, reverse=True)
    if not names:
        return set()
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, names)) + r")(?!\w)")
    return {m.group(1) for text in feedback for m in pattern.finditer(text)}


def scene_graph(history: Sequence[tuple[str, str]], facts: Iterable[Fact]) -> tuple[str, list[Triple]]:
    """The key node (current location) and the triples the agent can see from it.

    `history` holds (action, feedback) pairs from reset on (the reset pair has action "");
    `facts` are the engine's current true facts.
    """
    facts = list(facts)
    location = current_location(history, {args[0] for name, args in facts if name == "receptacleatlocation"})
    named = named_entities((feedback for _, feedback in history), (a for _, args in facts for a in args))

    def holding(predicate: str) -> list[tuple[str, ...]]:
        return [args for name, args in facts if name == predicate]

    openable = {args[0] for args in holding("openable")}
    opened = {args[0] for args in holding("opened")}
    triples: list[Triple] = []
    seen: set[str] = set()

    if location != START:
        if location in openable:
            triples.append((location, "is", "open" if location in opened else "closed"))
        if location not in openable or location in opened:
            relation = "in" if location in openable else "on"
            for obj, receptacle in holding("inreceptacle"):
                if receptacle == location and obj in named:
                    triples.append((obj, relation, location))
                    seen.add(obj)
    for _agent, obj in holding("holds"):
        if obj in named:
            triples.append(("agent", "holds", obj))
            seen.add(obj)
    for inner, outer in holding("inreceptacleobject"):
        if outer in seen and inner in named:
            triples.append((inner, "in", outer))
            seen.add(inner)
    for predicate, state in STATES.items():
        triples.extend((args[0], "is", state) for args in holding(predicate) if args[0] in seen)
    return location, triples
