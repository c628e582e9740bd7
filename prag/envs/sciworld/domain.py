"""ScienceWorld's Domain: its grammar and names, as data (no engine import)."""
from __future__ import annotations

from prag.envs.domain import Domain, Undo

# ScienceWorld's action templates (the simulator's `get_possible_actions`), by how they name things.
_ONE = ("focus on", "pick up", "put down", "look at", "look in", "go to", "open", "close", "activate", "examine",
        "deactivate", "read", "eat", "mix", "flush", "disconnect", "move", "pour", "dunk", "use", "connect")
_LINK = ("to", "into", "in", "on")

SCIWORLD = Domain(
    name="sciworld",
    rules=(
        "You are an agent in ScienceWorld, a text simulation of a house with rooms joined by doors "
        "(kitchen, bathroom, workshop, art studio, greenhouse, outside, foundry, ...) where heat, "
        "electricity, chemistry and living things behave as in the real world. Each turn you pick "
        "exactly one action from the admissible actions; nothing else can be done. Open a door before "
        "going to the room behind it; open containers to see inside. `focus on X` tells the task which "
        "thing you mean and cannot be undone: focusing on the wrong thing fails the task, so focus only "
        "on what the task names, when you have it. Do not repeat an action that changed nothing."
    ),
    undo=(
        Undo(r"open (?P<x>.+)", ("close {x}",)),
        Undo(r"close (?P<x>.+)", ("open {x}",)),
        Undo(r"activate (?P<x>.+)", ("deactivate {x}",)),
        Undo(r"deactivate (?P<x>.+)", ("activate {x}",)),
        Undo(r"pick up (?P<x>.+)", ("put down {x}",)),
    ),
    move=r"go to (?P<to>.+)",
    # A name is what follows a template's verb or one of its link words, up to the next link word.
    entity=(rf"(?:^(?:{'|'.join(_ONE)}) | (?:{'|'.join(_LINK)}) )"
            rf"((?:(?! (?:{'|'.join(_LINK)}) ).)+)"),
    placement={"in": "in"},
    held_by="inventory",
    passage=r".*\bdoor\b.*",
    leads_to="leadsTo",
    kind_rule=r"(?P<kind>.+?) (?:in|on|containing|to) .+",
    own_name="isa",  # prag.envs.sciworld.scene.KIND
    irrevocable=r"focus on (?P<x>.+)",
    marked="focused",  # prag.envs.sciworld.scene: the things focused on
    put="move {thing} to {place}",
    examine="look at {thing}",
    pour="pour {thing} into {place}",
    combine="mix {thing}",
    readies=("pick up",),  # what readies moving a thing the goal says to carry (prag.agent.skills.carry)
    # Its goals spell irrevocable focuses, branches, carries, things to make and things described.
    skills=("instructed", "take-along", "created", "conditions", "carry", "find", "compared", "make", "described",
            "closed"),
)
