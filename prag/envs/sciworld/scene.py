"""ScienceWorld's state as prag's scene graph: what the agent can see, named as its actions name it.

The simulator's object tree holds the whole house; the agent sees the room it is in, what stands
there, what is in open containers there (recursively), and its inventory. Each thing is named by
the words the admissible actions use for it ("orange in bowl", "cup containing water"), read from
the simulator's action-object combinations, so that a triple's names can be acted on as written.
Doors, which the tree does not hold, come from the room's look text ("A door to the kitchen (that
is open)").

Relations: (thing, "in", holder) for a thing in a container or in the room; (thing, "in",
"inventory") for a thing held; (thing, "is", state) for open/closed, on/off, liquid/gas (a solid
says so where the house could melt it), alive/dead, focused; (thing, "isa", its own name) where
the actions' words do not start with it ("substance in toilet" isa "water"); (door, "leadsTo",
room) for a door out of the room.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from prag.envs.base import Triple

INVENTORY = "inventory"
KIND = "isa"
FOCUS = "focus on "
_DOOR = re.compile(r"A door to the (?P<room>.+?) \(that is (?P<state>open|closed)\)")
_DOOR_NAME = re.compile(r"(?:.+ )?door(?: to .+)?")  # "door", "bedroom door", "living room door", "door to kitchen"
# Electrical terminals are parts of things, not things: they stay out of the scene (the
# admissible actions still name them).
_PART = re.compile(r"terminal \d+|anode|cathode")
_THING_PART = re.compile(rf"(?P<thing>.+?) (?P<part>{_PART.pattern})")
# A solid shows its state where the house's heat sources could change it (ice, chocolate, wax).
_MELTS_BELOW_C = 300.0


def part_first(name: str) -> str:
    """A part as "part in thing": the simulator calls one bulb's cathode "cathode in buzzer" and
    another's "blue light bulb cathode", in the same list of actions; one wording lets a step
    learned on one thing's part be taken on another's."""
    match = _THING_PART.fullmatch(name)
    return f"{match['part']} in {match['thing']}" if match else name


def referents(combos: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Object id -> the words the actions name it by, read from the "focus on X" combinations
    (every object the agent may act on can be focused on)."""
    names: dict[str, str] = {}
    for combo in combos:
        action, ids = combo["action"], combo["obj_ids"]
        if action.startswith(FOCUS) and len(ids) == 1:
            names.setdefault(str(ids[0]), action[len(FOCUS):])
    return names


