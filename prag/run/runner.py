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

import json
from collections.abc import Iterator
import threading
import time
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path

from prag.agent.person import Person
from prag.agent.protocol import Agent
from prag.agent.sources.mediator import AskPolicy
from prag.corrections.prior import load_prior
from prag.envs import registry
from prag.envs.base import Observation, Task
from prag.envs.spec import load_spec
from prag.errors import LLMError, PragError, writing
from prag.llm import LLM, WaitCallback, local_model
from prag.llm.balance import LeastLoaded
from prag.llm.local import default_threads
from prag.llm.model_server import ModelServer
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.run.agents import StoreReaders
from prag.run.config import RunConfig, recorded_config, round0_settings
from prag.run.episode import (  # noqa: F401  (re-exported: the runner's public names)
    BeforeAct,
    EpisodeDone,
    Listener,
    Phase,
    asker_key,
    build_llm,
    llm_servers,
    play_episode,
    play_task,
    serves_local_model,
)
from prag.run.executors import choose, executor_name
from prag.run.host import RoundExecutor
from prag.store import Store
from prag.store.action_models import ActionModelRecord
from prag.store.answers import cached
from prag.store.records import EpisodeRecord, RunRecord, StepRecord
from prag.text import command


def new_run_id(spec: str, mode: str) -> str:
    """The default run id: spec, mode and the UTC time."""
    return f"{spec}-{mode}-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S')}"



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
        self.stopping = threading.Event()  # set when a round stops early: its episodes give up
        self.injected_llm = llm
        self.on_wait = on_wait
        self.servers = LeastLoaded(llm_servers(config))
        self.model_server: ModelServer | None = None  # the local model's, once parallel episodes need it
        self._llms: dict[str | None, LLM] = {}  # by server
        self._llms_lock = threading.Lock()
        self._executors: dict[str, RoundExecutor] = {}  # by name, made on first use, closed at the end
        self.asker = learned_asker(store, config.agent.asker) if config.agent.ask == "learned" else None
        self.encoder = encoder if encoder is not None else Encoder(config.retrieval.embedding_model)
        self.listener = listener or (lambda event, data: None)
        self.persisting_cache = EmbeddingCache(store, self.encoder)
        self.query_cache = EmbeddingCache(store, self.encoder, read_only=True)
        self.readers = StoreReaders(store, self.query_cache, config.retrieval)

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
                self._refresh(phase)  # everything stored so far; visibility picks rounds < r
                self._learn_model(phase)
                todo = [t for t in phase.tasks if not self.store.has_episode(self.run.id, phase.round, t.task_id)]
                self.listener("round", {"round": phase.round, "spec": phase.spec.name, "tasks": len(phase.tasks), "todo": len(todo)})
                for done in self._play_round(phase, todo):
                    self._store(done)
        except LLMError as exc:
            if self.model_server is None:
                raise
            raise self.model_server.error(exc) from None
        finally:
            for executor in self._executors.values():
                executor.close()
            self._executors.clear()
            if self.model_server is not None:
                self.model_server.close()
        self.store.set_run_status(self.run.id, "finished")

    def play_one(self, phase: Phase, task: Task, before_act: BeforeAct | None = None) -> EpisodeRecord:
        """One episode, stored, with `before_act` called before every action: for the console,
        where a person watches the agent and may speak to it."""
        self._refresh(phase)
        done = self._episode(phase, task, before_act)
        self._store(done)
        return done.record

    def _learn_model(self, phase: Phase) -> None:
        """Learn the round's action model before it begins, where its agents plan with one, and
        keep it in the store when it learned something new (workers read it from there)."""
        domain = phase.spec.domain()
        visibility = self.config.retrieval.visibility(self.run.id, phase.round)
        learned = self.readers.world_models.for_agent(self.config.agent, visibility, domain)
        if learned is not None and learned.transitions:
            self.store.action_models.save_if_new(ActionModelRecord(
                domain.name, learned.to_json(), learned.episodes, learned.transitions, self.run.id, phase.round))

    def _refresh(self, phase: Phase) -> None:
        """Load the prior transcripts of the phase's domain once, where the run shows corrections,
        and re-read the store (a person may have added or deleted corrections between rounds)."""
        retrieval = self.config.retrieval
        domain = registry.domain(phase.spec.env).name
        if retrieval.corrections and retrieval.corrections_k > 0 and retrieval.prior:
            load_prior(self.store, self.persisting_cache, domain=domain)
        self.readers.refresh(domain)

    def _play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]:
        name = executor_name(self.config, phase.spec.env)
        if name in ("threads", "processes") and self.injected_llm is None and self.model_server is None \
                and serves_local_model(self.config):
            # One model for the round's parallel episodes, with the run's cores (prag.llm.model_server).
            path, model = local_model(self.config.experiment.llm)
            self.model_server = ModelServer(path, model, threads=default_threads(), sequences=self.config.execution.workers)
            self.servers = LeastLoaded([self.model_server.url])
        if name not in self._executors:
            self._executors[name] = choose(self, name)
        yield from self._executors[name].play_round(phase, tasks)

    def episode(self, phase: Phase, task: Task) -> EpisodeDone:
        """One episode of the round in this process (the serial and thread executors' work)."""
        return self._episode(phase, task)

    def _episode(self, phase: Phase, task: Task, before_act: BeforeAct | None = None) -> EpisodeDone:
        def go_on(step: StepRecord, observation: Observation, agent: Agent) -> bool:
            if self.stopping.is_set():
                raise _Stopped  # nothing of the episode is stored: it is played again on resume
            return before_act is None or before_act(step, observation, agent)

        with self.servers.episode() as url:  # one server for all the episode's requests
            players = self.readers.players(self.llm_at(url), self.asker, self.person)
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


def check_stored(store: Store, config: RunConfig) -> None:
    """Refuse a run whose config names what the store does not hold, or holds damaged, before
    anything is written: the runs it includes, its learned ask policy."""
    for included in config.retrieval.include_runs:
        store.run(included)  # fails clearly on an unknown run
    if config.agent.ask == "learned":
        learned_asker(store, config.agent.asker)  # fails naming the policies stored, or the damaged one


def start_run(store: Store, config: RunConfig, run_id: str | None = None) -> RunRecord:
    """Record a new run in the store (its config, so that `resume_config` can rebuild it), with
    its copied round 0 if it has one, in one transaction; everything is checked first."""
    check_playable(config)
    check_stored(store, config)
    experiment, retrieval = config.experiment, config.retrieval
    spec = load_spec(experiment.spec)
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
            store.add_episode(replace(episode, run_id=run.id, id=None, extra=replace(episode.extra, copied_from=episode.id)))
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
                        f"finish it first with `{command('prag', 'run', '--resume', source.id, '--store', store.path)}`")
    return episodes


def asked_every_step(episode: EpisodeRecord) -> bool:
    """Whether the LLM chose every action of the episode (runs before the mediator always asked):
    such an episode is what any ask policy plays when it has no plan to follow."""
    return all(decision.asked for decision in episode.extra.decisions)


def learned_asker(store: Store, name: str | None) -> AskPolicy:
    """The learned ask policy stored under NAME[:VERSION] (default: the newest of the default name)."""
    from prag.run.asker import (
        learned_policy,  # loads stable-baselines3: only when asked for
    )

    return learned_policy(store.ask_policies.get(*asker_key(name)), store.path)


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
        with writing(self.path), self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": event, "time": time.time(), **data}, sort_keys=True) + "\n")
