"""Where ALFWorld's world may put a kind of thing: its generator's placement rules.

ALFRED's scene generator (`alfworld.gen.constants.VAL_RECEPTACLE_OBJECTS`, shipped with the
`alfworld` package) lists, for each kind of receptacle, the kinds of object it may hold. Read
the other way round it tells the find-X skill where a tomato can be: fridges, countertops and
sinks, never drawers or shelves. Kitchens of 20-30 cabinets and drawers used to take every
step of a search that went through them in listed order.
"""
from __future__ import annotations

from functools import cache


@cache
def _holders() -> dict[str, frozenset[str]]:
    from alfworld.gen.constants import VAL_RECEPTACLE_OBJECTS

    by_thing: dict[str, set[str]] = {}
    for receptacle, objects in VAL_RECEPTACLE_OBJECTS.items():
        for thing in objects:
            by_thing.setdefault(thing.lower(), set()).add(receptacle.lower())
    return {thing: frozenset(places) for thing, places in by_thing.items()}


def holders(thing_kind: str) -> frozenset[str] | None:
    """The kinds of receptacle ("countertop", "fridge") things of `thing_kind` ("tomato") may be
    in or on, as ALFWorld writes them; None for a kind the rules do not name."""
    return _holders().get(thing_kind.replace(" ", ""))
