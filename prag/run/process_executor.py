"""`--workers N` for engines that are not thread-safe: a round's episodes in N worker processes.

Each worker process opens the run's store for reading, loads its own encoder (and its LLM on the
first call), and plays one episode at a time: it retrieves what round r may see (rounds < r,
all stored before the round began) straight from the store, and sends the episode's record back.
The driver writes every record, as with threads. Workers are spawned (not forked: the driver
holds torch's and SQLite's threads), once per run, and reused round after round.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from prag.envs import registry
from prag.envs.base import Task, TaskSource
from prag.envs.spec import TaskSetSpec
from prag.errors import PragError
from prag.llm import LLM
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.run.agents import StoreReaders
from prag.run.config import RunConfig
from prag.run.endings import ending
from prag.run.episode import EpisodeDone, Phase, build_llm, play_task
from prag.run.host import RoundHost
from prag.store import Store
from prag.store.answers import cached
from prag.store.records import EpisodeRecord


class Processes:
    """Plays each round's episodes in `workers` processes of this machine."""

    def __init__(self, host: RoundHost, workers: int) -> None:
        config = host.config
        if config.agent.ask == "learned":
            raise PragError("--ask learned with parallel games of this family is not supported yet: "
                            "use --workers 1 or --executor ray")
        if host.injected_llm is not None:
            raise PragError("a stand-in LLM lives in this process only: play it with --workers 1 or threads")
        self.host = host
        self.workers = workers
        self._started: dict[int, multiprocessing.process.BaseProcess] = {}  # every worker, by pid: how it ended
        self.pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker, initargs=(str(host.store.path), host.run.id, config),
        )

    def play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]:
        servers = self.host.servers
        pending: dict[Future[EpisodeRecord], Any] = {}

        def submit(task: Task) -> None:
            url = servers.acquire()
            pending[self.pool.submit(_play, phase.round, phase.spec, task, url)] = url
            self._started.update(getattr(self.pool, "_processes", None) or {})

        queue = list(tasks)
        try:
            # As many episodes in flight as there are workers: each takes its server when it starts.
            while queue and len(pending) < self.workers:
                submit(queue.pop(0))
            while pending:
                finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for future in finished:
                    servers.release(pending.pop(future))
                    record = future.result()
                    if queue:
                        submit(queue.pop(0))
                    yield EpisodeDone(record, phase)
        except KeyboardInterrupt:
            # Ctrl-C, SIGTERM or SIGHUP: the episodes under way are dropped (played again on
            # resume), their workers ended now rather than at the end of their episodes.
            self._end_workers()
            raise
        except BrokenProcessPool:
            # The pool's own thread reaps its workers as it ends them: waiting for it first means no
            # second waitpid races it (a reaped worker whose exit code was lost would go unnamed).
            self.pool.shutdown(wait=True, cancel_futures=True)
            raise PragError(f"a worker process of the round {self._how_workers_ended()} mid-episode; the "
                            f"episodes under way were not stored") from None
        finally:
            for future in pending:
                future.cancel()

    def _how_workers_ended(self) -> str:
        """What ended the worker processes that died, e.g. `was ended by SIGSEGV (...) (pid 12)`.
        The pool ends the other workers with SIGTERM once one has died: those are named only
        when nothing else ended one."""
        ended: list[tuple[int, int]] = []
        for pid, process in self._started.items():
            if process.exitcode:
                ended.append((pid, process.exitcode))
        causes = [(pid, code) for pid, code in ended if code != -signal.SIGTERM] or ended
        return "; another ".join(ending(pid, code) for pid, code in causes) or "ended (how is unknown)"

    def _end_workers(self) -> None:
        # The pool has no public way to end its workers before Python 3.14's terminate_workers().
        for process in list(getattr(self.pool, "_processes", {}).values()):
            process.terminate()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class _Worker:
    """What one worker process plays with, built once per process."""

    def __init__(self, store_path: str, run_id: str, config: RunConfig) -> None:
        self.run_id = run_id
        self.config = config
        self.store = Store(Path(store_path), create=False)
        queries = EmbeddingCache(self.store, Encoder(config.retrieval.embedding_model), read_only=True)
        self.readers = StoreReaders(self.store, queries, config.retrieval)
        self.sources: dict[str, TaskSource] = {}
        self.llms: dict[str | None, LLM] = {}
        self.round: int | None = None

    def play(self, round_: int, spec: TaskSetSpec, task: Task, url: str | None) -> EpisodeRecord:
        if round_ != self.round:  # a new round: what it may see was stored before it began
            self.readers.refresh(registry.domain(spec.env).name)
            self.round = round_
        players = self.readers.players(self._llm(url))
        return play_task(self.run_id, self.config, Phase(round_, spec, [], self._source(spec)), task, players)

    def _llm(self, url: str | None) -> LLM:
        if url not in self.llms:  # built here, loaded at its first call (prag.llm.local)
            model = build_llm(self.config.experiment.llm, self.config.execution, url=url)
            self.llms[url] = cached(model, self.store) if self.config.execution.answer_cache else model
        return self.llms[url]

    def _source(self, spec: TaskSetSpec) -> TaskSource:
        key = str(spec.path)
        if key not in self.sources:
            self.sources[key] = spec.open(max_steps=self.config.experiment.max_steps)
        return self.sources[key]


_WORKER: _Worker | None = None


def _start_worker(store_path: str, run_id: str, config: RunConfig) -> None:
    global _WORKER
    # The driver stops its workers (`_end_workers`): Ctrl-C at a terminal, or SIGHUP, reaches
    # the whole process group, and a worker's own KeyboardInterrupt would only print its traceback.
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    _WORKER = _Worker(store_path, run_id, config)


def _play(round_: int, spec: TaskSetSpec, task: Task, url: str | None) -> EpisodeRecord:
    assert _WORKER is not None, "the worker process was not started by Processes"
    return _WORKER.play(round_, spec, task, url)
