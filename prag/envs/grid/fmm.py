"""Navigation by the Fast Marching Method, as in the P-RAG paper's grid world.

The navigable cells form a masked array; the target cells are its zero level set;
`skfmm.distance` gives the geodesic distance of every navigable cell to the target,
with cells cut off from the target left masked (so "unreachable" is read straight
from the field). The agent then descends the field from its own cell, one 4-neighbour
at a time, and the path becomes minigrid's low-level turn-left / turn-right / forward.

Arrays are indexed [x, y] like minigrid's `Grid.get(x, y)`.
"""
from __future__ import annotations

import itertools
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import skfmm
from minigrid.core.actions import Actions

Cell = tuple[int, int]

# minigrid's directions: 0 right (+x), 1 down (+y), 2 left (-x), 3 up (-y)
DIR_TO_STEP: tuple[Cell, ...] = ((1, 0), (0, 1), (-1, 0), (0, -1))


@dataclass(frozen=True)
class Route:
    path: list[Cell]  # from the start cell to a target cell, inclusive
    actions: list[Actions]  # the low-level actions that walk it (and turn to face, if asked)
    final_dir: int


def distance_field(passable: np.ndarray, targets: Collection[Cell]) -> np.ma.MaskedArray:
    """Geodesic distance of each passable cell to the nearest target; masked where unreachable."""
    inside = [c for c in targets if passable[c]]
    if not inside:
        return np.ma.masked_all(passable.shape)
    phi = np.ones(passable.shape)
    for cell in inside:
        phi[cell] = 0.0
    # first order: every cell's value then comes from a strictly smaller 4-neighbour,
    # so steepest descent cannot stall before the target
    return skfmm.distance(np.ma.MaskedArray(phi, mask=~passable), dx=1.0, order=1)


def descend(field: np.ma.MaskedArray, start: Cell, targets: Collection[Cell]) -> list[Cell] | None:
    """Steepest 4-neighbour descent of the field from start; None when start is cut off."""
    goal = set(targets)
    if np.ma.getmaskarray(field)[start]:
        return None
    path = [start]
    here = start
    width, height = field.shape
    while here not in goal:
        best, best_value = None, float(field[here])
        for dx, dy in DIR_TO_STEP:
            nxt = (here[0] + dx, here[1] + dy)
            if not (0 <= nxt[0] < width and 0 <= nxt[1] < height):
                continue
            value = field[nxt]
            if value is np.ma.masked:
                continue
            if float(value) < best_value:
                best, best_value = nxt, float(value)
        if best is None:  # a first-order field has no such local minimum; guard anyway
            return None
        path.append(best)
        here = best
    return path


def turns(from_dir: int, to_dir: int) -> list[Actions]:
    delta = (to_dir - from_dir) % 4
    return {0: [], 1: [Actions.right], 2: [Actions.right, Actions.right], 3: [Actions.left]}[delta]


def direction(a: Cell, b: Cell) -> int:
    return DIR_TO_STEP.index((b[0] - a[0], b[1] - a[1]))


def path_actions(path: list[Cell], start_dir: int, face: Cell | None = None) -> tuple[list[Actions], int]:
    """Low-level actions that walk the path from start_dir, then turn to face `face` if given."""
    actions: list[Actions] = []
    heading = start_dir
    for a, b in itertools.pairwise(path):
        want = direction(a, b)
        actions += turns(heading, want)
        actions.append(Actions.forward)
        heading = want
    if face is not None:
        want = direction(path[-1], face)
        actions += turns(heading, want)
        heading = want
    return actions, heading


def navigate(
    passable: np.ndarray,
    start: Cell,
    start_dir: int,
    targets: Collection[Cell],
    face: Cell | None = None,
) -> Route | None:
    """A route from start to the nearest target cell, or None if no navigable way leads there.

    With `face`, the targets must be 4-neighbours of that cell and the route ends facing it.
    """
    field = distance_field(passable, targets)
    path = descend(field, start, targets)
    if path is None:
        return None
    actions, final_dir = path_actions(path, start_dir, face)
    return Route(path=path, actions=actions, final_dir=final_dir)


def reachable(passable: np.ndarray, start: Cell) -> np.ndarray:
    """Boolean map of the cells the agent can walk to from start."""
    field = distance_field(passable, [start])
    return ~np.ma.getmaskarray(field) & passable
