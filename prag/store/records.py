"""The plain records that flow into the store and out of it: runs, episodes and their steps.

Step t = 0 is the reset: no action, the first observation and scene graph. Step t >= 1 holds
the t-th action and what followed it, so an episode of n actions has n + 1 step records.
A step keeps its scene graph twice: as text (what is embedded) and as its key node and triples
(what readers of where things were use).

`EpisodeRecord` is the one type of an episode for every reader: the runner writes it, retrieval
and the console read it with its steps, and export/import move it as it is. The metrics read
what they count of it (`Store.outcomes`: prag.store.outcomes).
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from pydantic import ConfigDict, with_config

from prag.envs.base import Observation, Triple, canonical
from prag.llm.base import Cost
from prag.store.episode_extra import EpisodeExtra


def now() -> str:
    """The time of a record, as stored: UTC, ISO 8601, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def text_hash(text: str) -> str:
    """The key of a text's embedding: episodes refer to their goal's and scenes' vectors by it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class StepRecord:
    """One step of an episode: the action, what followed, and the scene graph after it."""

    t: int
    action: str | None
    observation: str
    scene: str  # the scene graph's text form, as embedded
    location: str | None = None  # the scene graph's key node
    triples: list[Triple] = field(default_factory=list)  # in canonical order (sorted, no repeats)
    score: float | None = None  # the family's score after the step, where it keeps one

    def __post_init__(self) -> None:
        self.triples = [tuple(triple) for triple in self.triples]  # type: ignore[misc]  # JSON gives lists

    @classmethod
    def of(cls, t: int, action: str | None, observation: Observation) -> "StepRecord":
        """The record of step t: `action` (None at the reset) and the observation it led to."""
        return cls(t, action, observation.text, observation.scene_text, observation.location,
                   canonical(observation.scene_triples), observation.score)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# Imports check lines against these types (prag.store.lines): a field they do not have is an error.
@with_config(ConfigDict(extra="forbid"))
@dataclass
class EpisodeRecord:
    """One played episode: what was played, its outcome and costs, and its steps."""

    run_id: str
    round: int
    task_id: str
    task_type: str
    goal: str
    won: bool
    steps: list[StepRecord]  # empty when read without them (`Store.outcomes`)
    shortest_path: int | None = None
    seed: int = 0
    source: str = "agent"  # "agent" or "correction"
    # Its LLM cost (`cost`), kept as these fields: stores and exported lines name them so.
    llm_calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    reasks: int = 0
    seconds: float = 0.0  # the whole episode's
    llm_seconds: float = 0.0
    extra: EpisodeExtra = field(default_factory=EpisodeExtra)
    id: int | None = None  # set by the store
    n_actions: int = 0  # actions taken (the agent's path length); counted from `steps` when given
    # The family's score at the end (ScienceWorld's 0-100, a failed task counting 0, as the papers
    # average it); None for families that only win or lose.
    score: float | None = None

    def __post_init__(self) -> None:
        if self.steps:
            self.n_actions = sum(1 for step in self.steps if step.action is not None)
            if self.score is None and self.steps[-1].score is not None:
                self.score = max(self.steps[-1].score, 0.0)

    @property
    def cost(self) -> Cost:
        """What the episode's LLM calls cost."""
        return Cost(self.llm_calls, self.prompt_tokens, self.cached_tokens, self.completion_tokens, self.llm_seconds)

    @property
    def read_as(self) -> str:
        """The goal as the agent read it (`extra.reading`, prag.agent.goals.readers), else as given."""
        reading = self.extra.reading
        return reading.sentence if reading is not None and reading.sentence else self.goal

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


STATUSES = ("running", "finished", "interrupted")  # of a run


@with_config(ConfigDict(extra="forbid"))
@dataclass
class RunRecord:
    """A run: its task set, model and retrieval settings, the whole config it ran with, its status."""

    id: str
    spec: str
    llm: str
    mode: str
    k: int
    rounds: int
    config: dict[str, Any] = field(default_factory=dict)
    include_runs: list[str] = field(default_factory=list)
    status: str = "running"  # one of STATUSES
    created_at: str = ""
    finished_at: str | None = None

    def train_spec(self) -> str | None:
        """The train spec of a train-then-test run; None for other runs and runs imported without
        settings. Read from the recorded config as every version records it (version 1 was flat),
        without building it (prag.run.config): the commands that show runs do not load the agent."""
        experiment = self.config.get("experiment", self.config)
        train = experiment.get("train") if isinstance(experiment, dict) else None
        return train if isinstance(train, str) else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
