"""A plan source: one knowledge source the agent consults, in `--sources` order, each step before
the mediator decides between following a plan and asking (registered in prag.agent.sources.chain; the
source names are prag.sources'). A source offers the actor a step or a plan for the observation,
or nothing; when the goal is revised it restarts, forgetting what it offered for the old reading.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from prag.agent.asking.llm_step import LLMStep
from prag.agent.config import AgentSettings
from prag.agent.goals.goal import Goal
from prag.agent.sources.actor import Actor
from prag.agent.world.state import EpisodeState
from prag.envs.base import Observation
from prag.store.records import StepRecord


class PlanSource(Protocol):
    def offer(self, observation: Observation) -> None:
        """Offer the actor a step or a plan for this observation, or nothing."""

    def restart(self) -> None:
        """The goal was revised (the actor restarted too): plan for the new reading afresh."""


@dataclass(frozen=True)
class Planning:
    """What the plan sources of one episode work with: the agent's settings, the episode's goal,
    state and LLM step, the actor they offer plans to, and how a reading found wrong is revised."""

    settings: AgentSettings
    goal: Goal
    state: EpisodeState
    llm_step: LLMStep
    actor: Actor
    revise: Callable[[str, dict[str, str]], None]
    first: StepRecord  # the episode's first step: where it started and what it saw there
