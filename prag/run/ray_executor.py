"""`prag run --executor ray`: a round's episodes played by Ray actors, the store written by the driver alone.

Layout: `--workers N` actors (`EpisodeWorker`), each a process that owns its environments and
agents, its LLM (a local model loaded once per process; a client per server) and the MiniLM
encoder of its queries. The driver (the `prag run` process) keeps the round's queue: each idle
actor gets the next task together with the server it should ask (prag.llm.balance; the driver
knows exactly which episodes are in flight, also when a worker dies, so it counts them and no
extra actor or round trip is needed), and every episode that comes back is written by the
driver in its own transaction, as with threads.

Once per round the driver puts into Ray's object store what the round may read: a
`RoundSnapshot` (the index of the stored episodes as `shippable` makes it; the corrections; the
answer cache; the learned ask policy; the semantic memory of places), and the records of
the episodes that became visible since the last round (one object per round, so each record
is shipped once for the whole run). Every call names the objects; an actor resolves each once,
so a restarted actor just resolves them again. Round r's snapshot is built after round r-1's
last episode is stored and before any of round r's is: its workers see rounds < r only.

Exactly once: an actor that dies mid-episode is restarted by Ray and the episode played again
from its start (`max_task_retries`); nothing of an unfinished episode reaches the store, and
the driver keeps the first copy of an episode it gets twice (`Runner._store`). A killed driver
takes its actors with it; `prag run --resume` plays what the round is missing.
"""
from __future__ import annotations

import copy
import os
import pickle
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from prag.agent.config import AgentConfig, plans_with_learned
from prag.agent.goals.readers import Recall
from prag.agent.sources.mediator import AskPolicy
from prag.agent.world.places import Ranking
from prag.envs.base import Task, TaskSource
from prag.envs.domain import Domain
from prag.envs.sam import ActionModel
from prag.envs.spec import TaskSetSpec
from prag.errors import PragError
from prag.llm import LLM, Completion
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.retrieval.episodes import Experience, ExperienceSource
from prag.retrieval.index import ExperienceIndex, Mode, Visibility, check_mode
from prag.retrieval.readings import RECALLED, nearest
from prag.run.agents import Players
from prag.run.config import RunConfig
from prag.run.episode import EpisodeDone, Phase, asker_key, build_llm, play_task
from prag.store import Store
from prag.store.answers import AnswerEvent, AnswerSnapshot, CachedLLM
from prag.store.ask_policies import AskPolicyRecord
from prag.store.readings import StoredReading
from prag.store.records import EpisodeRecord

if TYPE_CHECKING:
    from prag.run.host import RoundHost

# An actor is restarted this many times in a run, and one episode played this many more times,
# before the run stops (a worker that dies every time is a bug to read in its log, not bad luck).
MAX_RESTARTS = 8
MAX_TASK_RETRIES = 3
# Passed to every worker: models load offline (as prag.retrieval.embed does in this process),
# and what the driver's environment says about keys and data.
_WORKER_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
_FORWARDED_ENV = ("OPENAI_API_KEY", "ALFWORLD_DATA")


@dataclass(frozen=True)
class RoundSnapshot:
    """What a round's workers read, frozen when the round begins."""

    round: int
    index: ExperienceIndex  # every stored episode; visibility picks the round's
    corrections: dict[str, CorrectionSource]  # by domain, without their store and cache
    answers: dict[str, Completion] | None  # the answer cache by key; None when it is off
    asker: AskPolicyRecord | None  # the learned ask policy's record (--ask learned)
    places: dict[str, list[tuple[str, int]]]  # the semantic memory: places by kind, as the round sees them
    readings: list[StoredReading]  # the goal readings verified before the round (prag.retrieval.readings)
    models: dict[str, ActionModel]  # by domain: the action model the round's agents plan with, where learned

    def model(self, config: AgentConfig, visibility: Visibility, domain: Domain) -> ActionModel | None:
        """The round's learned action model for an agent of `config` (learned by the driver)."""
        return self.models.get(domain.name) if plans_with_learned(config, domain) else None

    def ranking(self, visibility: Visibility) -> Ranking:
        """The semantic memory's ranking of places for a kind, as `store.places.ranked` gives it
        for the round's visibility (the only one its episodes have)."""
        return lambda kind: self.places.get(kind.strip().lower(), [])

    def recall(self, cache: EmbeddingCache) -> Callable[[Visibility], Recall]:
        """The goal readers' recall of the round's verified readings, queries encoded by `cache`."""
        return lambda visibility: lambda instruction, k=None: nearest(instruction, self.readings, cache, RECALLED if k is None else k)

    def players(self, llm: LLM, experiences: ExperienceSource, cache: EmbeddingCache, asker: AskPolicy | None) -> Players:
        """What the round's agents are built with (prag.run.agents): what a run's `StoreReaders`
        give, read from this snapshot, with `experiences` retrieving from its index."""
        return Players(llm, experiences, self.corrections, self.ranking, asker, readings=self.recall(cache), models=self.model)


