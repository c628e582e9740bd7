"""The skills' one protocol: a skill is a step toward what the goal's words say, or None.

`Skill = Callable[[Turn], Plan | None]`. The search source (prag.agent.sources.search_plans) runs
the skills its family declares (`Domain.skills`, names of prag.agent.skills.repertoire), in the
family's order, each step; the first plan a skill gives is search's proposal. A family that
declares none is searched by its goal's facts and its sub-goals alone.

A skill sees the `Turn`: the observation, the episode's state, what the goal's words were read
into for the current reading (`Instructions`, made anew when the goal is revised), and the thing
an instruction sends the agent to find now (`sought`), which the skills before it pass on: a
conditional branch decided names a new one; an instruction about a thing made earlier names none.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from prag.agent.plans import Plan
from prag.agent.skills.carry import Carry
from prag.agent.skills.compared import Experiment
from prag.agent.skills.conditions import Conditions
from prag.agent.skills.described import DescribedThings
from prag.agent.skills.explore import find_plan, go_plan, missing
from prag.agent.skills.instructed import Instructed
from prag.agent.skills.making import Making, made, named_parts
from prag.agent.world.places import Places
from prag.agent.world.state import EpisodeState
from prag.envs.base import Observation, Triple
from prag.envs.domain import Domain
from prag.sources import StepSource


@dataclass
class Instructions:
    """What the goal's words were read into for one reading, and what the skills keep of it
    across the episode's steps."""

    goal: str
    domain: Domain
    places: Places
    gamble_window: float  # the share of the step budget a gamble on an irrevocable step may take
    later: int  # the rounds that play the task again after this one (a wrong branch answer is ruled out there)
    instructed: Instructed
    carry: Carry
    conditions: Conditions
    making: Making
    described: DescribedThings  # the LLM's choices, kept across readings
    experiment: Experiment | None = None  # the things a superlative describes, measured alike
    made: list[str] = field(default_factory=list)  # what the episode's combinations made
    nothing_to_make: set[str] = field(default_factory=set)  # rooms where things of a kind to make were, and no step

    def prepare(self, state: EpisodeState) -> None:
        """Before the skills of a step: the focuses experience verified, and what was made."""
        self.instructed.heed(state.lessons.verified)
        wanted = self.to_make(state)  # "the intermediate paint you created": a part of what is to be made
        self.made = made(scenes(state), self.domain)
        self.instructed.made = set(self.made) & set(named_parts(wanted) if wanted else ())

    def to_make(self, state: EpisodeState) -> str | None:
        """The next thing the instructions name, by its name, that no thing seen is called (one
        made earlier in the episode, a "paint you created", waits for it)."""
        observed = state.observed
        for target in self.instructed.left:
            if target.made:
                continue
            if target.description is not None or target.kind or target.about is not None:
                return None
            return None if target.words in observed.names_seen() else target.words
        return None

    def step(self, step: str) -> Plan:
        """One step the goal's words call for."""
        return Plan((step,), StepSource.SUBGOAL, goal=self.goal)


@dataclass
class Turn:
    """One step's run of the skills."""

    observation: Observation
    state: EpisodeState
    work: Instructions
    _sought: tuple[str | None] | None = None  # set by a skill; until then the next instruction's thing
    _found: dict[str, Plan | None] = field(default_factory=dict)  # find-X's plan, by the thing sought

    @classmethod
    def start(cls, observation: Observation, state: EpisodeState, work: Instructions) -> Turn:
        work.prepare(state)
        return cls(observation, state, work)

    @property
    def sought(self) -> str | None:
        """The thing an instruction sends the agent to find now: the next instruction's, as the
        skills before left it (`instructed` moves past the instructions taken), unless one said
        otherwise."""
        return self.work.instructed.next if self._sought is None else self._sought[0]

    @sought.setter
    def sought(self, thing: str | None) -> None:
        self._sought = (thing,)

    @cached_property
    def taken(self) -> list[str | None]:
        """The actions taken so far (read by several skills a step: listed once)."""
        return [step.action for step in self.state.steps]

    def seeking(self) -> bool:
        """An instruction's thing is sought, and the family's own needs were all seen."""
        return self.sought is not None and not missing(self.state.observed)

    def found(self) -> Plan | None:
        """find-X's way to the thing sought: where it was seen before its turn, else where it may be."""
        sought = self.sought
        if sought is None:
            return None
        if sought not in self._found:  # once a step: where it may be can cost an LLM call
            observed = self.state.observed
            # What is closed is opened last, once no skill after this one has a step (`closed`).
            self._found[sought] = go_plan(observed.room_seen(sought), observed) or find_plan(
                [sought], observed, self.work.places, containers=False)
        return self._found[sought]

    def nowhere(self) -> bool:
        """The thing sought is named by nothing in any place: every place was searched and
        find-X has no way to it ("a(n) animal": words for a thing, not its name)."""
        return self.seeking() and self.found() is None and not self.state.observed.to_search()


Skill = Callable[[Turn], Plan | None]


def scenes(state: EpisodeState) -> list[tuple[str | None, list[Triple]]]:
    """Each step's action and the scene graph after it."""
    return [(step.action, step.graph) for step in state.steps]


def timeline(state: EpisodeState) -> list[tuple[int, str | None, str]]:
    """Each step's index, action and observation."""
    return [(t, step.action, step.observation) for t, step in enumerate(state.steps)]
