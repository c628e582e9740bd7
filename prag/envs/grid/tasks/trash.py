"""Throwing away trash: bits of trash lie about a four-room house; all of it goes into the
kitchen bin, and nothing that is not trash."""
from __future__ import annotations

from prag.envs.grid.house import listing
from prag.envs.grid.solver import Planner, SolvableTask

TRASH = ("soda can", "newspaper", "banana peel", "bottle")


class ThrowAwayTrash(SolvableTask):
    task_name = "throw_away_trash"
    mission_text = "throw all the trash into the bin"
    room_names = ("kitchen", "living room", "bedroom", "bathroom")
    rows, cols = 2, 2

    def populate(self) -> None:
        self.bin = self.add_furniture("bin", "kitchen")
        holders = [
            self.add_furniture("counter", "kitchen"),
            self.add_furniture("table", "living room"),
            self.add_furniture("shelf", "bedroom"),
            self.add_furniture("shelf", "bathroom"),
        ]
        self.add_items(["book", "remote"], holders)  # not trash: must stay out of the bin
        kinds = self._rand_subset(TRASH, 2 + int(self.np_random.integers(2)))
        self.trash = self.add_items(kinds, holders)

    def goal_text(self) -> str:
        kinds = [t.kind.name for t in self.trash]
        return f"Throw away the trash: put {listing(kinds)} in the bin, and nothing else."

    def goal_reached(self) -> bool:
        return set(self.bin.items) == set(self.trash)

    def solve(self, planner: Planner) -> None:
        for item in planner.in_turn(self.trash):
            planner.bring(item, self.bin)
