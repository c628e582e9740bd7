"""Writing a sampled scene as an ALFWorld game: the PDDL problem, `game.tw-pddl` and `traj_data.json`.

The problem has the shape of the problems ALFWorld ships (one `otype`/`rtype` constant per ALFRED
type, ALFRED-mangled instance ids, `inReceptacle`/`receptacleAtLocation`/`objectAtLocation` facts,
the property facts ALFRED's tables give each object, closed openable receptacles) and the goal
formula is ALFWorld's own (`alfworld.gen.goal_library`), so the engine plays it like a real game.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import alfworld
from alfworld.gen import constants, goal_library

from prag.envs.alfworld.rooms import (
    LAMP,
    can_contain,
    has_property,
    is_openable,
    object_types,
    receptacle_types,
)
from prag.envs.alfworld.scene import Scene

AGENT = "agent1"
# The property facts of an object, after ALFRED's VAL_ACTION_OBJECTS table.
_PROPERTY_FACTS = (("Cleanable", "cleanable"), ("Heatable", "heatable"), ("Coolable", "coolable"),
                   ("Sliceable", "sliceable"), ("Toggleable", "toggleable"))


def problem_text(scene: Scene, name: str) -> str:
    """The PDDL problem of the scene, with ALFWorld's goal formula for its task type."""
    declared = [f"{AGENT} - agent"]
    declared += [f"{t}Type - otype" for t in object_types()]
    declared += [f"{t}Type - rtype" for t in receptacle_types()]
    declared += [f"{t.id} - object" for t in scene.things]
    declared += [f"{r.id} - receptacle" for r in scene.receptacles]
    declared += [f"{loc} - location" for loc in _locations(scene)]

    facts = [f"(receptacleType {r.id} {r.type}Type)" for r in scene.receptacles]
    facts += [f"(objectType {t.id} {t.type}Type)" for t in scene.things]
    present = list(dict.fromkeys(t.type for t in scene.things))
    for rtype in dict.fromkeys(r.type for r in scene.receptacles):
        facts += [f"(canContain {rtype}Type {otype}Type)" for otype in present if can_contain(rtype, otype)]
    movable = [t for t in scene.things if t.receptacle]
    facts += [f"(pickupable {t.id})" for t in movable if t.type != LAMP]
    facts += [f"(isReceptacleObject {t.id})" for t in movable if t.type in constants.MOVABLE_RECEPTACLES]
    facts += [f"(openable {r.id})" for r in scene.receptacles if is_openable(r.type)]
    facts.append(f"(atLocation {AGENT} {scene.agent_location})")
    for prop, predicate in _PROPERTY_FACTS:
        facts += [f"({predicate} {t.id})" for t in movable if has_property(t.type, prop)]
    facts += [f"(inReceptacle {t.id} {t.receptacle})" for t in movable]
    facts += [f"(receptacleAtLocation {r.id} {r.location})" for r in scene.receptacles]
    facts += [f"(objectAtLocation {t.id} {t.location})" for t in scene.things]

    goal = goal_library.gdict[scene.task_type]["pddl"].format(
        obj=scene.target, recep=scene.parent, toggle=scene.toggle
    ).replace("#", "-")
    return (
        f"\n(define (problem {name})\n(:domain alfred)\n(:objects\n"
        + "\n        ".join(declared)
        + "\n        )\n\n(:init\n\n        "
        + "\n        ".join(facts)
        + "\n        )\n"
        + goal
    )


def game_data(scene: Scene, problem: str) -> dict[str, Any]:
    """The `game.tw-pddl` content: the installed ALFWorld domain and grammar, the goal filled in."""
    grammar = Path(alfworld.ALFRED_TWL2_PATH).read_text()
    return {
        "pddl_domain": Path(alfworld.ALFRED_PDDL_PATH).read_text(),
        # What alfworld.agents.utils.misc.add_task_to_grammar does, with our seeded template choice.
        "grammar": grammar.replace("UNKNOWN GOAL", scene.goal),
        "pddl_problem": problem,
        "solvable": False,  # set once the planner's plan has won the game
    }


def traj_data(scene: Scene, trial: str, seed: int) -> dict[str, Any]:
    """The `traj_data.json` fields ALFWorld reads (task type, pddl params, the goal annotation)."""
    sentence = scene.goal[:1].upper() + scene.goal[1:] + "."
    return {
        "task_id": trial,
        "task_type": scene.task_type,
        "pddl_params": {
            "mrecep_target": "",
            "object_sliced": False,
            "object_target": scene.target,
            "parent_target": scene.parent,
            "toggle_target": scene.toggle,
        },
        "turk_annotations": {
            "anns": [{"assignment_id": "generated", "high_descs": [], "task_desc": sentence, "votes": [1]}]
        },
        "scene": {"floor_plan": f"Generated{scene.room}", "random_seed": seed},
    }


def task_dir_name(scene: Scene, seed: int) -> str:
    """ALFWorld's `<task_type>-<object>-<movable recep>-<receptacle>-<scene>` directory name."""
    return f"{scene.task_type}-{scene.target}-None-{scene.parent or scene.toggle}-{seed}"


def _locations(scene: Scene) -> list[str]:
    return list(dict.fromkeys([*(r.location for r in scene.receptacles), scene.agent_location]))
