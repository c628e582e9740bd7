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

from prag.envs.base import KnowsItsPlan, Observation, Task, Triple, scene_text_from_triples
from prag.envs.domain import Domain, GoalTemplate, Undo
from prag.envs.facts import PLACED, GoalFacts
from prag.envs.goals import FormalGoal, GoalSchema
from prag.envs.registry import Family
from prag.errors import SpecError

PLACES = ("shelf 1", "shelf 2", "table 1", "counter 1", "box 1")
OPENS = frozenset({"box 1"})  # places that open; they start closed
THINGS = ("cup 1", "apple 1", "plate 1")


def kind(name: str) -> str:
    return name.rsplit(" ", 1)[0]


def link(place: str) -> str:
    """How a thing rests at `place`: in what opens, on the rest."""
    return "in" if place in OPENS else "on"


class PantryEnv(KnowsItsPlan):
    """One pantry task: things placed by the task's seed, a goal naming a kind of thing and of place."""

    def __init__(self, task: Task) -> None:
        self.task = task

    def reset(self) -> Observation:
        rng = random.Random(self.task.seed)
        self.where = {thing: rng.choice(PLACES) for thing in THINGS}
        self.thing = rng.choice(THINGS)
        self.target = rng.choice([p for p in PLACES if kind(p) != kind(self.where[self.thing])])
        self.at: str | None = None
        self.held: str | None = None
        self.open: set[str] = set()
        self.goal = f"put {'an' if self.thing[0] in 'aeiou' else 'a'} {kind(self.thing)} {link(self.target)} {kind(self.target)}"
        source = self.where[self.thing]
        self._plan = [f"go to {source}", *([f"open {source}"] if source in OPENS else []), f"take {self.thing} from {source}",
                      f"go to {self.target}", *([f"open {self.target}"] if self.target in OPENS else []),
                      f"put {self.thing} {link(self.target)} {self.target}"]
        return self._observe("You are in the pantry. You see " + ", ".join(PLACES) + ".")

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

    def _observe(self, text: str) -> Observation:
        """What the agent sees: the things where it stands (if the place is open), what it holds,
        whether the place it stands at is open."""
        triples: list[Triple] = [("agent", "holds", self.held)] if self.held else []
        if self.at in OPENS:
            triples.append((self.at, "is", "open" if self.at in self.open else "closed"))
        if self._reachable():
            triples += [(t, link(p), p) for t, p in self.where.items() if p == self.at]
        won = self.where.get(self.thing) is not None and kind(self.where[self.thing]) == kind(self.target)
        return Observation(self.goal, text, self._admissible(), triples, scene_text_from_triples(self.at, triples),
                           won=won, done=won, location=self.at)


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


DOMAIN = Domain(
    name="pantry",
    rules="You tidy a pantry. Each turn pick one admissible action. Open the box to see inside.",
    undo=(Undo(r"take (?P<x>.+) from (?P<y>.+)", ("put {x} on {y}", "put {x} in {y}")), Undo(r"open (?P<x>.+)", ("close {x}",))),
    move=r"go to (?P<to>.+)",
    entity=r"\b[a-z]+ \d+\b",
    placement={"in": "in", "on": "on"},
    goals=(GoalTemplate(r"put (?:an? )?(?P<obj>\w+) (?:in|on) (?P<recep>\w+)"),),
    goal_schema=f"{__name__}:schema",
    goal_facts=f"{__name__}:as_facts",
)

FAMILY = Family(from_params, DOMAIN)  # what an entry point in `prag.families` names
