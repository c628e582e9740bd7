"""The Agent interface the runner plays (after TextWorld's `Agent`): reset / act / observe / finish.

The runner knows agents only through this protocol: it resets the agent with the first
observation, asks it for a `Decision` each step, tells it what the action led to, and at the
end takes its `Trace`, what the store keeps of the episode beyond its steps.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from prag.envs.base import Observation
from prag.llm.base import Completion, Cost
from prag.sources import StepSource
from prag.store.episode_extra import AgentReport


@dataclass(frozen=True)
class Decision:
    """One step's choice: the action, the thought behind it (ReAct), and who chose it."""

    action: str
    thought: str = ""
    valid: bool = True  # False: no admissible answer came back; sent as it was
    source: StepSource = StepSource.LLM  # who chose the action
    asked: bool = True  # the mediator asked the LLM this step (When2Ask's y_t = Ask)
    same_plan: bool = False  # it asked, and the answer was the plan's next step anyway (penalised)


@dataclass
class Usage:
    """What the episode cost in LLM calls, and the answers asked again, invalid or banned."""

    cost: Cost = Cost()
    reasks: int = 0
    invalid_actions: int = 0
    banned_actions: int = 0

    def add(self, completion: Completion) -> None:
        """Count one LLM call."""
        self.cost += completion.cost


@dataclass
class Trace:
    """What an agent reports of a finished episode, besides its steps: the runner stores it."""

    goal: str
    usage: Usage
    retrieved: list[int] = field(default_factory=list)  # ids of the episodes in the last prompt
    report: AgentReport = field(default_factory=AgentReport)  # thoughts, decisions, goal reading, ...


@runtime_checkable
class Agent(Protocol):
    """Plays one episode at a time."""

    def reset(self, observation: Observation) -> None:
        """Start an episode from its first observation."""
        ...

    def act(self, observation: Observation) -> Decision:
        """The next action for this observation."""
        ...

    def observe(self, action: str, observation: Observation) -> None:
        """What the action led to."""
        ...

    def finish(self) -> Trace:
        """End the episode and report what the store keeps of it."""
        ...
