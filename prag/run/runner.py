"""The iteration runner (P-RAG's Algorithm 1): rounds of episodes feeding the store.

Round 0 plays with an empty store (or the episodes of runs the user includes). After each
round its episodes become visible; round r retrieves from rounds < r. Self-iteration plays
the same task set every round; with a train spec, the rounds play the train set and a final
round evaluates the test set with the store frozen.

Each episode is written to the store in one transaction when it ends, by this thread only;
parallel episodes hand their records over: threads of this process (`--workers N`), or Ray
workers (`--executor ray`, prag.run.ray_executor) that retrieve from a snapshot of the round. A run interrupted at any point resumes
with the episodes its rounds are missing: every task is played exactly once per round, and
an episode cut off mid-way is replayed from its start.

The runner builds what its config names (the LLM, the encoder) and plays agents only through
the Agent protocol (`prag.agent.protocol`): an episode is its steps plus the agent's Trace.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from prag.agent.agent import PragAgent
from prag.agent.explore import Ranking
from prag.agent.mediator import AskPolicy
from prag.agent.person import Person
from prag.agent.protocol import Agent, Trace
from prag.agent.readers import Recall, no_recall
from prag.corrections.prior import load_prior
from prag.envs import registry
from prag.envs.base import Environment, Observation, Task, TaskSource
from prag.envs.spec import TaskSetSpec, load_spec
from prag.errors import PragError
from prag.llm import LLM, WaitCallback, make_llm
from prag.llm.balance import LeastLoaded, server_urls
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility, check_mode
from prag.retrieval.readings import ReadingMemory
from prag.run.config import ExecutionConfig, RunConfig, recorded_config, round0_settings
from prag.store import Store
from prag.store.answers import AnswerEvent, cached
from prag.store.ask_policies import DEFAULT_NAME
from prag.store.records import EpisodeRecord, RunRecord, StepRecord

if TYPE_CHECKING:
    from prag.run.ray_executor import RayRounds


@dataclass(frozen=True)
class Phase:
    """One round of play: which task set, which round number."""

    round: int
    spec: TaskSetSpec
    tasks: list[Task]
    source: TaskSource


@dataclass
class EpisodeDone:
    """A played episode's record, on its way from a worker to the store."""

    record: EpisodeRecord
    phase: Phase
    # What the episode's LLM calls did with a snapshot of the answer cache (a Ray worker's): the
    # store takes them with the episode.
    answers: Sequence[AnswerEvent] = ()


Listener = Callable[[str, dict], None]  # (event, data): progress reporting, run log


def new_run_id(spec: str, mode: str) -> str:
    """The default run id: spec, mode and the UTC time."""
    return f"{spec}-{mode}-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S')}"


# Called before each action with the latest step (t = 0: the reset), its observation and the
# agent; returning False ends the episode. The console uses it to show the episode and let a
# person speak to the agent.
BeforeAct = Callable[[StepRecord, Observation, Agent], bool]


def play_episode(env: Environment, agent: Agent, before_act: BeforeAct | None = None) -> tuple[list[StepRecord], bool, Trace]:
    """One episode from reset until the environment is done (won, or at the step cap of the
    spec's wrapper); success is the environment's `won`."""
    observation = env.reset()
    agent.reset(observation)
    steps = [StepRecord.of(0, None, observation)]
    for t in itertools.count(1):
        if before_act is not None and not before_act(steps[-1], observation, agent):
            break
        decision = agent.act(observation)
        observation = env.step(decision.action)
        agent.observe(decision.action, observation)
        steps.append(StepRecord.of(t, decision.action, observation))
        if observation.won or observation.done:
            break
    return steps, len(steps) > 1 and observation.won, agent.finish()


def semantic_memory(store: Store, visibility: Visibility) -> Ranking:
    """The find-X skill's ranking of places for a kind of thing: the store's semantic memory,
    seeing only the episodes the agent's retrieval may see (round r learns from rounds < r)."""

    def ranked(kind: str) -> list[tuple[str, int]]:
        return store.places.ranked(
            kind, run_id=visibility.run_id, before_round=visibility.before_round,
            include_runs=visibility.include_runs,
        )

    return ranked


def build_llm(
    spec: str, execution: ExecutionConfig, on_wait: WaitCallback | None = None, url: str | None = None
) -> LLM:
    """The LLM a `--llm` spec names, with the run's request timeout and retries, at server `url`
    (None: the backend's default); `on_wait` hears while a call to a server waits
    (`prag.llm.retrying`)."""
    where = {"base_url": url} if url is not None else {}
    return make_llm(spec, timeout=execution.llm_timeout, retries=execution.llm_retries, on_wait=on_wait, **where)


