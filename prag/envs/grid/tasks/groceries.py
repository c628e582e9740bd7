"""Putting away groceries: the shopping lies about the kitchen and living room; into the fridge
with it, and close the fridge."""
from __future__ import annotations

from prag.envs.grid.house import listing
from prag.envs.grid.solver import Planner, SolvableTask

GROCERIES = ("apple", "milk", "cheese", "bread", "butter", "eggs")


class PutAwayGroceries(SolvableTask):
    task_name = "put_away_groceries"
    mission_text = "put the groceries away in the fridge"
    room_names = ("kitchen", "living room")
    rows, cols = 1, 2

    def populate(self) -> None:
        self.fridge = self.add_furniture("fridge", "kitchen")
        counter = self.add_furniture("counter", "kitchen")
        table = self.add_furniture("table", "living room")
        self.add_items(["keys"], [table, counter])  # belongs where it is
        kinds = self._rand_subset(GROCERIES, 2 + int(self.np_random.integers(2)))
        self.groceries = self.add_items(kinds, [counter, table])

    def goal_text(self) -> str:
        kinds = [g.kind.name for g in self.groceries]
        return f"Put away the groceries: put {listing(kinds)} in the fridge, then close the fridge."

    def goal_reached(self) -> bool:
        return all(g in self.fridge.items for g in self.groceries) and not self.fridge.is_open

    def solve(self, planner: Planner) -> None:
        for item in planner.in_turn(self.groceries):
            planner.bring(item, self.fridge)
        planner.close(self.fridge)