def _learned(runner: RoundHost, phase: Phase) -> dict[str, ActionModel]:
    """The round's learned action model by domain, where its agents plan with one."""
    domain = phase.spec.domain()
    visibility = runner.config.retrieval.visibility(runner.run.id, phase.round)
    learned = runner.readers.world_models.for_agent(runner.config.agent, visibility, domain)
    return {} if learned is None else {domain.name: learned}


def shippable(index: ExperienceIndex, one_machine: bool) -> ExperienceIndex:
    """The index as the round's workers get it: on one machine as it is (over the store's files
    it pickles as their paths and committed row counts, so workers map the round's rows of the
    same files); across machines, which may not see the store's folder, as its arrays (a worker
    maps them from its node's object store without copying)."""
    return index if one_machine else index.in_memory()


def detached(source: CorrectionSource) -> CorrectionSource:
    """A copy of a correction source that can be shipped: its corrections and vectors, without
    the store and cache it was read with (the worker gives it its own cache)."""
    shipped = copy.copy(source)
    vars(shipped).update(store=None, cache=None)
    return shipped


class WorkerVectors(EmbeddingCache):
    """Query vectors in a worker, which has no store: encoded on first use, kept for the process."""

    def __init__(self, encoder: Encoder) -> None:  # no store to read or write
        self.encoder = encoder
        self.read_only = True
        self._memo: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def vectors_by_hash(self, hashes: Sequence[str], texts_of: Callable[[list[str]], dict[str, str]]) -> np.ndarray:
        with self._lock:
            missing = [digest for digest in dict.fromkeys(hashes) if digest not in self._memo]
        if missing:
            texts = texts_of(missing)
            fresh = dict(zip(missing, self.encoder.encode([texts[h] for h in missing])))
            with self._lock:
                self._memo.update(fresh)
        if not hashes:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        return np.stack([self._memo[digest] for digest in hashes])


class ShippedRecords:
    """The records of the episodes a worker may retrieve, shipped pickled one by one and unpickled
    when first retrieved: an episode reads a few of them, and unpickling 10k records at once
    (200k step objects) took 11 s, mostly in the garbage collector, against 30 ms for their bytes."""

    def __init__(self) -> None:
        self.packed: dict[int, bytes] = {}
        self.records: dict[int, EpisodeRecord] = {}

    def add(self, packed: dict[int, bytes]) -> None:
        self.packed.update(packed)

    def __getitem__(self, episode_id: int) -> EpisodeRecord:
        if episode_id not in self.records:
            self.records[episode_id] = pickle.loads(self.packed[episode_id])  # written by our driver
        return self.records[episode_id]


def packed_records(store: Store, episode_ids: Sequence[int]) -> dict[int, bytes]:
    """The records of these episodes, as `ShippedRecords` takes them."""
    return {i: pickle.dumps(store.episode(i), protocol=pickle.HIGHEST_PROTOCOL) for i in episode_ids}


class RoundExperiences(ExperienceSource):
    """Retrieval in a worker: the round's frozen index and the records of its visible episodes."""

    def __init__(self, index: ExperienceIndex, records: ShippedRecords, vectors: WorkerVectors,
                 mode: Mode, k: int) -> None:  # no store: all the round may read came with it
        self.index = index
        self.records = records
        self.cache = vectors
        self.mode = mode
        self.k = k

    def refresh(self) -> int:
        return 0  # frozen for the round

    def retrieve(self, goal: str, scene: str, visibility: Visibility, k: int | None = None) -> list[Experience]:
        if self.index.size == 0:
            return []  # nothing stored yet (round 0): no query to encode
        return super().retrieve(goal, scene, visibility, k)

    def _episode(self, episode_id: int) -> EpisodeRecord:
        return self.records[episode_id]  # every visible episode's record came with the round


# Loaded once per worker process, whatever its actors and rounds (a restarted actor is a new process).
_ENCODERS: dict[str, Encoder] = {}
_LLMS: dict[tuple[str, str | None, float, int], LLM] = {}
_ASKERS: dict[tuple[str, int], AskPolicy] = {}


def process_llm(config: RunConfig, url: str | None) -> LLM:
    """The LLM of this process for server `url`: a local model is loaded once per process."""
    execution = config.execution
    key = (config.experiment.llm, url, execution.llm_timeout, execution.llm_retries)
    if key not in _LLMS:
        _LLMS[key] = build_llm(config.experiment.llm, execution, url=url)
    return _LLMS[key]


