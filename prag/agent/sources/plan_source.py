"""What the plan sources of one episode work with (registered in prag.agent.sources.chain; each
a `Proposer` to the arbiter, prag.agent.proposal)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prag.agent.asking.llm_step import LLMStep
from prag.agent.config import AgentSettings
from prag.agent.goals.goal import Goal
from prag.agent.world.state import EpisodeState
from prag.store.records import StepRecord


@dataclass(frozen=True)
class Planning:
    """The agent's settings, the episode's goal, state and LLM step, and how a reading found
    wrong is revised (the arbiter restarts, and every source with it)."""

    settings: AgentSettings
    goal: Goal
    state: EpisodeState
    llm_step: LLMStep
    revise: Callable[[str, dict[str, str]], None]
    first: StepRecord  # the episode's first step: where it started and what it saw there