def llm_servers(config: RunConfig) -> list[str]:
    """The servers a run's episodes are spread over (prag.llm.balance); [] for a local model."""
    return server_urls(config.execution.llm_urls) if config.experiment.llm.startswith("openai:") else []


@dataclass(frozen=True)
class Players:
    """What an episode is played with besides its task: the LLM, the retrieval sources (the
    corrections by domain; the semantic memory of places for a visibility), the ask policy and
    a person beside the agent."""

    llm: LLM
    experiences: ExperienceSource
    corrections: dict[str, CorrectionSource]
    places: Callable[[Visibility], Ranking]
    asker: AskPolicy | None = None
    person: Person | None = None
    # verified goal readings for a visibility (prag.agent.readers); none where no store is at hand
    readings: Callable[[Visibility], Recall] = lambda visibility: no_recall


def play_task(
    run_id: str, config: RunConfig, phase: Phase, task: Task, players: Players, before_act: BeforeAct | None = None,
) -> EpisodeRecord:
    """One episode of `task` in `phase` by a P-RAG agent, as the store records it: played in the
    runner's threads and in Ray workers alike."""
    visibility = Visibility(run_id, phase.round, config.retrieval.include_runs)
    domain = registry.domain(phase.spec.env)
    agent = PragAgent(
        players.llm, players.experiences, visibility, config.agent,
        seed=config.experiment.seed, corrections=players.corrections.get(domain.name), domain=domain,
        asker=players.asker, person=players.person, ranking=players.places(visibility),
        recall=players.readings(visibility),
    )
    env = phase.source.make(task)
    start = time.perf_counter()
    try:
        steps, won, trace = play_episode(env, agent, before_act)
    finally:
        env.close()
    usage = trace.usage
    return EpisodeRecord(
        run_id=run_id,
        round=phase.round,
        task_id=task.task_id,
        task_type=task.task_type,
        goal=trace.goal,
        won=won,
        steps=steps,
        shortest_path=env.shortest_path_length,
        seed=task.seed,
        llm_calls=usage.calls,
        prompt_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_tokens,
        completion_tokens=usage.completion_tokens,
        reasks=usage.reasks,
        seconds=time.perf_counter() - start,
        llm_seconds=usage.llm_seconds,
        extra={**trace.extra, "spec": phase.spec.name, "env": phase.spec.env, "retrieved": trace.retrieved},
    )


class _Stopped(Exception):
    """An episode under way gave up before its next action: the round was stopped."""


