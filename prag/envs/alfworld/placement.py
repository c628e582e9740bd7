"""Where ALFWorld's world may put a kind of thing: its generator's placement rules.

ALFRED's scene generator (`alfworld.gen.constants`, shipped with the `alfworld` package) lists,
for each kind of receptacle, the kinds of object it may hold (`VAL_RECEPTACLE_OBJECTS`), and which
receptacles open (`OPENABLE_CLASS_LIST`). Read the other way round they tell the find-X skill
where a tomato can be (fridges, countertops, sinks; never drawers or shelves) and which of those
show their contents on arrival. Searched in listed order, kitchens of 20-30 cabinets and living
rooms of 20 drawers took all 50 steps: a newspaper on the third side table was reached at step 49.
"""
from __future__ import annotations

from functools import cache


@cache
def _costs() -> dict[str, dict[str, int]]:
    from alfworld.gen.constants import OPENABLE_CLASS_LIST, VAL_RECEPTACLE_OBJECTS

    opened = {kind.lower() for kind in OPENABLE_CLASS_LIST}
    by_thing: dict[str, dict[str, int]] = {}
    for receptacle, objects in VAL_RECEPTACLE_OBJECTS.items():
        place = receptacle.lower()
        for thing in objects:
            by_thing.setdefault(thing.lower(), {})[place] = 1 if place in opened else 0
    return by_thing


def holders(thing_kind: str) -> dict[str, int] | None:
    """The kinds of receptacle ("countertop", "fridge") things of `thing_kind` ("tomato") may be
    in or on, as ALFWorld writes them, each with the cost of a look: 0 seen on arrival, 1 opened
    first. None for a kind the rules do not name."""
    return _costs().get(thing_kind.replace(" ", ""))
