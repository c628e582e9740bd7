"""The registry of household grid tasks, one module per task (as minigrid keeps its envs)."""
from __future__ import annotations

from prag.envs.grid.solver import SolvableTask
from prag.envs.grid.tasks.dishes import WashDishes
from prag.envs.grid.tasks.groceries import PutAwayGroceries
from prag.envs.grid.tasks.plants import WaterPlants
from prag.envs.grid.tasks.toys import CollectToys
from prag.envs.grid.tasks.trash import ThrowAwayTrash

TASKS: dict[str, type[SolvableTask]] = {
    cls.task_name: cls
    for cls in (PutAwayGroceries, ThrowAwayTrash, WaterPlants, CollectToys, WashDishes)
}
