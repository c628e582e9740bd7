"""The room the test families share (the pantry, tidy): places to go to, one that opens, things
to take from one place and put at another. A family says what it has (its places, which open,
which hold things in) and what a task wants (its goal, when it is won, its score, if any).
"""
from __future__ import annotations

import random

from prag.envs.base import KnowsItsPlan, Observation, Task, Triple, scene_text_from_triples
from prag.envs.domain import Domain, Undo


def kind(name: str) -> str:
    return name.rsplit(" ", 1)[0]


class PlacesEnv(KnowsItsPlan):
    """A task in a room of `PLACES`; those in `OPENS` open and start closed; a thing rests in a
    place of `OPENS` or `INSIDE`, on the rest. `start` places the things and says the goal."""

    PLACES: tuple[str, ...] = ()
    OPENS: frozenset[str] = frozenset()
    INSIDE: frozenset[str] = frozenset()
    INTRO = "You are in a room."

    def __init__(self, task: Task) -> None:
        self.task = task

    def start(self, rng: random.Random) -> tuple[dict[str, str], str, list[str]]:
        """Where each thing lies, the goal's words, and the plan that wins."""
        raise NotImplementedError

    def won(self) -> bool:
        raise NotImplementedError

    def score(self) -> float | None:
        """The family's score, where it keeps one."""
        return None

    def link(self, place: str) -> str:
        """How a thing rests at `place`."""
        return "in" if place in self.OPENS or place in self.INSIDE else "on"

    def reset(self) -> Observation:
        self.at: str | None = None
        self.held: str | None = None
        self.open: set[str] = set()
        self.where, self.goal, self._plan = self.start(random.Random(self.task.seed))
        return self._observe(f"{self.INTRO} You see {', '.join(self.PLACES)}.")

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

    def visit(self, place: str) -> list[str]:
        """The steps that go to `place` and open it where it opens."""
        return [f"go to {place}", *([f"open {place}"] if place in self.OPENS else [])]

    def _reachable(self) -> bool:
        return self.at is not None and (self.at not in self.OPENS or self.at in self.open)

    def _admissible(self) -> list[str]:
        actions = [f"go to {p}" for p in self.PLACES if p != self.at] + ["look"]
        if self.at in self.OPENS:
            actions.append(f"{'close' if self.at in self.open else 'open'} {self.at}")
        if self._reachable() and self.held is None:
            actions += [f"take {t} from {self.at}" for t, p in self.where.items() if p == self.at]
        if self._reachable() and self.held is not None:
            actions.append(f"put {self.held} {self.link(str(self.at))} {self.at}")
        return actions

    def _observe(self, text: str) -> Observation:
        """What the agent sees: the things where it stands (if the place is open), what it holds,
        whether the place it stands at is open."""
        triples: list[Triple] = [("agent", "holds", self.held)] if self.held else []
        if self.at in self.OPENS:
            triples.append((self.at, "is", "open" if self.at in self.open else "closed"))
        if self._reachable():
            triples += [(t, self.link(p), p) for t, p in self.where.items() if p == self.at]
        won = self.won()
        return Observation(self.goal, text, self._admissible(), triples, scene_text_from_triples(self.at, triples),
                           won=won, done=won, location=self.at, score=self.score())


def room_domain(name: str, rules: str, **more: object) -> Domain:
    """A family's `Domain` on this room: its action grammar (go to, open and close, take from, put
    in or on), names of a kind and a number, and whatever else the family declares."""
    return Domain(
        name=name, rules=rules,
        undo=(Undo(r"take (?P<x>.+) from (?P<y>.+)", ("put {x} on {y}", "put {x} in {y}")), Undo(r"open (?P<x>.+)", ("close {x}",))),
        move=r"go to (?P<to>.+)", entity=r"\b[a-z]+ \d+\b", placement={"in": "in", "on": "on"},
        **more,  # type: ignore[arg-type]
    )
