"""A map of rooms and exits, built from what the agent observed, for families whose moves are relative.

Where a move naming a direction ("go east") leads depends on where it is taken, so no move names a
place to go to. The map records, room by room, the exits seen there (direction -> the way through:
a door's name, or the family's word for a doorless exit), the things seen there, the commands the
game admitted there, and which exit leads where once it was taken: "went east from the kitchen,
arrived in the hall" also says the kitchen lies west of the hall (the family's opposite
directions). Breadth-first search over the exits taken gives the way back to a known room, and to
the nearest room with an exit not yet taken. Only the observations' location, scene-graph triples
and admissible commands are read, never the game's hidden state.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from prag.envs.base import Triple
from prag.envs.domain import Domain


@dataclass
class RoomMap:
    """The rooms seen in this episode, their exits and where the exits taken lead."""

    domain: Domain
    exits: dict[str, dict[str, str]] = field(default_factory=dict)  # room -> direction -> the way through
    leads: dict[str, dict[str, str]] = field(default_factory=dict)  # room -> direction -> the room it leads to
    where: dict[str, str] = field(default_factory=dict)  # thing -> the room it was last seen in
    admitted: dict[str, set[str]] = field(default_factory=dict)  # room -> the commands admissible there

    def read(self, room: str | None, triples: Iterable[Triple], admissible: Sequence[str]) -> None:
        """What the agent sees in `room`: its exits, the things in it (held ones are in no room)."""
        if room is None:
            return
        domain = self.domain
        exits = self.exits.setdefault(room, {})
        self.admitted.setdefault(room, set()).update(admissible)
        for subject, relation, place in triples:
            direction = domain.exit_direction(relation)
            if direction is not None and place == room:
                exits[direction] = subject
            elif direction is None and (relation in domain.placement or relation == domain.located) and place != domain.held_by:
                self.where[subject] = room
        for thing in domain.held(triples):
            self.where.pop(thing, None)

    def moved(self, start: str | None, direction: str, end: str | None) -> None:
        """The agent went `direction` from `start` and arrived in `end`: the exit leads there, and
        the opposite exit of `end` back."""
        if start is None or end is None or start == end:
            return
        self.leads.setdefault(start, {})[direction] = end
        back = self.domain.opposite(direction)
        if back is not None:
            self.leads.setdefault(end, {})[back] = start

    def unexplored(self, room: str) -> list[str]:
        """The directions of `room`'s exits not yet known to lead anywhere, in the order seen."""
        known = self.leads.get(room, {})
        return [direction for direction in self.exits.get(room, {}) if direction not in known]

    def path(self, start: str, arrived: Callable[[str], bool]) -> list[tuple[str, str]] | None:
        """The shortest known way from `start` to the nearest room where `arrived` holds, as (room,
        direction) moves; [] when `start` is such a room, None when none is known to be reachable."""
        came: dict[str, tuple[str, str] | None] = {start: None}
        queue = deque([start])
        while queue:
            room = queue.popleft()
            if arrived(room):
                moves: list[tuple[str, str]] = []
                while (step := came[room]) is not None:
                    moves.append(step)
                    room = step[0]
                return moves[::-1]
            for direction, there in self.leads.get(room, {}).items():
                if there not in came:
                    came[there] = (room, direction)
                    queue.append(there)
        return None
