"""What the agent sees, as a scene graph (after the P-RAG paper) and as words.

Visibility: the agent sees its whole current room (walls block the rest of the house):
the furniture there, the doors out of it and the rooms they lead to, the items in or on
furniture that is open or has no lid, and what it holds. Nothing behind walls or inside
closed furniture is shown.

The scene graph is the paper's relation matrix: for every relation, a boolean matrix over
the visible objects (object_1 x object_2), of which only the true pairs are kept, as
(object_1, relation, object_2) triples. Object states (open, on, filled, dirty, ...) add
(object, "is", state) triples.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from prag.envs.base import Triple
from prag.envs.grid.house import HouseholdEnv
from prag.envs.grid.objects import Furniture, Item, NamedDoor, cell_of


@dataclass(frozen=True)
class Node:
    name: str
    obj: object  # Furniture, Item, NamedDoor, or None for the agent and for rooms
    role: str  # "agent", "room", "furniture", "door", "item"


def _nodes(world: HouseholdEnv) -> list[Node]:
    room = world.agent_room
    doors = world.doors_of(room)
    nodes = [Node("agent", None, "agent"), Node(room, None, "room")]
    nodes += [Node(d.other_side(room), None, "room") for d in doors]
    nodes += [Node(f.name, f, "furniture") for f in world.furniture_in(room)]
    nodes += [Node(d.name, d, "door") for d in doors]
    nodes += [Node(i.name, i, "item") for i in world.visible_items()]
    if world.held is not None:
        nodes.append(Node(world.held.name, world.held, "item"))
    return nodes


def _predicates(world: HouseholdEnv) -> dict[str, Callable[[Node, Node], bool]]:
    room = world.agent_room
    front = world.faced()

    def rests(prep: str) -> Callable[[Node, Node], bool]:
        return lambda a, b: (
            isinstance(a.obj, Item)
            and isinstance(b.obj, Furniture)
            and b.obj.kind.holds == prep
            and a.obj in b.obj.items
        )

    def next_to(a: Node, b: Node) -> bool:
        if not isinstance(a.obj, (Furniture, NamedDoor)) or not isinstance(b.obj, (Furniture, NamedDoor)):
            return False
        (ax, ay), (bx, by) = cell_of(a.obj), cell_of(b.obj)
        return abs(ax - bx) + abs(ay - by) == 1

    return {
        "inside": rests("in"),
        "onTop": rests("on"),
        "inRoom": lambda a, b: b.role == "room" and b.name == room and a.role in ("agent", "furniture", "door"),
        "nextTo": next_to,
        "leadsTo": lambda a, b: isinstance(a.obj, NamedDoor) and b.role == "room" and b.name == a.obj.other_side(room),
        "holds": lambda a, b: a.role == "agent" and b.obj is not None and b.obj is world.held,
        "faces": lambda a, b: a.role == "agent" and b.obj is not None and b.obj is front,
    }


def relation_matrix(world: HouseholdEnv) -> tuple[list[str], list[str], np.ndarray]:
    """(object names, relation names, bool matrix [relation, object_1, object_2])."""
    nodes = _nodes(world)
    predicates = _predicates(world)
    matrix = np.zeros((len(predicates), len(nodes), len(nodes)), dtype=bool)
    for r, test in enumerate(predicates.values()):
        for i, a in enumerate(nodes):
            for j, b in enumerate(nodes):
                matrix[r, i, j] = i != j and test(a, b)
    return [n.name for n in nodes], list(predicates), matrix


def scene_triples(world: HouseholdEnv) -> list[Triple]:
    names, relations, matrix = relation_matrix(world)
    triples = [(names[i], relations[r], names[j]) for r, i, j in np.argwhere(matrix)]
    for node in _nodes(world):
        if isinstance(node.obj, (Furniture, Item, NamedDoor)):
            triples += [(node.name, "is", state) for state in node.obj.states()]
    return triples


def location(world: HouseholdEnv) -> str:
    """The key node: what the agent stands at, else its room."""
    front = world.faced()
    return front.name if front is not None else world.agent_room


def describe(world: HouseholdEnv) -> str:
    """The observation in words: where the agent is, what it sees, what it holds."""
    room = world.agent_room
    front = world.faced()
    lines = [f"You are in the {room}" + (f", in front of {front.name}." if front else ".")]
    things = [_named(f) for f in world.furniture_in(room)]
    things += [f"{d.name} to the {d.other_side(room)} ({d.states()[0]})" for d in world.doors_of(room)]
    lines.append(f"In the {room}, you see {', '.join(things)}.")
    for f in world.furniture_in(room):
        if f.accessible and f.items:
            lines.append(f"{str(f.kind.holds).capitalize()} {f.name}, you see {', '.join(_named(i) for i in f.items)}.")
    held = world.held
    lines.append(f"You are holding {_named(held)}." if held else "You are holding nothing.")
    return "\n".join(lines)


def _named(obj: Furniture | Item) -> str:
    states = obj.states()
    return f"{obj.name} ({', '.join(states)})" if states else obj.name
