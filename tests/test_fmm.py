"""Fast-Marching navigation on plain boolean maps: around walls, through doorways, and refusal."""
from __future__ import annotations

from collections import deque

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from minigrid.core.actions import Actions

from prag.envs.grid import fmm


def bfs_length(passable: np.ndarray, start: fmm.Cell, goals: set[fmm.Cell]) -> int | None:
    dist = {start: 0}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell in goals:
            return dist[cell]
        for dx, dy in fmm.DIR_TO_STEP:
            nxt = (cell[0] + dx, cell[1] + dy)
            inside = 0 <= nxt[0] < passable.shape[0] and 0 <= nxt[1] < passable.shape[1]
            if inside and passable[nxt] and nxt not in dist:
                dist[nxt] = dist[cell] + 1
                queue.append(nxt)
    return None


def replay(start: fmm.Cell, heading: int, actions: list[Actions]) -> tuple[fmm.Cell, int]:
    """Where minigrid's left/right/forward take an agent on an empty floor."""
    x, y = start
    for action in actions:
        if action == Actions.left:
            heading = (heading - 1) % 4
        elif action == Actions.right:
            heading = (heading + 1) % 4
        else:
            assert action == Actions.forward
            dx, dy = fmm.DIR_TO_STEP[heading]
            x, y = x + dx, y + dy
    return (x, y), heading


def room_with_wall(gap: int | None) -> np.ndarray:
    """A 9x7 floor split by a wall at x=4, open only at (4, gap) if a gap is given."""
    passable = np.ones((9, 7), dtype=bool)
    passable[4, :] = False
    if gap is not None:
        passable[4, gap] = True
    return passable


def test_route_goes_around_a_wall_the_shortest_way():
    passable = np.ones((7, 7), dtype=bool)
    passable[3, 0:5] = False  # a wall from the top edge, open below y=4
    start, goal = (1, 1), (5, 1)
    route = fmm.navigate(passable, start, 0, [goal])
    assert route is not None
    assert route.path[0] == start and route.path[-1] == goal
    assert all(passable[c] for c in route.path)
    assert any(c[1] >= 5 for c in route.path), "the walk must pass below the wall"
    assert len(route.path) - 1 == bfs_length(passable, start, {goal}) == 12
    assert replay(start, 0, route.actions)[0] == goal


def test_route_passes_through_the_doorway():
    passable = room_with_wall(gap=5)
    route = fmm.navigate(passable, (1, 1), 1, [(7, 1)])
    assert route is not None
    assert (4, 5) in route.path
    assert len(route.path) - 1 == bfs_length(passable, (1, 1), {(7, 1)})


def test_unreachable_target_gives_no_route_and_a_masked_field():
    passable = room_with_wall(gap=None)  # a closed door is no gap at all
    assert fmm.navigate(passable, (1, 1), 0, [(7, 1)]) is None
    field = fmm.distance_field(passable, [(7, 1)])
    assert np.ma.getmaskarray(field)[1, 1]
    assert not np.ma.getmaskarray(field)[6, 3]
    assert not fmm.reachable(passable, (1, 1))[7, 1]


def test_route_ends_facing_the_target_cell():
    passable = np.ones((5, 5), dtype=bool)
    passable[2, 2] = False  # the furniture to face
    route = fmm.navigate(passable, (0, 0), 3, [(2, 1), (1, 2), (3, 2), (2, 3)], face=(2, 2))
    assert route is not None
    end, heading = replay((0, 0), 3, route.actions)
    dx, dy = fmm.DIR_TO_STEP[heading]
    assert (end[0] + dx, end[1] + dy) == (2, 2)
    assert route.final_dir == heading


def test_no_targets_means_unreachable():
    assert fmm.navigate(np.ones((3, 3), dtype=bool), (0, 0), 0, []) is None


@settings(max_examples=150, deadline=None)
@given(
    st.integers(2, 12),
    st.integers(2, 12),
    st.floats(0.0, 0.5),
    st.integers(0, 2**32 - 1),
)
def test_routes_agree_with_breadth_first_search(width, height, density, seed):
    rng = np.random.default_rng(seed)
    passable = rng.random((width, height)) >= density
    free = list(zip(*np.nonzero(passable)))
    if not free:
        return
    start = tuple(int(v) for v in free[rng.integers(len(free))])
    goal = tuple(int(v) for v in free[rng.integers(len(free))])
    route = fmm.navigate(passable, start, 0, [goal])
    shortest = bfs_length(passable, start, {goal})
    assert (route is None) == (shortest is None)
    if route is None:
        return
    assert route.path[0] == start and route.path[-1] == goal
    assert all(passable[c] for c in route.path)
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(route.path, route.path[1:]))
    assert replay(start, 0, route.actions)[0] == goal
