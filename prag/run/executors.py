"""How a round's episodes are played: one after another, in threads, in processes, or by Ray.

The runner chooses an executor (`choose`) and hands it each round; an executor yields every
episode as it finishes (`EpisodeDone`) and the runner alone writes it to the store. Executors
see the runner only as a `RoundHost` (prag.run.host) and never import it (an import-linter contract checks).

Threads share one process: fine for engines that are thread-safe (the grid world), not for
textworld's (its tatsu grammar parser keeps its state per class: two games parsing at once fail
with `IndexError: pop from empty list`). Families not `registry.thread_safe` get processes
when `--workers` is above 1 and the executor is `threads`.
"""
from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from prag.envs import registry
from prag.envs.base import Task
from prag.run.config import RunConfig
from prag.run.episode import EpisodeDone, Phase
from prag.run.host import RoundExecutor, RoundHost


class Serial:
    """One episode after another, in this thread."""

    def __init__(self, host: RoundHost) -> None:
        self.host = host

    def play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]:
        for task in tasks:
            yield self.host.episode(phase, task)

    def close(self) -> None:
        pass


class Threads:
    """`workers` episodes at once in threads of this process."""

    def __init__(self, host: RoundHost, workers: int) -> None:
        self.host = host
        self.workers = workers

    def play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]:
        pool = ThreadPoolExecutor(self.workers)
        pending: set[Future[EpisodeDone]] = {pool.submit(self.host.episode, phase, task) for task in tasks}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
        except BaseException:
            # Ctrl-C or an error: the episodes under way give up before their next action, so
            # the round stops after the LLM calls in flight rather than after whole episodes.
            self.host.stopping.set()
            raise
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            self.host.stopping.clear()

    def close(self) -> None:
        pass


def executor_name(config: RunConfig, family: str) -> str:
    """The executor a run's rounds of `family` are played with: `threads` becomes `serial` for
    one worker and `processes` for an engine that is not thread-safe."""
    execution = config.execution
    if execution.executor != "threads":
        return execution.executor
    if execution.workers == 1:
        return "serial"
    return "threads" if registry.thread_safe(family) else "processes"


def choose(host: RoundHost, name: str) -> RoundExecutor:
    """A new executor by name; Ray and the process pool are imported only when chosen."""
    workers = host.config.execution.workers
    if name == "serial":
        return Serial(host)
    if name == "threads":
        return Threads(host, workers)
    if name == "processes":
        from prag.run.process_executor import Processes

        return Processes(host, workers)
    if name == "ray":
        from prag.run.ray_executor import RayRounds  # imports ray: only when asked for

        return RayRounds(host)
    raise ValueError(f"no executor {name!r}")
