"""A plan source: one knowledge source the agent consults, in `--sources` order, each step before
the mediator decides between following a plan and asking (registered in prag.agent.chain; the
source names are prag.sources'). A source offers the actor a step or a plan for the observation,
or nothing; when the goal is revised it restarts, forgetting what it offered for the old reading.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from prag.agent.actor import Actor
from prag.agent.goal import Goal
from prag.agent.llm_step import LLMStep
from prag.agent.places import Ranking
from prag.agent.state import EpisodeState
from prag.envs.base import Observation
from prag.envs.domain import Domain
from prag.envs.sam import ActionModel
from prag.llm.base import LLM
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility

if TYPE_CHECKING:  # the config is the agent's, which builds the chain
    from prag.agent.agent import AgentConfig


class PlanSource(Protocol):
    def offer(self, observation: Observation) -> None:
        """Offer the actor a step or a plan for this observation, or nothing."""

    def restart(self) -> None:
        """The goal was revised (the actor restarted too): plan for the new reading afresh."""


@dataclass(frozen=True)
class Planning:
    """What the plan sources of one episode work with: the agent's settings, the episode's goal,
    state and LLM step, the actor they offer plans to, and how a reading found wrong is revised."""

    config: AgentConfig
    domain: Domain
    llm: LLM
    seed: int
    experiences: ExperienceSource | None
    corrections: CorrectionSource | None
    visibility: Visibility
    ranking: Ranking  # the semantic memory: kinds of place where a kind of thing was seen
    world_model: ActionModel | None  # the action model learned from the store, if one was
    goal: Goal
    state: EpisodeState
    llm_step: LLMStep
    actor: Actor
    revise: Callable[[str, dict[str, str]], None]
    first_scene: str  # the episode's first scene graph, as text
