"""Tidy: a thin family, written as docs/new_family.md says a user would write one.

It gives prag only what every world gives: observations (read into triples), the admissible
actions, the task's text and a score. No goal schema, no goal templates, no placement table, no
action model: the task text is a sentence ("Put the things where they belong.") that names no
thing, and where each kind of thing belongs is the world's own rule, never said. The score says
it: each thing put where it belongs earns its share of 100 (taken away again if it is taken out).

Five places (two shelves... see PLACES; the box opens and starts closed), things of five kinds,
two or three of them a task, each first lying somewhere it does not belong.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from prag.envs.base import Task
from prag.envs.registry import Family
from prag.errors import SpecError
from tests.families.places import PlacesEnv, kind, room_domain

PLACES = ("shelf 1", "table 1", "counter 1", "box 1", "basket 1")
OPENS = frozenset({"box 1"})
HOME = {"cup": "shelf 1", "book": "shelf 1", "apple": "box 1", "plate": "table 1", "sock": "basket 1"}
GOAL = "Put the things where they belong."


class TidyEnv(PlacesEnv):
    PLACES = PLACES
    OPENS = OPENS
    INSIDE = frozenset({"basket 1"})
    INTRO = "You are in a room to tidy."

    def start(self, rng: random.Random) -> tuple[dict[str, str], str, list[str]]:
        things = [f"{k} 1" for k in rng.sample(sorted(HOME), rng.choice((2, 3)))]
        where = {t: rng.choice([p for p in PLACES if p != HOME[kind(t)]]) for t in things}
        plan = []
        for thing, place in where.items():
            home = HOME[kind(thing)]
            plan += [*self.visit(place), f"take {thing} from {place}", *self.visit(home),
                     f"put {thing} {self.link(home)} {home}"]
        return where, GOAL, plan

    def score(self) -> float:
        things = [*self.where, *([self.held] if self.held else [])]
        home = sum(1 for t, p in self.where.items() if p == HOME[kind(t)])
        return float(round(100 * home / len(things)))

    def won(self) -> bool:
        return self.score() >= 100


class TidySource:
    def __init__(self, tasks: int, seed: int) -> None:
        rng = random.Random(seed)
        self._tasks = [Task(f"tidy-{n}", "tidy", rng.randrange(2**31)) for n in range(tasks)]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def make(self, task: Task) -> TidyEnv:
        return TidyEnv(task)


def from_params(params: dict[str, Any], spec_dir: Path) -> TidySource:
    unknown = set(params) - {"tasks", "seed"}
    if unknown:
        raise SpecError(f"tidy: unknown params {sorted(unknown)}; allowed: seed, tasks")
    return TidySource(int(params.get("tasks", 8)), int(params.get("seed", 0)))


DOMAIN = room_domain(
    "tidy",
    rules="You tidy a room. Each turn pick one admissible action. Open the box to see inside.",
)

FAMILY = Family(from_params, DOMAIN)
