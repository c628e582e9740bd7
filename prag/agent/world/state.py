"""The episode so far, as the agent keeps it: one record per step, and what was decided and said.

A step is what the agent saw after an action (the first step: after the reset, with no action):
the observation, the scene graph as text and as triples, the location, and which source chose
the action. The prompt, the hints, loop detection and the mediator read the episode from here.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from prag.agent.protocol import Decision
from prag.agent.world.observed import Observed
from prag.envs.base import Observation, Triple, canonical
from prag.envs.domain import Domain
from prag.sources import StepSource


@dataclass(frozen=True)
class Recipe:
    """A combination seen (prag.agent.skills.making): the things (own names) gone after it and those new."""

    inputs: frozenset[str]
    outputs: frozenset[str]


@dataclass(frozen=True)
class Lessons:
    """What the past episodes retrieved for this task teach, learned from them in one place
    (prag.agent.sources.lessons.taught) when the episode starts and again when its goal is revised;
    every source and the LLM's step read it, none writes it. What this episode itself shows (a
    recipe made now, an action tried now) is the episode's own, kept in `EpisodeState`."""

    # the actions that failed this very task outright before (prag.agent.sources.past_episodes.fatal_actions)
    fatal: frozenset[str] = frozenset()
    # what they were aimed at, by every name (prag.agent.sources.past_episodes.fatal_things)
    failed_things: frozenset[str] = frozenset()
    # what a win of this very task answered its conditional branch with
    # (prag.agent.sources.past_episodes.won_things)
    won_things: frozenset[str] = frozenset()
    # (observation, scene, action) done in this task's lost episodes of earlier rounds
    # (prag.agent.sources.past_episodes.tried_before); read, never counted up
    tried_before: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    verified: tuple[str, ...] = ()  # what the goal's instructions name, as experience read it
    # how stored episodes answered described things, by own name (prag.agent.skills.answered)
    answers: dict[str, Counter[str]] = field(default_factory=dict)
    # what the right answers were like: their states and rooms (prag.agent.skills.answered.likeness)
    likeness: dict[str, Counter[str]] = field(default_factory=dict)
    # which way comparative descriptions read their measurements, as experience says (prag.agent.skills.compared)
    orientations: dict[str, Counter[int]] = field(default_factory=dict)
    recipes: tuple[Recipe, ...] = ()  # combinations seen in stored episodes (prag.agent.skills.making)
    # the actions after which the score of this very task rose in a stored episode of it
    # (prag.agent.sources.past_episodes.rewarded_actions)
    rewarded: frozenset[str] = frozenset()
    read: frozenset[int] = frozenset()  # the stored episodes these were learned from, by id


@dataclass(frozen=True)
class Step:
    """One step: the action taken (None at the reset) and what it led to."""

    action: str | None
    observation: str
    scene: str  # the scene graph as the text that is embedded
    graph: list[Triple]  # its triples, canonical
    location: str | None  # the scene graph's key node
    source: StepSource | None = None  # who chose the action; None at the reset, or an action not the agent's

    @classmethod
    def of(cls, action: str | None, observation: Observation, source: StepSource | None = None) -> Step:
        return cls(action, observation.text, observation.scene_text, canonical(observation.scene_triples),
                   observation.location, source)


@dataclass
class EpisodeState:
    """The episode's steps, what the agent has observed, what it decided and what the person said."""

    steps: list[Step]
    observed: Observed
    max_steps: int  # the episode's step budget (the environment's cap; 50 where it says none)
    outcomes: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (action, observation, scene) after it
    tried: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (observation, scene, action) from there
    utterances: list[tuple[int, str]] = field(default_factory=list)  # (index of the step it followed, text)
    decisions: list[Decision] = field(default_factory=list)  # every step's, in order
    # What the stored episodes retrieved for this task teach (prag.agent.sources.lessons): set by the
    # coordinator when the episode starts and when the goal is revised, read by every source.
    lessons: Lessons = field(default_factory=Lessons)
    subgoal: str | None = None  # the next sub-goal learned from reward, in words (prag.agent.sources.progress_plans)
    avoided: set[str] = field(default_factory=set)  # actions a stored score fell after, re-bound here (the same)
    last_changed: bool = True  # the last action changed the observation or the scene graph
    # A source takes the last step again, awaiting a change that takes time (a wait, the stove lit
    # again): that it changed nothing is then no reason to ask the LLM. Set for one step.
    awaiting: bool = False
    score: float | None = None  # the family's score now, where it keeps one
    rewarded: list[str] = field(default_factory=list)  # the actions after which it rose, in order
    steps_since_ask: int = 0
    asks: int = 0

    @classmethod
    def start(cls, observation: Observation, domain: Domain, goal: str) -> EpisodeState:
        budget = observation.max_steps if observation.max_steps is not None else 50
        return cls([Step.of(None, observation)], Observed.start(observation, domain, goal=goal), budget,
                   score=observation.score)

    @property
    def t(self) -> int:
        """How many steps there are, the reset's included."""
        return len(self.steps)

    @property
    def last(self) -> Step:
        return self.steps[-1]

    @property
    def history(self) -> list[tuple[str | None, str]]:
        """(action, observation) of every step."""
        return [(step.action, step.observation) for step in self.steps]

    @property
    def locations(self) -> list[str | None]:
        return [step.location for step in self.steps]

    @property
    def graphs(self) -> list[list[Triple]]:
        return [step.graph for step in self.steps]

    def decided(self, decision: Decision) -> Decision:
        self.decisions.append(decision)
        return decision

    def add(self, action: str, observation: Observation) -> None:
        """What `action` led to."""
        last = self.last
        self.last_changed = (observation.text, observation.scene_text) != (last.observation, last.scene)
        self.awaiting = False
        self.tried[(last.observation, last.scene, action)] += 1
        # The decision of this step, if the agent was asked for it (`decided` once a step).
        decision = self.decisions[-1] if len(self.decisions) == self.t else None
        source = decision.source if decision is not None and decision.action == action else None
        self.steps.append(Step.of(action, observation, source))
        # The scene graph tells apart visits that look alike but differ (going back holding something).
        self.outcomes[(action, observation.text, observation.scene_text)] += 1
        self.observed.update(action, observation)
        if self.score is not None and observation.score is not None and observation.score > self.score:
            self.rewarded.append(action)
        self.score = observation.score

    def hear(self, text: str) -> None:
        """The person's words join the episode after the latest step."""
        self.utterances.append((self.t - 1, " ".join(text.split())))