def process_asker(record: AskPolicyRecord) -> AskPolicy:
    """The learned ask policy a record holds, loaded once per process."""
    from prag.run.asker import (
        learned_policy,  # loads stable-baselines3: only when asked for
    )

    key = (record.name, record.version or 0)
    if key not in _ASKERS:
        _ASKERS[key] = learned_policy(record)
    return _ASKERS[key]


class EpisodeWorker:
    """A Ray actor's process: plays the run's episodes one at a time, each with its own
    environment and agent, retrieving from the snapshot of the episode's round.

    `llm` stands in for the LLM the config names (a scripted stand-in in tests)."""

    def __init__(self, run_id: str, config: RunConfig, llm: LLM | None = None) -> None:
        self.run_id = run_id
        self.config = config
        self.injected_llm = llm
        self.sources: dict[str, TaskSource] = {}
        self.records = ShippedRecords()
        self.resolved: set[str] = set()  # the objects (by id) already read
        self.snapshot: RoundSnapshot | None = None
        self.known_answers: dict[str, Completion] | None = None
        model = config.retrieval.embedding_model
        self.vectors = WorkerVectors(_ENCODERS.setdefault(model, Encoder(model)))  # loads on first query

    def pid(self) -> int:
        """This worker's process id (for tests that kill it)."""
        return os.getpid()

    def play(self, parts: list[Any], round_: int, spec: TaskSetSpec, task: Task, url: str | None
             ) -> tuple[EpisodeRecord, list[AnswerEvent]]:
        """Play `task` in round `round_` of `spec`; `parts` are the round's snapshot and record
        objects (refs inside a list, so that Ray hands them over unresolved), `url` the server."""
        snapshot = self._resolve(parts)
        retrieval = self.config.retrieval
        experiences = RoundExperiences(snapshot.index, self.records, self.vectors, check_mode(retrieval.mode), retrieval.k)
        llm = self.injected_llm or process_llm(self.config, url)
        book = AnswerSnapshot(self.known_answers) if self.known_answers is not None else None
        players = snapshot.players(
            CachedLLM(llm, book) if book is not None else llm, experiences, self.vectors,
            process_asker(snapshot.asker) if snapshot.asker is not None else None,
        )
        phase = Phase(round_, spec, [], self._source(spec))
        record = play_task(self.run_id, self.config, phase, task, players)
        return record, book.events if book is not None else []

    def _resolve(self, parts: list[Any]) -> RoundSnapshot:
        import ray

        snapshot_ref, *record_refs = parts
        for ref in record_refs:
            if ref.hex() not in self.resolved:
                self.records.add(ray.get(ref))
                self.resolved.add(ref.hex())
        if snapshot_ref.hex() not in self.resolved:
            snapshot: RoundSnapshot = ray.get(snapshot_ref)
            for source in snapshot.corrections.values():
                source.cache = self.vectors
            self.snapshot = snapshot
            self.known_answers = dict(snapshot.answers) if snapshot.answers is not None else None
            self.resolved.add(snapshot_ref.hex())
        assert self.snapshot is not None
        return self.snapshot

    def _source(self, spec: TaskSetSpec) -> TaskSource:
        key = str(spec.path)
        if key not in self.sources:
            self.sources[key] = spec.open(max_steps=self.config.experiment.max_steps)
        return self.sources[key]


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise PragError("--executor ray needs Ray: pip install -e '.[ray]' (or pip install 'prag[ray]')") from None
    return ray


