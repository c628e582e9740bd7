"""Errand: a second world for the skills ScienceWorld declares, on the room the test families share.

Its goals spell instructions, as ScienceWorld's do, in its own words: choose a thing (irrevocable:
choosing the wrong one ends the task), then take it somewhere ("First, choose the cup. Then, put it
in the basket."); the thing may be described ("a(n) fruit"), and where it goes may hang on a
weight read off the scale ("If the apple weight is above 5 kilograms, put it in the box."). The
family declares the skills that read such goals (`Domain.skills`) and what they act with: the
irrevocable action, the mark it leaves, what readies a carry, the put action.
"""
from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from prag.envs.base import Observation, Task, scene_text_from_triples
from prag.envs.registry import Family
from prag.errors import SpecError
from tests.families.places import PlacesEnv, kind, room_domain

PLACES = ("shelf 1", "table 1", "counter 1", "box 1", "basket 1")
OPENS = frozenset({"box 1"})
WEIGHT = {"apple": 7, "cup": 2, "book": 3, "sock": 1}  # kilograms, as the scale reads them
FRUIT = "apple"
GOALS = ("carry", "described", "branch")


class ErrandEnv(PlacesEnv):
    PLACES = PLACES
    OPENS = OPENS
    INSIDE = frozenset({"basket 1"})
    INTRO = "You are in a room with a scale."

    def start(self, rng: random.Random) -> tuple[dict[str, str], str, list[str]]:
        self.chosen: str | None = None
        self.failed = False
        things = [f"{k} 1" for k in sorted(WEIGHT)]
        # The thing to choose lies in the closed box or on a far place: find-X has to look for it.
        where = {t: rng.choice(PLACES[:3]) for t in things}
        shape = self.task.task_type
        self.target = f"{FRUIT} 1" if shape != "carry" else "cup 1"
        where[self.target] = "box 1"
        if shape == "carry":
            goal = "Your task is to put away the cup. First, choose the cup. Then, put it in the basket."
            self.home = "basket 1"
        elif shape == "described":
            goal = "Your task is to find a(n) fruit. First, choose the fruit. Then, put it in the basket."
            self.home = "basket 1"
        else:
            goal = ("Your task is to weigh the apple. First, choose the apple. If the apple weight is above 5 "
                    "kilograms, put it on the counter. If the apple weight is below 5 kilograms, put it in the basket.")
            self.home = "counter 1" if WEIGHT[FRUIT] > 5 else "basket 1"
        plan = [*self.visit("box 1"), f"choose {self.target}", f"take {self.target} from box 1", f"go to {self.home}",
                f"put {self.target} {self.link(self.home)} {self.home}"]
        return where, goal, plan

    def step(self, action: str) -> Observation:
        verb, _, thing = action.partition(" ")
        if action in self._admissible() and verb == "choose":
            self.chosen, self.failed = thing, thing != self.target
            return self._observe(f"You choose the {kind(thing)}." + (" That was not it." if self.failed else ""))
        if action in self._admissible() and verb == "weigh":
            return self._observe(f"The scale shows a weight of {WEIGHT[kind(thing)]} kilograms.")
        return super().step(action)

    def _admissible(self) -> list[str]:
        actions = super()._admissible()
        if self.chosen is None and self._reachable():
            actions += [f"choose {t}" for t, p in self.where.items() if p == self.at]
        if self.held is not None:
            actions += [f"choose {self.held}"] * (self.chosen is None) + [f"weigh {self.held}"]
        return actions

    def _observe(self, text: str) -> Observation:
        seen = super()._observe(text)
        things = {s for s, _, _ in seen.scene_triples if s != "agent"} | {o for s, r, o in seen.scene_triples if r == "holds"}
        # Every thing by its own name, and the place the agent stands at among what it sees.
        marks = [(t, "isa", kind(t)) for t in sorted(things | ({self.at} if self.at else set()))]
        marks += [(self.chosen, "is", "chosen")] if self.chosen in things else []
        triples = [*seen.scene_triples, *marks]
        done = seen.won or self.failed
        return replace(seen, scene_triples=triples, scene_text=scene_text_from_triples(self.at, triples), done=done,
                       admissible=[] if done else seen.admissible)

    def score(self) -> float:
        if self.failed:
            return -100.0
        return float(50 * (self.chosen == self.target) + 50 * (self.where.get(self.target) == self.home))

    def won(self) -> bool:
        return self.score() >= 100


DOMAIN = room_domain(
    "errand",
    rules="You run an errand. Each turn pick one admissible action. Choosing cannot be undone.",
    own_name="isa",
    irrevocable=r"choose (?P<x>.+)",
    marked="chosen",
    put="put {thing} in {place}",
    readies=("take",),
    skills=("instructed", "take-along", "conditions", "carry", "find", "described"),
)


class ErrandSource:
    def __init__(self, shape: str, tasks: int, seed: int) -> None:
        rng = random.Random(seed)
        self._tasks = [Task(f"errand-{shape}-{n}", shape, rng.randrange(2**31)) for n in range(tasks)]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def make(self, task: Task) -> ErrandEnv:
        return ErrandEnv(task)


def from_params(params: dict[str, Any], spec_dir: Path) -> ErrandSource:
    unknown = set(params) - {"goal", "tasks", "seed"}
    if unknown or params.get("goal", "carry") not in GOALS:
        raise SpecError(f"errand: params goal ({', '.join(GOALS)}), tasks and seed; got {sorted(params)}")
    return ErrandSource(str(params.get("goal", "carry")), int(params.get("tasks", 4)), int(params.get("seed", 0)))


FAMILY = Family(from_params, DOMAIN)
