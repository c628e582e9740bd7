"""Collecting toys into a box: toys lie about the bedroom and the playroom; all of them go into
the toy box."""
from __future__ import annotations

from prag.envs.grid.house import listing
from prag.envs.grid.solver import Planner, SolvableTask

TOYS = ("ball", "teddy bear", "toy car", "block")


class CollectToys(SolvableTask):
    task_name = "collect_toys"
    mission_text = "collect the toys into the box"
    room_names = ("bedroom", "playroom")
    rows, cols = 2, 1

    def populate(self) -> None:
        self.box = self.add_furniture("box", "bedroom")
        self.box.is_open = bool(self.np_random.random() < 0.5)
        holders = [
            self.add_furniture("bed", "bedroom"),
            self.add_furniture("shelf", "playroom"),
            self.add_furniture("table", "playroom"),
        ]
        self.add_items(["book"], holders)  # not a toy
        kinds = self._rand_subset(TOYS, 2 + int(self.np_random.integers(2)))
        self.toys = self.add_items(kinds, holders)

    def goal_text(self) -> str:
        return f"Collect the toys: put {listing([t.kind.name for t in self.toys])} in the box."

    def goal_reached(self) -> bool:
        return all(t in self.box.items for t in self.toys)

    def solve(self, planner: Planner) -> None:
        for item in planner.in_turn(self.toys):
            planner.bring(item, self.box)
