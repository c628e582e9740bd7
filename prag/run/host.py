"""What an executor sees of the runner that chose it (`RoundHost`), and what an executor is."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Protocol

from prag.envs.base import Task
from prag.llm.balance import LeastLoaded
from prag.run.agents import StoreReaders
from prag.run.config import RunConfig
from prag.run.episode import EpisodeDone, Listener, Phase
from prag.store import Store
from prag.store.records import RunRecord


class RoundHost(Protocol):
    """What an executor may use of the runner that chose it."""

    store: Store
    run: RunRecord
    config: RunConfig
    readers: StoreReaders  # what the round's agents read of the store, refreshed before each round
    servers: LeastLoaded
    injected_llm: Any
    listener: Listener
    stopping: threading.Event  # set when a round stops early: its episodes in this process give up

    def episode(self, phase: Phase, task: Task) -> EpisodeDone: ...


class RoundExecutor(Protocol):
    def play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]: ...

    def close(self) -> None: ...
