"""The grid tasks' own solver: plans of high-level actions, found by playing them.

Each task's `solve(planner)` says what to do in terms of a few steps (fetch an item, bring
it somewhere, set a state); the `Planner` turns each into high-level actions and carries
them out at once on its own copy of the world (same task, same seed), so it always plans
from the true state (which doors are open, where the agent stands) and a plan it returns
has been played to the goal. Its length is the task's shortest known path for SPL, in
high-level actions, the unit the agent's steps are counted in.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from prag.envs.grid.actions import execute
from prag.envs.grid.house import HouseholdEnv
from prag.envs.grid.objects import Furniture, Item, cell_of
from prag.errors import PragError


class PlanError(PragError):
    """The solver could not play a task to its goal (a bug in a task, never the agent's fault)."""


class Planner:
    def __init__(self, world: HouseholdEnv) -> None:
        self.world = world
        self.plan: list[str] = []

    def do(self, action: str) -> None:
        outcome = execute(self.world, action)
        if not outcome.ok:
            raise PlanError(f"{self.world.task_name}: solver step {action!r} refused: {outcome.message}")
        self.plan.append(action)

    def enter(self, room: str) -> None:
        """Walk room by room to `room`, opening closed doors on the way."""
        for door, nxt in self._rooms_path(self.world.agent_room, room):
            if not door.is_open:
                self.do(f"go to {door.name}")
                self.do(f"open {door.name}")
            self.do(f"go to {nxt}")

    def _rooms_path(self, start: str, goal: str) -> list[tuple]:
        # breadth-first over the doors: few rooms, so the fewest doors is the shortest plan
        came: dict[str, tuple] = {start: ()}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            for door in self.world.doors_of(here):
                nxt = door.other_side(here)
                if nxt not in came:
                    came[nxt] = (here, door)
                    queue.append(nxt)
        path = []
        while goal != start:
            before, door = came[goal]
            path.append((door, goal))
            goal = before
        return path[::-1]

    def reach(self, piece: Furniture) -> None:
        """Stand in front of a piece of furniture."""
        room = self.world.room_at(cell_of(piece))
        assert room is not None
        if room != self.world.agent_room:
            self.enter(room)
        if self.world.faced() is not piece:
            self.do(f"go to {piece.name}")

    def open(self, piece: Furniture) -> None:
        self.reach(piece)
        if piece.kind.openable and not piece.is_open:
            self.do(f"open {piece.name}")

    def close(self, piece: Furniture) -> None:
        self.reach(piece)
        if piece.is_open:
            self.do(f"close {piece.name}")

    def switch(self, piece: Furniture, on: bool) -> None:
        self.reach(piece)
        if piece.is_on != on:
            self.do(f"toggle {piece.name}")

    def in_turn(self, items: list[Item]) -> Iterator[Item]:
        """The items one by one, next always one in the agent's room if there is any left."""
        left = list(items)
        while left:
            here = self.world.agent_room
            nxt = next((i for i in left if self._room_of(i) == here), left[0])
            left.remove(nxt)
            yield nxt

    def _room_of(self, item: Item) -> str | None:
        holder = self.world.holder_of(item)
        return self.world.agent_room if holder is None else self.world.room_at(cell_of(holder))

    def fetch(self, item: Item) -> None:
        holder = self.world.holder_of(item)
        if holder is None:  # already in hand
            return
        self.open(holder)
        self.do(f"pick up {item.name}")

    def bring(self, item: Item, to: Furniture) -> None:
        self.fetch(item)
        self.open(to)
        self.do(f"drop {item.name} {to.kind.holds} {to.name}")


class SolvableTask(HouseholdEnv):
    """A household task that says how its solver plays it: every registered grid task is one."""

    def solve(self, planner: Planner) -> None:
        """Play the task to its goal through the planner's high-level actions (subclasses)."""
        raise NotImplementedError


def find_plan(task_cls: type[SolvableTask], seed: int, room_size: int) -> list[str]:
    """The solver's plan for one task instance, played to the goal on a fresh copy."""
    world = task_cls(room_size=room_size)
    world.reset(seed=seed)
    planner = Planner(world)
    world.solve(planner)
    if not world.goal_reached():
        raise PlanError(f"{task_cls.task_name} seed {seed}: the solver's plan ends short of the goal")
    world.close()
    return planner.plan
