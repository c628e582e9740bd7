"""The household world every grid task builds on: rooms with walls and doors, furniture, items.

In the spirit of Mini-BEHAVIOR (everyday household tasks on a minigrid), not Mini-BEHAVIOR
itself, which is not installable here. Built on minigrid's `RoomGrid`: a row or grid of
square rooms with walls; every pair of neighbouring rooms gets a named door, open or
closed. Rooms are fully visible from inside (the agent sees its whole room, not a 7x7
cone): that is the visibility the scene graph and the admissible actions use.

A task subclasses `HouseholdEnv`, puts its furniture and items in `populate()`, and says
its goal (`goal_text`, `goal_reached`); a task also says how its solver plays it (`solve`, on
`prag.envs.grid.solver.SolvableTask`: the world itself does not know its oracle). Everything
random comes from minigrid's `np_random`, so `reset(seed=s)` always builds the same house.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from minigrid.core.mission import MissionSpace
from minigrid.core.roomgrid import Room, RoomGrid
from minigrid.core.world_object import Wall

from prag.envs.grid import fmm
from prag.envs.grid.objects import (
    FURNITURE,
    ITEMS,
    MAX_PER_CELL,
    Furniture,
    Item,
    NamedDoor,
    cell_of,
)
from prag.errors import PragError

Cell = tuple[int, int]

DOOR_COLORS = ("red", "green", "blue", "purple", "yellow")


class HouseholdEnv(RoomGrid):
    """A house of `rows` x `cols` rooms of `room_size` cells (walls included) each side."""

    task_name: ClassVar[str]
    mission_text: ClassVar[str]  # the gym-level mission; the instance goal is `goal_text()`
    room_names: ClassVar[tuple[str, ...]]
    rows: ClassVar[int] = 1
    cols: ClassVar[int] = 2
    door_open_chance: ClassVar[float] = 0.5

    def __init__(self, room_size: int = 6, **kwargs: Any) -> None:
        mission = self.mission_text
        super().__init__(
            room_size=room_size,
            num_rows=self.rows,
            num_cols=self.cols,
            # the prag adapter caps high-level steps; minigrid's own cap must never cut a walk short
            max_steps=10**9,
            mission_space=MissionSpace(mission_func=lambda: mission),
            **kwargs,
        )

    # ---------------------------------------------------------------- generation
    def _gen_grid(self, width: int, height: int) -> None:
        super()._gen_grid(width, height)  # walls, and door positions drawn from np_random
        slots = [room for row in self.room_grid for room in row]
        order = self.np_random.permutation(len(slots))
        self.rooms: dict[str, Room] = {self.room_names[k]: slots[i] for k, i in enumerate(order)}
        self._room_name = {id(room): name for name, room in self.rooms.items()}
        self._counts: Counter[str] = Counter()
        self.doors: list[NamedDoor] = []
        self.furniture: list[Furniture] = []
        self.items: list[Item] = []
        self.held: Item | None = None
        self._add_doors()
        self.populate()
        self._place_agent(self.start_room())
        self.mission = self.mission_text

    def _add_doors(self) -> None:
        for row in self.room_grid:
            for room in row:
                # right and down neighbours only, so each pair of rooms gets one door
                for side in (0, 1):
                    neighbour = room.neighbors[side]
                    if neighbour is None:
                        continue
                    pos = room.door_pos[side]
                    assert pos is not None  # placed with the neighbour
                    names = (self._room_name[id(room)], self._room_name[id(neighbour)])
                    door = NamedDoor(
                        self._new_name("door"),
                        DOOR_COLORS[len(self.doors) % len(DOOR_COLORS)],
                        names,
                        is_open=bool(self.np_random.random() < self.door_open_chance),
                    )
                    self.put_obj(door, *pos)
                    room.doors[side] = door
                    neighbour.doors[(side + 2) % 4] = door
                    self.doors.append(door)

    def _new_name(self, kind: str) -> str:
        self._counts[kind] += 1
        return f"{kind} {self._counts[kind]}"

    def populate(self) -> None:
        """Put the task's furniture and items in the house (subclasses)."""
        raise NotImplementedError

    def start_room(self) -> str:
        """The room the agent starts in; by default a random one."""
        return str(self._rand_elem(sorted(self.rooms)))

    def add_furniture(self, kind: str, room: str) -> Furniture:
        """A new piece of furniture in a free spot of the room, preferably against a wall,
        never in front of a door, and never cutting the room's free floor in two."""
        piece = Furniture(FURNITURE[kind], self._new_name(kind))
        spots = [c for c in self.interior(room) if self._can_stand_furniture(c)]
        by_wall = [c for c in spots if any(isinstance(self.grid.get(*n), Wall) for n in around(c))]
        rest = [c for c in spots if c not in by_wall]
        for group in (by_wall, rest):
            for i in self.np_random.permutation(len(group)):
                cell = group[int(i)]
                self.put_obj(piece, *cell)
                self.furniture.append(piece)
                if self._floor_connected(room):
                    return piece
                self.furniture.pop()
                self.grid.set(*cell, None)
        raise PragError(
            f"no room for a {kind} in the {room}: use a larger grid `size` (room size) in the spec"
        )

    def add_items(self, kinds: list[str], holders: list[Furniture]) -> list[Item]:
        """Items of these kinds, each on a random one of the holders that has room left."""
        out = []
        for kind in kinds:
            free = [h for h in holders if len(h.items) < MAX_PER_CELL]
            out.append(self.add_item(kind, self._rand_elem(free)))
        return out

    def add_item(self, kind: str, holder: Furniture) -> Item:
        item = Item(ITEMS[kind], self._new_name(kind))
        holder.add(item)
        self.items.append(item)
        return item

    def _can_stand_furniture(self, cell: Cell) -> bool:
        if self.grid.get(*cell) is not None:
            return False
        return not any(isinstance(self.grid.get(*n), NamedDoor) for n in around(cell))

    def _floor_connected(self, room: str) -> bool:
        free = [c for c in self.interior(room) if self.grid.get(*c) is None]
        if not free:
            return False
        inside = np.zeros((self.width, self.height), dtype=bool)
        for c in free:
            inside[c] = True
        reach = fmm.reachable(inside, free[0])
        if not all(reach[c] for c in free):
            return False
        # every piece must keep a free side to be reached from
        return all(any(inside[n] for n in around(cell_of(piece))) for piece in self.furniture_in(room))

    def _place_agent(self, room: str) -> None:
        cells = [c for c in self.interior(room) if self.grid.get(*c) is None]
        self.agent_pos = cells[int(self.np_random.integers(len(cells)))]
        self.agent_dir = int(self.np_random.integers(4))

    # ---------------------------------------------------------------- the task
    def goal_text(self) -> str:
        raise NotImplementedError

    def goal_reached(self) -> bool:
        raise NotImplementedError

    # ---------------------------------------------------------------- queries
    def interior(self, room: str) -> list[Cell]:
        r = self.rooms[room]
        (x0, y0), (w, h) = r.top, r.size
        return [(x, y) for x in range(x0 + 1, x0 + w - 1) for y in range(y0 + 1, y0 + h - 1)]

    def room_at(self, cell: Cell) -> str | None:
        """The room whose floor holds this cell; None on walls and in doorways."""
        for name in self.rooms:
            r = self.rooms[name]
            (x0, y0), (w, h) = r.top, r.size
            if x0 < cell[0] < x0 + w - 1 and y0 < cell[1] < y0 + h - 1:
                return name
        return None

    @property
    def agent_cell(self) -> Cell:
        return (int(self.agent_pos[0]), int(self.agent_pos[1]))

    @property
    def agent_room(self) -> str:
        room = self.room_at(self.agent_cell)
        if room is None:
            raise PragError("the agent stands in a doorway; high-level actions never leave it there")
        return room

    def faced(self) -> Furniture | NamedDoor | None:
        obj = self.grid.get(*self.front_pos)
        return obj if isinstance(obj, (Furniture, NamedDoor)) else None

    def furniture_in(self, room: str) -> list[Furniture]:
        return [f for f in self.furniture if self.room_at(cell_of(f)) == room]

    def doors_of(self, room: str) -> list[NamedDoor]:
        return [d for d in self.doors if room in d.rooms]

    def holder_of(self, item: Item) -> Furniture | None:
        return next((f for f in self.furniture if item in f.items), None)

    def visible_items(self) -> list[Item]:
        return [i for f in self.furniture_in(self.agent_room) if f.accessible for i in f.items]

    def passable(self) -> np.ndarray:
        """Cells the agent can walk on: empty floor and open doorways."""
        grid = np.zeros((self.width, self.height), dtype=bool)
        for x in range(self.width):
            for y in range(self.height):
                cell = self.grid.get(x, y)
                grid[x, y] = cell is None or cell.can_overlap()
        return grid


def around(cell: Cell) -> list[Cell]:
    return [(cell[0] + dx, cell[1] + dy) for dx, dy in fmm.DIR_TO_STEP]


def listing(kinds: Sequence[str]) -> str:
    """'the apple, the milk and the cheese'"""
    named = [f"the {k}" for k in kinds]
    return named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