def living_names(names: Mapping[str, str], tree: Mapping[str, Any],
                 lut: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """`names` with every living thing named the same in every load. The simulator names a living
    thing by one of its referents, drawn afresh at each load ("banana tree in self watering
    flower pot 8" in one, "seedling banana tree" in the next; "organism" for any of five seeds),
    so a step stored in one game would not be found in the next. A living thing is named by its
    longest referent that is no other thing's, says no word twice and no "in" ("seedling banana
    tree", "baby wolf", "egg dove": its stage and kind, which another variation's "seedling pear
    tree" re-words). Things alike in every referent (five cherry seeds in a jar: one kind at one
    stage) have none of their own: they are named by their kind and what holds them ("cherry
    seed in seed jar", "cherry seed in flower pot 2"), as the gold paths say, and share that name
    where one holder holds several; the simulator does not tell them apart either."""
    living: dict[str, tuple[str, str]] = {}  # object id -> (its kind, what holds it)

    def walk(node: Mapping[str, Any], holder: str) -> None:
        for child in node["contents"].values():
            if child.get("isDeleted"):
                continue
            if child.get("propLife"):
                living[str(child["uuid"])] = (child["name"], holder)
            walk(child, INVENTORY if child["name"] == "agent" else child["name"])

    walk(tree, "")
    said = {object_id: tuple(entry.get("referents", ())) for object_id, entry in lut.items()}
    used = Counter(referent for referents in said.values() for referent in set(referents))
    alike = Counter((kind, *sorted(said.get(o, ()))) for o, (kind, _) in living.items())
    ours: dict[str, str] = {}
    for object_id, (kind, holder) in living.items():
        its = said.get(object_id, ())
        if alike[(kind, *sorted(its))] > 1:
            ours[object_id] = f"{kind} in {holder}"
            continue
        own = [r for r in its if used[r] == 1 and " in " not in f" {r} " and len(set(r.split())) == len(r.split())]
        if own:
            # The longest; of two as long, the one that ends in its kind ("egg dove", not "dove egg"), as most
            # do; then the first in the alphabet.
            ours[object_id] = min(own, key=lambda r: (-len(r), not r.endswith(kind), r))
    others = {name for object_id, name in names.items() if object_id not in ours}
    return {object_id: ours[object_id] if ours.get(object_id, name) not in others else name
            for object_id, name in names.items()}


def _agent_room(node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The room node that holds the agent (a child of the universe)."""
    for room in node["contents"].values():
        if any(child["name"] == "agent" for child in room["contents"].values()):
            return room
    return None


def _is_open(node: Mapping[str, Any]) -> bool:
    container = node.get("propContainer")
    return bool(container and container.get("isOpen"))


def _states(node: Mapping[str, Any], focused: bool) -> list[str]:
    states = []
    container = node.get("propContainer")
    if container and container.get("isClosable"):
        states.append("open" if container.get("isOpen") else "closed")
    device = node.get("propDevice")
    if device:  # a light bulb too, lit by its circuit, not by an action
        states.append("on" if device.get("isActivated") else "off")
    material = node.get("propMaterial")
    if material:
        matter = material.get("stateOfMatter")
        if matter and (matter != "solid" or float(material.get("meltingPoint", 1e9)) < _MELTS_BELOW_C):
            states.append(str(matter))
        if material.get("isCombusting"):
            states.append("burning")
    life = node.get("propLife")
    if life:
        states.append("dead" if life.get("isDead") else "alive")
    if focused:
        states.append("focused")
    return states


def door_names(names: Mapping[str, str], lut: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Room -> the words the actions name the door to it by ("door", "door to kitchen", "bedroom
    door"), from the simulator's referents of each door ("door to the kitchen" among them)."""
    doors = {}
    for object_id, name in names.items():
        for referent in lut.get(object_id, {}).get("referents", ()):
            if referent.startswith("door to "):
                doors[referent[len("door to "):].removeprefix("the ")] = name
    return doors


def visible(
    tree: Mapping[str, Any], names: Mapping[str, str], look: str, focused: Collection[str] = (),
    doors: Mapping[str, str] | None = None,
) -> tuple[str | None, list[Triple]]:
    """The agent's room and the triples of what it sees there, from the object tree, the
    action names (`referents`), the doors' names (`door_names`) and the room's look text;
    `focused` are the object ids of the things focused on."""
    room = _agent_room(tree)
    if room is None:
        return None, []
    here = room["name"]
    triples: list[Triple] = []

    def name(node: Mapping[str, Any]) -> str:
        return names.get(str(node["uuid"]), node["name"])

    def walk(node: Mapping[str, Any], holder: str) -> None:
        for child in node["contents"].values():
            if child.get("isDeleted") or _PART.fullmatch(child["name"]):
                continue
            if child["name"] == "agent":
                for inventory in child["contents"].values():
                    walk(inventory, INVENTORY)
                continue
            thing = name(child)
            triples.append((thing, "in", holder))
            if not thing.startswith(child["name"]):  # "substance in toilet" is water: say what it is
                triples.append((thing, KIND, child["name"]))
            triples.extend((thing, "is", state) for state in _states(child, str(child["uuid"]) in focused))
            if _is_open(child):
                walk(child, thing)

    walk(room, here)
    doors = dict(doors or {})
    # The simulator gives no referents for some doors ("ERROR: SHOULD USE OVERRIDE FOR PORTAL."):
    # such a door is the door name its actions use that says the room ("door to outside",
    # "bathroom door"), else, when one is left, the one door name no room has ("door").
    spare = {n for n in names.values() if _DOOR_NAME.fullmatch(n)} - set(doors.values())
    for to in (match["room"] for match in _DOOR.finditer(look)):
        said = next((n for n in spare if to not in doors and n in (f"door to {to}", f"{to} door")), None)
        if said is not None:
            doors[to] = said
            spare.discard(said)
    unnamed = [match["room"] for match in _DOOR.finditer(look) if match["room"] not in doors]
    if len(unnamed) == 1 and len(spare) == 1:
        doors[unnamed[0]] = spare.pop()
    for match in _DOOR.finditer(look):
        to = match["room"]
        door = doors.get(to, f"door to {to}")
        triples += [(door, "leadsTo", to), (door, "is", match["state"])]
    return here, sorted(set(triples))
