"""Watering the plants: take the watering can, fill it at the kitchen sink (one canful waters
one plant), water every plant, and leave the sink turned off."""
from __future__ import annotations

from prag.envs.grid.solver import Planner, SolvableTask


class WaterPlants(SolvableTask):
    task_name = "water_plants"
    mission_text = "water the plants"
    room_names = ("kitchen", "living room", "bedroom")
    rows, cols = 1, 3

    def populate(self) -> None:
        self.sink = self.add_furniture("sink", "kitchen")
        counter = self.add_furniture("counter", "kitchen")
        shelf = self.add_furniture("shelf", "living room")
        self.plants = [self.add_furniture("plant", "living room")]
        if self.np_random.random() < 0.5:
            self.plants.append(self.add_furniture("plant", "bedroom"))
        self.can = self.add_items(["watering can"], [counter, shelf])[0]
        self.add_items(["book"], [shelf])

    def goal_text(self) -> str:
        which = "the plant" if len(self.plants) == 1 else f"all {len(self.plants)} plants"
        return f"Water {which} with the watering can, filled at the sink, then turn the sink off."

    def goal_reached(self) -> bool:
        return all(p.is_watered for p in self.plants) and not self.sink.is_on

    def solve(self, planner: Planner) -> None:
        planner.fetch(self.can)
        for n, plant in enumerate(self.plants, 1):
            planner.switch(self.sink, on=True)
            planner.do(f"fill {self.can.name} at {self.sink.name}")
            if n == len(self.plants):  # turned off while standing at it: no walk back
                planner.switch(self.sink, on=False)
            planner.reach(plant)
            planner.do(f"water {plant.name} with {self.can.name}")
