"""ALFWorld's formal goals: its six task types with ALFWorld's own first goal template each
(`alfworld.gen.goal_library`), an object kind, a receptacle kind and a lamp kind.

The canonical sentences are the ones ALFWorld writes, so the action model (`prag.envs.alfworld.model`)
and `Domain.needs` read them as they read a game's own goal. Object and lamp kinds are ALFRED's
(`alfworld.gen.constants`); receptacle kinds are those the game lists at its start, when it does.
"""
from __future__ import annotations

from functools import cache

from prag.envs.goals import GoalSchema

LAMPS = ("desklamp", "floorlamp")

TEMPLATES = {
    "pick_and_place_simple": "put a {obj} in {recep}",
    "look_at_obj_in_light": "look at {obj} under the {toggle}",
    "pick_clean_then_place_in_recep": "put a clean {obj} in {recep}",
    "pick_heat_then_place_in_recep": "put a hot {obj} in {recep}",
    "pick_cool_then_place_in_recep": "put a cool {obj} in {recep}",
    "pick_two_obj_and_place": "put two {obj} in {recep}",
}


@cache
def _kinds() -> dict[str, list[str]]:
    from alfworld.gen.constants import OBJECTS, RECEPTACLES

    # A bowl is both an object and a receptacle; sliced kinds are no goal of the games prag plays.
    objects = sorted({o.lower() for o in OBJECTS if not o.endswith("Sliced")} - set(LAMPS))
    return {"obj": objects, "recep": sorted({r.lower() for r in RECEPTACLES}), "toggle": list(LAMPS)}


@cache
def schema() -> GoalSchema:
    from alfworld.gen import goal_library

    # ALFWorld's other goal sentence of each type ("put some mug on desk", "examine the ...").
    aliases = {task: tuple(goal_library.gdict[task]["templates"]) for task in TEMPLATES}
    return GoalSchema(TEMPLATES, _kinds, room_slots=frozenset({"recep"}), aliases=aliases)
