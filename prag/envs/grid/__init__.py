"""A household grid world with Fast-Marching navigation, on minigrid (gymnasium) and scikit-fmm.

Everyday tasks in the spirit of Mini-BEHAVIOR — not Mini-BEHAVIOR itself, which is not
installable here: rooms with walls and doors, furniture holding up to three objects per
cell, objects with states, high-level actions whose "go to" is walked by the Fast
Marching Method, and the P-RAG paper's scene graph of what the agent sees.

    house.py    the world: rooms, doors, furniture and items on minigrid's RoomGrid
    objects.py  household objects with states (minigrid WorldObj subclasses)
    tasks/      one module per task, and the registry TASKS
    fmm.py      Fast-Marching navigation (skfmm distance field, descent, low-level actions)
    actions.py  high-level actions: admissible ones, and carrying one out
    scene.py    the scene graph (relation matrix -> triples -> text) and the observation text
    solver.py   plans per task, for SPL's shortest path
    env.py      GridEnv (prag's Environment) and the `grid` family's `from_params`
"""
from prag.envs.grid.env import GridEnv, GridTaskSource, from_params
from prag.envs.grid.tasks import TASKS

__all__ = ["TASKS", "GridEnv", "GridTaskSource", "from_params"]