class Runner:
    """Plays a run's rounds into a store, with the LLM and encoder its config names.

    `listener` hears about rounds and episodes, `on_wait` while a call to an LLM server waits.
    `llm` and `encoder` stand in for the ones the config names: a scripted stand-in LLM in
    tests, an encoder loaded once per test session (the LLM is built when an episode of this
    process first needs it, one per server). A `person` beside the agents (the console's
    user, a benchmark's scripted one) says yes or no to the LLM's proposals.
    """

    def __init__(
        self, store: Store, run: RunRecord, config: RunConfig, listener: Listener | None = None,
        *, llm: LLM | None = None, encoder: Encoder | None = None, on_wait: WaitCallback | None = None,
        person: Person | None = None,
    ) -> None:
        self.store = store
        self.person = person
        self.run = run
        self.config = config
        self._stopping = threading.Event()  # set when a round stops early: its episodes give up
        self.injected_llm = llm
        self.on_wait = on_wait
        self.servers = LeastLoaded(llm_servers(config))
        self._llms: dict[str | None, LLM] = {}  # by server
        self._llms_lock = threading.Lock()
        self._ray: RayRounds | None = None
        self.asker = learned_asker(store, config.agent.asker) if config.agent.ask == "learned" else None
        self.encoder = encoder if encoder is not None else Encoder(config.retrieval.embedding_model)
        self.listener = listener or (lambda event, data: None)
        self.persisting_cache = EmbeddingCache(store, self.encoder)
        self.query_cache = EmbeddingCache(store, self.encoder, read_only=True)
        retrieval = config.retrieval
        self.experiences = ExperienceSource(store, self.query_cache, check_mode(retrieval.mode), retrieval.k)
        self.reading_memory = ReadingMemory(store, self.query_cache)
        self.corrections: dict[str, CorrectionSource] = {}  # by domain (action vocabulary)

    @property
    def llm(self) -> LLM:
        """The LLM of this process's episodes on the first server (the console's)."""
        return self.llm_at(next(iter(self.servers.in_flight)))

    def llm_at(self, url: str | None) -> LLM:
        """The LLM of this process's episodes on server `url`, built on first use, behind the
        store's answer cache unless the run turned it off."""
        with self._llms_lock:
            if url not in self._llms:
                model = self.injected_llm or build_llm(self.config.experiment.llm, self.config.execution, self.on_wait, url)
                self._llms[url] = cached(model, self.store) if self.config.execution.answer_cache else model
            return self._llms[url]

    # --- the rounds -------------------------------------------------------------------------

    def phases(self) -> Iterator[Phase]:
        experiment = self.config.experiment
        test = load_spec(experiment.spec)
        train = load_spec(experiment.train) if experiment.train else None
        iterate = train or test
        source = iterate.open(max_steps=experiment.max_steps)
        tasks = source.tasks()[: experiment.limit]
        for round_ in range(experiment.rounds):
            yield Phase(round_, iterate, tasks, source)
        if train is not None:
            test_source = test.open(max_steps=experiment.max_steps)
            yield Phase(experiment.rounds, test, test_source.tasks()[: experiment.limit], test_source)

    def play(self) -> None:
        try:
            for phase in self.phases():
                self.experiences.refresh()  # everything stored so far; visibility picks rounds < r
                self._refresh_corrections(phase)
                todo = [t for t in phase.tasks if not self.store.has_episode(self.run.id, phase.round, t.task_id)]
                self.listener("round", {"round": phase.round, "spec": phase.spec.name, "tasks": len(phase.tasks), "todo": len(todo)})
                for done in self._play_round(phase, todo):
                    self._store(done)
        finally:
            if self._ray is not None:
                self._ray.close()
                self._ray = None
        self.store.set_run_status(self.run.id, "finished")

    def play_one(self, phase: Phase, task: Task, before_act: BeforeAct | None = None) -> EpisodeRecord:
        """One episode, stored, with `before_act` called before every action: for the console,
        where a person watches the agent and may speak to it."""
        self.experiences.refresh()
        self._refresh_corrections(phase)
        done = self._episode(phase, task, before_act)
        self._store(done)
        return done.record

    def _refresh_corrections(self, phase: Phase) -> None:
        """Load the prior transcripts of the phase's domain once, and re-read the corrections
        (a person may have added or deleted some between rounds)."""
        retrieval = self.config.retrieval
        if not retrieval.corrections or retrieval.corrections_k == 0:
            return
        domain = registry.domain(phase.spec.env).name
        if retrieval.prior:
            load_prior(self.store, self.persisting_cache, domain=domain)
        if domain not in self.corrections:
            self.corrections[domain] = CorrectionSource(
                self.store, self.query_cache, k=retrieval.corrections_k, domain=domain, prior=retrieval.prior
            )
        else:
            self.corrections[domain].refresh()

    def _play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]:
        if self.config.execution.executor == "ray":
            if self._ray is None:
                from prag.run.ray_executor import (
                    RayRounds,  # imports ray: only when asked for
                )

                self._ray = RayRounds(self)
            yield from self._ray.play_round(phase, tasks)
            return
        workers = self.config.execution.workers
        if workers == 1:
            for task in tasks:
                yield self._episode(phase, task)
            return
        pool = ThreadPoolExecutor(workers)
        pending: set[Future[EpisodeDone]] = {pool.submit(self._episode, phase, task) for task in tasks}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
        except BaseException:
            # Ctrl-C or an error: the episodes under way give up before their next action, so
            # the round stops after the LLM calls in flight rather than after whole episodes.
            self._stopping.set()
            raise
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            self._stopping.clear()

    def _episode(self, phase: Phase, task: Task, before_act: BeforeAct | None = None) -> EpisodeDone:
        def go_on(step: StepRecord, observation: Observation, agent: Agent) -> bool:
            if self._stopping.is_set():
                raise _Stopped  # nothing of the episode is stored: it is played again on resume
            return before_act is None or before_act(step, observation, agent)

        with self.servers.episode() as url:  # one server for all the episode's requests
            players = Players(self.llm_at(url), self.experiences, self.corrections,
                              lambda visibility: semantic_memory(self.store, visibility), self.asker, self.person,
                              self.reading_memory.recaller)
            return EpisodeDone(play_task(self.run.id, self.config, phase, task, players, go_on), phase)

    def _store(self, done: EpisodeDone) -> None:
        record = done.record
        for event in done.answers:
            event.apply(self.store.answers)
        if self.store.has_episode(record.run_id, record.round, record.task_id):
            # A second copy of a stored episode (a retried Ray task whose first try got through):
            # the store keeps the first, and the round counts it once.
            self.listener("already stored", {"round": record.round, "task_id": record.task_id})
            return
        self.persisting_cache.vectors([record.goal] + [s.scene for s in record.steps])
        self.store.add_episode(record)
        self.listener("episode", {"round": record.round, **{k: v for k, v in asdict(record).items() if k not in {"steps", "extra"}}, "n_steps": record.n_actions})


