"""Washing the dishes: dirty dishes stand on the dining table; wash each at the kitchen sink,
put it away in the cabinet, and leave the sink turned off."""
from __future__ import annotations

from prag.envs.grid.house import listing
from prag.envs.grid.solver import Planner, SolvableTask

DISHES = ("plate", "cup")


class WashDishes(SolvableTask):
    task_name = "wash_dishes"
    mission_text = "wash the dishes and put them away"
    room_names = ("kitchen", "dining room")
    rows, cols = 1, 2

    def populate(self) -> None:
        self.sink = self.add_furniture("sink", "kitchen")
        self.cabinet = self.add_furniture("cabinet", "kitchen")
        table = self.add_furniture("table", "dining room")
        kinds = self._rand_subset(DISHES, 1 + int(self.np_random.integers(2)))
        self.dishes = self.add_items(kinds, [table])
        for dish in self.dishes:
            dish.is_dirty = True

    def goal_text(self) -> str:
        kinds = listing([d.kind.name for d in self.dishes])
        return f"Wash the dishes: clean {kinds} at the sink, put them in the cabinet, then turn the sink off."

    def goal_reached(self) -> bool:
        return (
            all(not d.is_dirty and d in self.cabinet.items for d in self.dishes)
            and not self.sink.is_on
        )

    def solve(self, planner: Planner) -> None:
        dishes = list(planner.in_turn(self.dishes))
        for n, dish in enumerate(dishes, 1):
            planner.fetch(dish)
            planner.switch(self.sink, on=True)
            planner.do(f"wash {dish.name} at {self.sink.name}")
            if n == len(dishes):  # turned off while standing at it: no walk back
                planner.switch(self.sink, on=False)
            planner.bring(dish, self.cabinet)
