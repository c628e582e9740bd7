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

from prag.envs.base import KnowsItsPlan, Observation, Task, Triple, scene_text_from_triples
from prag.envs.domain import Domain, Undo
from prag.envs.registry import Family
from prag.errors import SpecError

PLACES = ("shelf 1", "table 1", "counter 1", "box 1", "basket 1")
OPENS = frozenset({"box 1"})
HOME = {"cup": "shelf 1", "book": "shelf 1", "apple": "box 1", "plate": "table 1", "sock": "basket 1"}
GOAL = "Put the things where they belong."


def kind(name: str) -> str:
    return name.rsplit(" ", 1)[0]


def link(place: str) -> str:
    return "in" if place in OPENS or place == "basket 1" else "on"


class TidyEnv(KnowsItsPlan):
    def __init__(self, task: Task) -> None:
        self.task = task

    def reset(self) -> Observation:
        rng = random.Random(self.task.seed)
        things = [f"{k} 1" for k in rng.sample(sorted(HOME), rng.choice((2, 3)))]
        self.where = {t: rng.choice([p for p in PLACES if p != HOME[kind(t)]]) for t in things}
        self.at: str | None = None
        self.held: str | None = None
        self.open: set[str] = set()
        self._plan = []
        for thing, place in self.where.items():
            home = HOME[kind(thing)]
            self._plan += [f"go to {place}", *([f"open {place}"] if place in OPENS else []), f"take {thing} from {place}",
                           f"go to {home}", *([f"open {home}"] if home in OPENS else []), f"put {thing} {link(home)} {home}"]
        return self._observe("You are in a room to tidy. You see " + ", ".join(PLACES) + ".")

    def step(self, action: str) -> Observation:
        if action not in self._admissible():
            return self._observe("Nothing happens.")
        verb, _, rest = action.partition(" ")
        if verb == "go":
            self.at = rest.removeprefix("to ")
        elif verb == "open":
            self.open.add(rest)
        elif verb == "close":
            self.open.discard(rest)
        elif verb == "take":
            self.held = rest.split(" from ")[0]
            del self.where[self.held]
        elif verb == "put" and self.held is not None and self.at is not None:
            self.where[self.held], self.held = self.at, None
        return self._observe(f"You {action}.")

    def close(self) -> None:
        pass

    def _reachable(self) -> bool:
        return self.at is not None and (self.at not in OPENS or self.at in self.open)

    def _admissible(self) -> list[str]:
        actions = [f"go to {p}" for p in PLACES if p != self.at] + ["look"]
        if self.at in OPENS:
            actions.append(f"{'close' if self.at in self.open else 'open'} {self.at}")
        if self._reachable() and self.held is None:
            actions += [f"take {t} from {self.at}" for t, p in self.where.items() if p == self.at]
        if self._reachable() and self.held is not None:
            actions.append(f"put {self.held} {link(str(self.at))} {self.at}")
        return actions

    def _score(self) -> float:
        things = [*self.where, *([self.held] if self.held else [])]
        home = sum(1 for t, p in self.where.items() if p == HOME[kind(t)])
        return round(100 * home / len(things))

    def _observe(self, text: str) -> Observation:
        triples: list[Triple] = [("agent", "holds", self.held)] if self.held else []
        if self.at in OPENS:
            triples.append((self.at, "is", "open" if self.at in self.open else "closed"))
        if self._reachable():
            triples += [(t, link(p), p) for t, p in self.where.items() if p == self.at]
        score = self._score()
        return Observation(GOAL, text, self._admissible(), triples, scene_text_from_triples(self.at, triples),
                           won=score >= 100, done=score >= 100, location=self.at, score=float(score))


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


DOMAIN = Domain(
    name="tidy",
    rules="You tidy a room. Each turn pick one admissible action. Open the box to see inside.",
    undo=(Undo(r"take (?P<x>.+) from (?P<y>.+)", ("put {x} on {y}", "put {x} in {y}")), Undo(r"open (?P<x>.+)", ("close {x}",))),
    move=r"go to (?P<to>.+)",
    entity=r"\b[a-z]+ \d+\b",
    placement={"in": "in", "on": "on"},
)

FAMILY = Family(from_params, DOMAIN)
