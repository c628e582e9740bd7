"""Household objects with states, as minigrid world objects.

Two sorts: `Furniture` stands in a grid cell (the agent cannot walk through it) and holds
portable `Item`s in or on it; an `Item` is always in/on one piece of furniture or in the
agent's hands. A cell holds its furniture plus at most `MAX_PER_CELL` objects, after
Mini-BEHAVIOR's several-objects-per-cell grid (this is in its spirit, not Mini-BEHAVIOR).

States: open/closed (fridge, bin, box, cabinet), toggled on/off (sink), filled/empty
(watering can), clean/dirty (plate, cup), watered/dry (plant).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from minigrid.core.constants import COLOR_TO_IDX, COLORS, OBJECT_TO_IDX
from minigrid.core.world_object import Door, WorldObj
from minigrid.utils.rendering import fill_coords, point_in_circle, point_in_rect

MAX_PER_CELL = 3


@dataclass(frozen=True)
class Kind:
    """What a sort of object is and which states it has."""

    name: str
    color: str  # one of minigrid's six colours, for rendering and the symbolic image
    holds: str | None = None  # "in" or "on": how items rest in/on this furniture
    openable: bool = False
    toggleable: bool = False
    fillable: bool = False
    soilable: bool = False  # has a clean/dirty state
    waterable: bool = False


FURNITURE: dict[str, Kind] = {
    k.name: k
    for k in [
        Kind("fridge", "blue", holds="in", openable=True),
        Kind("bin", "grey", holds="in", openable=True),
        Kind("box", "yellow", holds="in", openable=True),
        Kind("cabinet", "purple", holds="in", openable=True),
        Kind("sink", "blue", holds="in", toggleable=True),
        Kind("counter", "grey", holds="on"),
        Kind("table", "yellow", holds="on"),
        Kind("shelf", "purple", holds="on"),
        Kind("bed", "red", holds="on"),
        Kind("plant", "green", waterable=True),
    ]
}

ITEMS: dict[str, Kind] = {
    k.name: k
    for k in [
        # groceries
        Kind("apple", "red"),
        Kind("milk", "grey"),
        Kind("cheese", "yellow"),
        Kind("bread", "yellow"),
        Kind("butter", "yellow"),
        Kind("eggs", "grey"),
        # trash
        Kind("soda can", "red"),
        Kind("newspaper", "grey"),
        Kind("banana peel", "yellow"),
        Kind("bottle", "green"),
        # toys
        Kind("ball", "red"),
        Kind("teddy bear", "yellow"),
        Kind("toy car", "blue"),
        Kind("block", "green"),
        # tools and dishes
        Kind("watering can", "green", fillable=True),
        Kind("plate", "grey", soilable=True),
        Kind("cup", "blue", soilable=True),
        # things that belong where they are
        Kind("book", "purple"),
        Kind("remote", "grey"),
        Kind("keys", "yellow"),
    ]
}


Cell = tuple[int, int]


def cell_of(obj: WorldObj) -> Cell:
    """The grid cell of a placed object (furniture, door)."""
    if obj.cur_pos is None:
        raise ValueError(f"{obj} is not placed in the grid")
    return (int(obj.cur_pos[0]), int(obj.cur_pos[1]))


class CellFullError(Exception):
    """Raised when a fourth object would go into a cell."""


class Item(WorldObj):
    """A portable household object. Never placed in the grid itself: it rests in/on furniture."""

    def __init__(self, kind: Kind, name: str) -> None:
        # minigrid's symbolic image knows a fixed set of types; a small portable thing is a "ball"
        super().__init__("ball", kind.color)
        self.kind = kind
        self.name = name
        self.is_filled = False
        self.is_dirty = False

    def can_pickup(self) -> bool:
        return True

    def states(self) -> list[str]:
        out = []
        if self.kind.fillable:
            out.append("filled" if self.is_filled else "empty")
        if self.kind.soilable:
            out.append("dirty" if self.is_dirty else "clean")
        return out

    def render(self, img: np.ndarray) -> np.ndarray:
        fill_coords(img, point_in_circle(0.5, 0.5, 0.3), COLORS[self.color])
        return img


class Furniture(WorldObj):
    """A fixed household object in one cell, holding up to MAX_PER_CELL items in or on it."""

    def __init__(self, kind: Kind, name: str) -> None:
        # furniture shows up in minigrid's symbolic image as its container type, "box"
        super().__init__("box", kind.color)
        self.kind = kind
        self.name = name
        self.items: list[Item] = []
        self.is_open = False
        self.is_on = False
        self.is_watered = False

    @property
    def accessible(self) -> bool:
        """Whether what is in/on it can be seen and reached."""
        return self.kind.holds is not None and (self.is_open or not self.kind.openable)

    def add(self, item: Item) -> None:
        if len(self.items) >= MAX_PER_CELL:
            raise CellFullError(
                f"{self.name} already holds {MAX_PER_CELL} objects, the limit for one cell"
            )
        self.items.append(item)

    def states(self) -> list[str]:
        out = []
        if self.kind.openable:
            out.append("open" if self.is_open else "closed")
        if self.kind.toggleable:
            out.append("on" if self.is_on else "off")
        if self.kind.waterable:
            out.append("watered" if self.is_watered else "dry")
        return out

    def encode(self) -> tuple[int, int, int]:
        # minigrid's state slot: 0 open, 1 closed (as for its doors and boxes)
        closed = self.kind.openable and not self.is_open
        return (OBJECT_TO_IDX["box"], COLOR_TO_IDX[self.color], int(closed))

    def render(self, img: np.ndarray) -> np.ndarray:
        color = np.array(COLORS[self.color])
        fill_coords(img, point_in_rect(0.06, 0.94, 0.06, 0.94), color)
        if self.kind.holds and not self.accessible:
            fill_coords(img, point_in_rect(0.12, 0.88, 0.12, 0.88), color // 2)
            return img
        for i, item in enumerate(self.items):
            cx = 0.25 + 0.25 * i
            fill_coords(img, point_in_circle(cx, 0.5, 0.11), COLORS[item.color])
        return img


class NamedDoor(Door):
    """A minigrid door with a name and the two rooms it joins."""

    def __init__(self, name: str, color: str, rooms: tuple[str, str], is_open: bool) -> None:
        super().__init__(color, is_open=is_open)
        self.name = name
        self.rooms = rooms

    def other_side(self, room: str) -> str:
        return self.rooms[1] if self.rooms[0] == room else self.rooms[0]

    def states(self) -> list[str]:
        return ["open" if self.is_open else "closed"]
