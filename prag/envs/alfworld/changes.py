"""Which kinds of thing ALFWorld's world can clean, heat or cool: ALFRED's `VAL_ACTION_OBJECTS`.

A reading that asks for a change the world never makes ("put a clean soap bottle in the
cabinet": soap bottles are never cleaned) cannot be won, and search learns so only once all it
needs was seen, most of a game's steps later; the goal readers drop it before a step instead.
"""
from __future__ import annotations

from functools import cache

from prag.envs.alfworld.rooms import PROPERTY

_DONE = {"Cleanable": "cleaned", "Heatable": "heated", "Coolable": "cooled"}


@cache
def _changeable() -> dict[str, frozenset[str]]:
    from alfworld.gen.constants import VAL_ACTION_OBJECTS

    return {task: frozenset(kind.lower() for kind in VAL_ACTION_OBJECTS[prop]) for task, prop in PROPERTY.items()}


def never_done(task: str, thing_kind: str) -> str | None:
    """What a goal of `task` asks done to a thing of `thing_kind` ("cleaned") where ALFWorld's
    world never does it to such a thing; None where it does, or the task asks for no change."""
    changeable = _changeable().get(task)
    return None if changeable is None or thing_kind in changeable else _DONE[PROPERTY[task]]