def check_playable(config: RunConfig) -> None:
    """Refuse a config that cannot be played, before anything is created: its settings and its
    specs with their params (the task sources are opened). The LLM spec is `prag.llm.check_spec`'s."""
    config.check()
    experiment = config.experiment
    for spec in filter(None, (experiment.spec, experiment.train)):
        load_spec(spec).open(max_steps=experiment.max_steps)


def start_run(store: Store, config: RunConfig, run_id: str | None = None) -> RunRecord:
    """Record a new run in the store (its config, so that `resume_config` can rebuild it), with
    its copied round 0 if it has one, in one transaction; everything is checked first."""
    check_playable(config)
    experiment, retrieval = config.experiment, config.retrieval
    spec = load_spec(experiment.spec)
    for included in retrieval.include_runs:
        store.run(included)  # fails clearly on an unknown run
    if config.agent.ask == "learned":
        store.ask_policies.get(*asker_key(config.agent.asker))  # fails naming the policies stored
    run = RunRecord(
        id=run_id or new_run_id(spec.name, retrieval.mode),
        spec=spec.name,
        llm=experiment.llm,
        mode=retrieval.mode,
        k=retrieval.k,
        rounds=experiment.rounds,
        config=config.to_dict(),
        include_runs=list(retrieval.include_runs),
    )
    round0 = _round0_of(store, config) if experiment.round0_from else []
    with store.transaction():  # Ctrl-C while round 0 is copied leaves no run behind
        store.add_run(run)
        for episode in round0:
            store.add_episode(replace(episode, run_id=run.id, id=None, extra={**episode.extra, "copied_from": episode.id}))
    return run


def _round0_of(store: Store, config: RunConfig) -> list[EpisodeRecord]:
    """The round-0 episodes of `config`'s round0_from run, checked to stand for a round 0 of
    `config`; the new run gets copies of them and goes on from round 1."""
    source = store.run(config.experiment.round0_from or "")
    theirs = recorded_config(source)
    if any(c.experiment.train or c.retrieval.include_runs for c in (config, theirs)):
        raise PragError("--round0-from works for self-iteration runs without --train or --include, "
                        "whose round 0 retrieves nothing")
    ours, before = round0_settings(config), round0_settings(theirs)
    differ = [key for key in ours if before[key] != ours[key]]
    if differ:
        raise PragError(f"run {source.id} played round 0 with other settings ({', '.join(differ)}): "
                        f"its round 0 cannot stand for this run's; give the same options")
    episodes = [e for e in store.episodes(source.id) if e.round == 0 and e.source == "agent"]
    if theirs.agent.ask != config.agent.ask and not all(asked_every_step(e) for e in episodes):
        raise PragError(f"run {source.id} followed plans in round 0 (--ask {theirs.agent.ask}): its round 0 stands "
                        f"only for runs asking as it did; start the shared round 0 with --ask always")
    expected = len(load_spec(config.experiment.spec).open().tasks()[: config.experiment.limit])
    if len({e.task_id for e in episodes}) < expected:
        raise PragError(f"run {source.id} has not finished round 0 ({len(episodes)} of {expected} tasks): "
                        f"finish it first with `prag run --resume {source.id}`")
    return episodes


def asked_every_step(episode: EpisodeRecord) -> bool:
    """Whether the LLM chose every action of the episode (runs before the mediator always asked):
    such an episode is what any ask policy plays when it has no plan to follow."""
    return all(asked for _, asked, _ in episode.extra.get("decisions", []))


def learned_asker(store: Store, name: str | None) -> AskPolicy:
    """The learned ask policy stored under NAME[:VERSION] (default: the newest of the default name)."""
    from prag.run.asker import (
        learned_policy,  # loads stable-baselines3: only when asked for
    )

    return learned_policy(store.ask_policies.get(*asker_key(name)))


def asker_key(name: str | None) -> tuple[str, int | None]:
    """(name, version or None for the newest) of an `--asker NAME[:VERSION]`."""
    base, _, version = (name or DEFAULT_NAME).partition(":")
    if version and not version.isdigit():
        raise PragError(f"--asker {name!r}: give NAME or NAME:VERSION, the version a number")
    return base, int(version) if version else None


def resume_config(store: Store, run_id: str) -> tuple[RunRecord, RunConfig]:
    """An unfinished run and its recorded config, to play the episodes it is missing."""
    run = store.run(run_id)
    if run.status == "finished":
        raise PragError(f"run {run_id} is finished: nothing to resume")
    return run, recorded_config(run)


class RunLog:
    """runs/<run>/log.jsonl: one line per event, appended as the run goes (survives a crash)."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.path = directory / "log.jsonl"

    def __call__(self, event: str, data: dict) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": event, "time": time.time(), **data}, sort_keys=True) + "\n")
