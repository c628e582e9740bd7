"""The notes the agent adds to a step's prompt: small cues that small models lack.

Each hint reads the episode so far (a `Situation`) and returns its notes, one line each. The
agent holds the list of hints its environment family's Domain names (`hints_for`), and the
prompt shows their notes in that order. What a hint needs to know of a family's grammar (where
a move goes, how names look, what the agent holds) it asks the Domain.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from prag.envs.base import Triple
from prag.envs.domain import Domain
from prag.errors import PragError
from prag.retrieval.episodes import Experience, never_opened, where_things_were


@dataclass(frozen=True)
class Situation:
    """What the hints read at one step: the episode so far and what may be done now."""

    goal: str
    history: Sequence[tuple[str | None, str]]  # (action, observation); the reset has no action
    locations: Sequence[str | None]  # the scene graph's key node after each history entry
    graphs: Sequence[Sequence[Triple]]  # the scene graph's triples after each history entry
    outcomes: Counter[tuple[str, str, str]]  # (action, observation, scene) it led to: how often
    allowed: Sequence[str]  # the actions offered now
    held: set[str]  # what the agent holds now
    retrieved: Sequence[Experience]
    utterances: Sequence[tuple[int, str]]  # (history index it followed, what the person said)
    seen: Mapping[str, str]  # thing -> the place it was last seen in or on (`Observed.seen`)
    subgoal: str | None = None  # the next sub-goal learned from reward (prag.agent.sources.progress_plans)
    written: str | None = None  # the line of a text read to do next, as the goal follows it (prag.agent.goals.written)

    @property
    def goal_words(self) -> set[str]:
        """The goal's words, lower-cased."""
        return set(re.findall(r"[a-z]+", self.goal.lower()))

    def goal_names(self, kind: str) -> bool:
        """Whether the goal names things of this kind ("soda can": both words are in it)."""
        return set(kind.split()) <= self.goal_words


class Hint(Protocol):
    """One kind of note: `notes` returns its lines for this step (none when it has nothing to say)."""

    def notes(self, now: Situation) -> list[str]: ...


class Loops:
    """Actions that changed nothing (same observation, same scene graph) twice or more."""

    def notes(self, now: Situation) -> list[str]:
        return [
            f"Warning: you did '{action}' {count} times and nothing changed; do something else."
            for (action, _, _), count in now.outcomes.items()
            if count >= 2
        ]


@dataclass(frozen=True)
class Unvisited:
    """Places the agent could go to but has not been yet: the cue small models lack. Said only
    once some place was visited. Where moves name a direction, a way counts as taken from the
    place it was taken from."""

    domain: Domain

    def notes(self, now: Situation) -> list[str]:
        taken = {self._key(action, now.locations[i - 1]) for i, (action, _) in enumerate(now.history) if action}
        here = now.locations[-1]
        moves = [a for a in now.allowed if self.domain.movement(a) is not None]
        fresh = [self.domain.movement(a) for a in moves if self._key(a, here) not in taken]
        return [f"Note: not visited yet: {', '.join(map(str, fresh))}."] if fresh and len(fresh) < len(moves) else []

    def _key(self, action: str, where: str | None) -> tuple[str | None, str]:
        return (where if self.domain.relative_moves else None, action)


@dataclass(frozen=True)
class GoalObjectsSeen:
    """Where things the goal names were last seen: small models walk past them otherwise.
    What the agent holds is no longer where it was seen, so it is left out. The places are the
    scene graph's (what is in or on what), not where the agent stood: a grid room's description
    lists the things on every piece of furniture in it."""

    domain: Domain

    def notes(self, now: Situation) -> list[str]:
        seen = {
            thing: place for thing, place in now.seen.items()
            if now.goal_names(self.domain.kind(thing)) and thing not in now.held
        }
        return [f"Note: seen so far: {', '.join(f'{obj} at {where}' for obj, where in seen.items())}."] if seen else []


class NotOpened:
    """Closed places not opened yet, while the hands are free: the 1.5B model walked past the
    closed safe that held its goal object for 17 steps."""

    def notes(self, now: Situation) -> list[str]:
        closed = never_opened(now.graphs)
        return [f"Note: closed, not opened yet: {', '.join(closed)}."] if closed and not now.held else []


@dataclass(frozen=True)
class SeenInPastAttempts:
    """Where goal objects were in retrieved attempts at this same task (same goal, same first
    observation, so the same room): P-RAG's use of failed episodes, said where the model looks."""

    domain: Domain

    def notes(self, now: Situation) -> list[str]:
        places: dict[str, str] = {}
        for experience in now.retrieved:
            episode = experience.episode
            if episode.read_as != now.goal or episode.steps[0].observation != now.history[0][1]:
                continue
            for thing, place in where_things_were(episode, self.domain).items():
                if now.goal_names(self.domain.kind(thing)) and thing not in now.held:
                    places.setdefault(thing, place)
        listed = "; ".join(f"{thing} was {place}" for thing, place in places.items())
        return [f"Note: in your past attempts at this same task, {listed}."] if places else []


class Heard:
    """What the person said last, repeated with every step's actions."""

    def notes(self, now: Situation) -> list[str]:
        if not now.utterances:
            return []
        return [f'Note: the person told you: "{now.utterances[-1][1]}". Do what they say.']


class SubGoal:
    """The next sub-goal learned from reward: what a step that raised the score made true before;
    and the line of a text read that the goal follows next (a recipe's "fry the carrot")."""

    def notes(self, now: Situation) -> list[str]:
        notes = [f"Note: next sub-goal (it raised the score before): {now.subgoal}."] if now.subgoal else []
        return notes + ([f'Note: the text you read says to do next: "{now.written}".'] if now.written else [])


def hints_for(domain: Domain) -> list[Hint]:
    """The hints the domain names, in its order."""
    made: dict[str, Callable[[], Hint]] = {
        "loops": Loops,
        "unvisited": lambda: Unvisited(domain),
        "goal_objects_seen": lambda: GoalObjectsSeen(domain),
        "not_opened": NotOpened,
        "seen_in_past_attempts": lambda: SeenInPastAttempts(domain),
        "heard": Heard,
        "subgoal": SubGoal,
    }
    unknown = [name for name in domain.hints if name not in made]
    if unknown:
        raise PragError(f"domain {domain.name!r} names unknown hints {unknown}: use some of {', '.join(made)}")
    return [made[name]() for name in domain.hints]