@contextmanager
def kept_stop_handler() -> Iterator[None]:
    """Keep this process's SIGTERM handler through `ray.init`, which sets its own (it exits at
    once): a SIGTERM then stops a run as Ctrl-C does (prag.signals), the actors killed and the
    run left `interrupted`, instead of ending the driver with the run still `running`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if handler is not None:  # None: set outside Python, nothing to put back
            signal.signal(signal.SIGTERM, handler)


class RayRounds:
    """Plays a runner's rounds on Ray (see the module's docstring): joins the cluster the config
    names, or starts a local one with a CPU per worker, unless this process already joined one."""

    def __init__(self, runner: RoundHost) -> None:
        ray = _ray()
        self.runner = runner
        execution = runner.config.execution
        self.started = not ray.is_initialized()
        if self.started:
            where = {"address": execution.ray_address} if execution.ray_address else {"num_cpus": execution.workers}
            env = {**_WORKER_ENV, **{name: os.environ[name] for name in _FORWARDED_ENV if name in os.environ}}
            with kept_stop_handler():
                ray.init(**where, runtime_env={"env_vars": env}, include_dashboard=False, log_to_driver=False,
                         logging_level="WARNING")
        self.actors: list[Any] = []
        self.shipped: set[int] = set()  # episodes whose records workers have
        self.record_refs: list[Any] = []
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < execution.workers:  # the actors beyond would never start, nor their episodes end
            self.close()
            raise PragError(f"the Ray cluster has {cpus:g} CPUs for --workers {execution.workers}: "
                            f"give at most {cpus:g} workers, or add machines (`ray start --address ...`)")

    def play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]:
        """The round's episodes, in the order they finish."""
        ray = _ray()
        if not tasks:
            return
        start = time.perf_counter()
        shipped = len(self.shipped)
        parts = [ray.put(self._snapshot(phase)), *self._new_records(phase)]
        self.runner.listener("snapshot", {"round": phase.round, "records": len(self.shipped) - shipped,
                                          "seconds": time.perf_counter() - start})
        if not self.actors:
            self.actors = [self._worker() for _ in range(self.runner.config.execution.workers)]
        queue, idle = deque(tasks), list(self.actors)
        running: dict[Any, tuple[Task, str | None, Any]] = {}
        servers = self.runner.servers
        try:
            while queue or running:
                while queue and idle:
                    actor, task, url = idle.pop(0), queue.popleft(), servers.acquire()
                    running[actor.play.remote(parts, phase.round, phase.spec, task, url)] = (task, url, actor)
                ready: list[Any] = []
                while not ready:  # in short waits: Ctrl-C reaches Python only between them
                    ready, _ = ray.wait(list(running), num_returns=1, timeout=0.5)
                ref = ready[0]
                task, url, actor = running.pop(ref)
                servers.release(url)
                idle.append(actor)
                record, answers = self._result(ref, task)
                yield EpisodeDone(record, phase, answers)
        finally:
            for _, url, _ in running.values():
                servers.release(url)
            if running:  # stopped early (Ctrl-C, an error): the episodes under way are dropped
                self._kill_actors()

    def _result(self, ref: Any, task: Task) -> tuple[EpisodeRecord, list[AnswerEvent]]:
        ray = _ray()
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, PragError):
                raise exc.cause from None  # says what to do (an LLM server down, ...)
            raise
        except ray.exceptions.RayActorError as exc:
            raise PragError(
                f"a Ray worker died {MAX_TASK_RETRIES + 1} times playing {task.task_id} ({exc.__class__.__name__}): "
                f"read its log (ray logs, or /tmp/ray/session_latest/logs on its machine)"
            ) from None

    def _snapshot(self, phase: Phase) -> RoundSnapshot:
        runner = self.runner
        config = runner.config
        learned = config.agent.ask == "learned"
        asker = runner.store.ask_policies.get(*asker_key(config.agent.asker)) if learned else None
        visible = config.retrieval.visibility(runner.run.id, phase.round)
        places = runner.store.places
        return RoundSnapshot(
            phase.round, shippable(runner.readers.experiences.index, self._one_machine()),
            {domain: detached(source) for domain, source in runner.readers.corrections.items()},
            runner.store.answers.snapshot() if config.execution.answer_cache else None, asker,
            {kind: places.ranked(kind, visible) for kind, _ in places.kinds(visible)},
            runner.store.readings.verified(visible),
            _learned(runner, phase),
        )

    def _one_machine(self) -> bool:
        """Whether the cluster is this machine alone (its workers see the store's folder)."""
        return sum(1 for node in _ray().nodes() if node["Alive"]) == 1

    def _new_records(self, phase: Phase) -> list[Any]:
        """Refs of every record the round may retrieve: the objects of earlier rounds, and one
        more with the episodes that became visible since."""
        ray = _ray()
        runner = self.runner
        index = runner.readers.experiences.index
        visible = runner.config.retrieval.visibility(runner.run.id, phase.round)
        new = [int(i) for i in index.ids[index.visible_mask(visible)] if int(i) not in self.shipped]
        if new:
            self.record_refs.append(ray.put(packed_records(runner.store, new)))
            self.shipped.update(new)
        return self.record_refs

    def _worker(self) -> Any:
        ray = _ray()
        remote = ray.remote(EpisodeWorker).options(
            num_cpus=1, max_restarts=MAX_RESTARTS, max_task_retries=MAX_TASK_RETRIES
        )
        return remote.remote(self.runner.run.id, self.runner.config, self.runner.injected_llm)

    def _kill_actors(self) -> None:
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        self.actors = []

    def close(self) -> None:
        """Stop the workers, and the local cluster if this started it."""
        ray = _ray()
        if ray.is_initialized():
            self._kill_actors()
            if self.started:
                ray.shutdown()
