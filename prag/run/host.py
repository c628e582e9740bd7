"""What an executor sees of the runner that chose it (`RoundHost`), and what an executor is."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Protocol

from prag.agent.world_model import WorldModels
from prag.envs.base import Task
from prag.llm.balance import LeastLoaded
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.episodes import ExperienceSource
from prag.run.config import RunConfig
from prag.run.episode import EpisodeDone, Listener, Phase
from prag.store import Store
from prag.store.records import RunRecord


class RoundHost(Protocol):
    """What an executor may use of the runner that chose it."""

    store: Store
    run: RunRecord
    config: RunConfig
    experiences: ExperienceSource
    corrections: dict[str, CorrectionSource]
    world_models: WorldModels
    servers: LeastLoaded
    injected_llm: Any
    listener: Listener
    stopping: threading.Event  # set when a round stops early: its episodes in this process give up

    def episode(self, phase: Phase, task: Task) -> EpisodeDone: ...


class RoundExecutor(Protocol):
    def play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]: ...

    def close(self) -> None: ...
