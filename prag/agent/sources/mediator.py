"""The mediator of When2Ask (Hu et al., 2023): each step, ask the LLM for a new plan, or keep
following the current one.

The planner is the LLM (with P-RAG's retrieval as its memory); the actor follows the current
plan step by step; the ask policy pi_ask(y_t | o_t, plan) decides every step whether to ask
(y_t = Ask) or to take the plan's next step. Policies, selectable per run:

- `always`: ask every step (P-RAG as published; today's behaviour);
- `hard-coded`: ask when the plan is exhausted, its next step is not admissible, or the last
  step changed nothing (the paper's baseline);
- `random`: ask with probability p (the paper's baseline);
- `learned`: a small network over `MediatorState.features()`, trained by reinforcement
  learning (PPO) on the reward of `ask_reward`.

With no plan at all there is nothing to follow, so every policy asks.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from prag.sources import EXPERIENCE_STEPS, StepSource

POLICIES = ("always", "hard-coded", "random", "learned")


@dataclass(frozen=True)
class MediatorState:
    """What the ask policy sees at one step: the observation's features and the current plan's."""

    t: int  # the step about to be taken, from 1
    max_steps: int
    has_plan: bool
    plan_source: StepSource | None  # None: no plan
    plan_left: int  # plan steps not yet taken
    next_admissible: bool  # the plan's next step is admissible now
    last_changed: bool  # the last action changed the observation or the scene graph
    steps_since_ask: int
    asks: int  # asks so far in the episode
    n_admissible: int
    holding: bool  # the agent holds something

    FEATURES = 11

    @property
    def can_follow(self) -> bool:
        """Whether there is a plan step to take instead of asking: only then do policies differ."""
        return self.has_plan and self.plan_left > 0

    def features(self) -> np.ndarray:
        """The state as a fixed-length vector in [0, 1], the learned policy's input."""
        horizon = max(self.max_steps, 1)
        return np.array(
            [
                self.t / horizon,
                float(self.has_plan),
                float(self.plan_source == StepSource.LLM),
                float(self.plan_source in EXPERIENCE_STEPS),
                min(self.plan_left, 20) / 20,
                float(self.next_admissible),
                float(self.last_changed),
                min(self.steps_since_ask, 20) / 20,
                min(self.asks, horizon) / horizon,
                min(self.n_admissible, 60) / 60,
                float(self.holding),
            ],
            dtype=np.float32,
        )


class AskPolicy(Protocol):
    """Decides, each step, whether to ask the LLM for a new plan."""

    name: str

    def ask(self, state: MediatorState) -> bool:
        """True: ask the LLM; False: take the current plan's next step."""
        ...


class Always:
    """Ask every step: one LLM call per step, as P-RAG plays."""

    name = "always"

    def ask(self, state: MediatorState) -> bool:
        return True


class HardCoded:
    """Ask only when the plan cannot go on: exhausted, its next step not admissible, or the last
    step changed nothing."""

    name = "hard-coded"

    def ask(self, state: MediatorState) -> bool:
        return not state.can_follow or not state.next_admissible or not state.last_changed


class RandomAsk:
    """Ask with probability `p` (always when there is no plan to follow)."""

    name = "random"

    def __init__(self, p: float = 0.5, seed: int = 0) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"the ask probability must be in [0, 1], got {p}")
        self.p = p
        self._random = random.Random(seed)

    def ask(self, state: MediatorState) -> bool:
        return not state.can_follow or self._random.random() < self.p


class Learned:
    """A trained policy: `decide(features) -> bool`, e.g. a PPO network's deterministic action."""

    name = "learned"

    def __init__(self, decide: Callable[[np.ndarray], bool]) -> None:
        self.decide = decide

    def ask(self, state: MediatorState) -> bool:
        return not state.can_follow or self.decide(state.features())


def ask_reward(won: bool, asks_returning_same_plan: int, penalty: float, gamma: float = 1.0, steps: int = 0) -> float:
    """When2Ask's return: the task reward (discounted by gamma^steps) minus `penalty` (lambda)
    for every ask whose answer was the plan already being followed."""
    return (gamma**steps) * float(won) - penalty * asks_returning_same_plan
