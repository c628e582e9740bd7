"""Pantry: a family written for the tests, as a user would add one (README, "Add your own environment").

Five places, one of which (the box) opens; three things; one goal per task: put a thing of one
kind in or on a place of another ("put a cup on table"). All it gives prag is the `Environment`
protocol and a `Domain`: names, moves, a goal schema and what its goals mean as facts. It gives
no action model and no placement table, so exploration (find-X), the action model (learned from
its stored episodes), search and memory all come from experience.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from prag.envs.base import Task
from prag.envs.domain import GoalTemplate
from prag.envs.facts import PLACED, GoalFacts
from prag.envs.goals import FormalGoal, GoalSchema
from prag.envs.registry import Family
from prag.errors import SpecError
from tests.families.places import PlacesEnv, kind, room_domain

PLACES = ("shelf 1", "shelf 2", "table 1", "counter 1", "box 1")
OPENS = frozenset({"box 1"})  # places that open; they start closed
THINGS = ("cup 1", "apple 1", "plate 1")


class PantryEnv(PlacesEnv):
    """One pantry task: things placed by the task's seed, a goal naming a kind of thing and of place."""

    PLACES = PLACES
    OPENS = OPENS
    INTRO = "You are in the pantry."

    def start(self, rng: random.Random) -> tuple[dict[str, str], str, list[str]]:
        where = {thing: rng.choice(PLACES) for thing in THINGS}
        self.thing = rng.choice(THINGS)
        self.target = rng.choice([p for p in PLACES if kind(p) != kind(where[self.thing])])
        goal = f"put {'an' if self.thing[0] in 'aeiou' else 'a'} {kind(self.thing)} {self.link(self.target)} {kind(self.target)}"
        source = where[self.thing]
        plan = [*self.visit(source), f"take {self.thing} from {source}", *self.visit(self.target),
                f"put {self.thing} {self.link(self.target)} {self.target}"]
        return where, goal, plan

    def won(self) -> bool:
        return self.where.get(self.thing) is not None and kind(self.where[self.thing]) == kind(self.target)


class PantrySource:
    """`tasks` pantry tasks, their seeds drawn from `seed`."""

    def __init__(self, tasks: int, seed: int) -> None:
        rng = random.Random(seed)
        self._tasks = [Task(f"put-{n}", "put", rng.randrange(2**31)) for n in range(tasks)]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def make(self, task: Task) -> PantryEnv:
        return PantryEnv(task)


def from_params(params: dict[str, Any], spec_dir: Path) -> PantrySource:
    """The family's factory: a spec's [params] are `tasks` and `seed`."""
    unknown = set(params) - {"tasks", "seed"}
    if unknown:
        raise SpecError(f"pantry: unknown params {sorted(unknown)}; allowed: seed, tasks")
    return PantrySource(int(params.get("tasks", 8)), int(params.get("seed", 0)))


def schema() -> GoalSchema:
    """The one formal goal: a thing of a kind in or on a place of a kind."""
    kinds = {"obj": sorted({kind(t) for t in THINGS}), "recep": sorted({kind(p) for p in PLACES})}
    return GoalSchema({"put": "put {obj} on {recep}"}, lambda: kinds)


def as_facts(goal: FormalGoal) -> GoalFacts:
    """"put cup on table": a cup placed at a table."""
    slots = dict(goal.slots)
    return GoalFacts((("o", slots["obj"]), ("r", slots["recep"])), ((PLACED, "o", "r"),))


DOMAIN = room_domain(
    "pantry",
    rules="You tidy a pantry. Each turn pick one admissible action. Open the box to see inside.",
    goals=(GoalTemplate(r"put (?:an? )?(?P<obj>\w+) (?:in|on) (?P<recep>\w+)"),),
    goal_schema=f"{__name__}:schema",
    goal_facts=f"{__name__}:as_facts",
)

FAMILY = Family(from_params, DOMAIN)  # what an entry point in `prag.families` names
