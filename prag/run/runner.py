"""The iteration runner (P-RAG's Algorithm 1): rounds of episodes feeding the store.

Round 0 plays with an empty store (or the episodes of runs the user includes). After each
round its episodes become visible; round r retrieves from rounds < r. Self-iteration plays
the same task set every round; with a train spec, the rounds play the train set and a final
round evaluates the test set with the store frozen.

Each episode is written to the store in one transaction when it ends, by this thread only;
parallel episodes (threads) hand their records over. A run interrupted at any point resumes
with the episodes its rounds are missing: every task is played exactly once per round, and
an episode cut off mid-way is replayed from its start.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from prag.agent.agent import AgentConfig, PragAgent
from prag.corrections.prior import load_prior
from prag.envs.base import Environment, Observation, Task, TaskSource
from prag.envs import registry
from prag.envs.spec import TaskSetSpec, load_spec
from prag.errors import PragError
from prag.llm.base import LLM
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility, check_mode
from prag.run.config import ROUND0_SETTINGS, RunConfig
from prag.store import Store
from prag.store.records import EpisodeRecord, RunRecord, StepRecord


@dataclass(frozen=True)
class Phase:
    """One round of play: which task set, which round number."""

    round: int
    spec: TaskSetSpec
    tasks: list[Task]
    source: TaskSource


@dataclass
class EpisodeDone:
    record: EpisodeRecord
    phase: Phase


Listener = Callable[[str, dict], None]  # (event, data): progress reporting, run log


def new_run_id(spec: str, mode: str) -> str:
    return f"{spec}-{mode}-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S')}"


# Called before each action with (t, observation, agent); returning False ends the episode.
# The console uses it to show the episode and let a person speak to the agent (`agent.hear`).
BeforeAct = Callable[[int, Observation, PragAgent], bool]


def play_episode(
    env: Environment, agent: PragAgent, task: Task, max_steps: int, before_act: BeforeAct | None = None
) -> tuple[list[StepRecord], bool, dict]:
    """One episode from reset to win or step cap; success is the environment's `won`."""
    observation = env.reset()
    agent.reset(observation)
    steps = [StepRecord(0, None, observation.text, observation.scene_text)]
    won = False
    for t in range(1, max_steps + 1):
        if before_act is not None and not before_act(t, observation, agent):
            break
        decision = agent.act(observation)
        observation = env.step(decision.action)
        agent.observe(decision.action, observation)
        steps.append(StepRecord(t, decision.action, observation.text, observation.scene_text))
        if observation.won:
            won = True
            break
        if observation.done:
            break
    extra = {
        "thoughts": agent.thoughts,
        "invalid_actions": agent.usage.invalid_actions,
        "banned_actions": agent.usage.banned_actions,
        "corrections": agent.shown_corrections,
        # [t, text]: said after step t's observation (history index t is step t).
        "utterances": [[at, text] for at, text in agent.utterances],
    }
    return steps, won, extra


class Runner:
    """Plays a run's rounds into a store. `listener` hears about rounds and episodes."""

    def __init__(self, store: Store, run: RunRecord, config: RunConfig, llm: LLM, encoder: Encoder, listener: Listener | None = None) -> None:
        self.store = store
        self.run = run
        self.config = config
        self.llm = llm
        self.listener = listener or (lambda event, data: None)
        self.persisting_cache = EmbeddingCache(store, encoder)
        self.query_cache = EmbeddingCache(store, encoder, read_only=True)
        self.experiences = ExperienceSource(store, self.query_cache, check_mode(config.mode), config.k)
        self.corrections: dict[str, CorrectionSource] = {}  # by domain (action vocabulary)

    # --- the rounds -------------------------------------------------------------------------

    def phases(self) -> Iterator[Phase]:
        test = load_spec(self.config.spec)
        train = load_spec(self.config.train) if self.config.train else None
        iterate = train or test
        source = iterate.open()
        tasks = source.tasks()[: self.config.limit]
        for round_ in range(self.config.rounds):
            yield Phase(round_, iterate, tasks, source)
        if train is not None:
            test_source = test.open()
            yield Phase(self.config.rounds, test, test_source.tasks()[: self.config.limit], test_source)

    def play(self) -> None:
        for phase in self.phases():
            self.experiences.refresh()  # everything stored so far; visibility picks rounds < r
            self._refresh_corrections(phase)
            todo = [t for t in phase.tasks if not self.store.has_episode(self.run.id, phase.round, t.task_id)]
            self.listener("round", {"round": phase.round, "spec": phase.spec.name, "tasks": len(phase.tasks), "todo": len(todo)})
            for done in self._play_round(phase, todo):
                self._store(done)
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
        if not self.config.corrections or self.config.corrections_k == 0:
            return
        domain = registry.domain(phase.spec.env).name
        if self.config.prior:
            load_prior(self.store, self.persisting_cache, domain=domain)
        if domain not in self.corrections:
            self.corrections[domain] = CorrectionSource(
                self.store, self.query_cache, k=self.config.corrections_k, domain=domain, prior=self.config.prior
            )
        else:
            self.corrections[domain].refresh()

    def _play_round(self, phase: Phase, tasks: list[Task]) -> Iterator[EpisodeDone]:
        if self.config.workers == 1:
            for task in tasks:
                yield self._episode(phase, task)
            return
        pool = ThreadPoolExecutor(self.config.workers)
        pending: set[Future[EpisodeDone]] = {pool.submit(self._episode, phase, task) for task in tasks}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)

    def _episode(self, phase: Phase, task: Task, before_act: BeforeAct | None = None) -> EpisodeDone:
        visibility = Visibility(self.run.id, phase.round, tuple(self.config.include_runs))
        agent_config = AgentConfig(think=self.config.think, constrained=self.config.constrained, hide_actions=phase.spec.hide_actions)
        agent = PragAgent(
            self.llm, self.experiences, visibility, agent_config, seed=self.config.seed,
            corrections=self.corrections.get(registry.domain(phase.spec.env).name),
        )
        env = phase.source.make(task)
        max_steps = self.config.max_steps or phase.spec.max_steps
        start = time.perf_counter()
        try:
            steps, won, extra = play_episode(env, agent, task, max_steps, before_act)
        finally:
            env.close()
        usage = agent.usage
        record = EpisodeRecord(
            run_id=self.run.id,
            round=phase.round,
            task_id=task.task_id,
            task_type=task.task_type,
            goal=agent.goal,
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
            extra={**extra, "spec": phase.spec.name, "retrieved": [e.hit.episode_id for e in agent.retrieved]},
        )
        return EpisodeDone(record, phase)

    def _store(self, done: EpisodeDone) -> None:
        record = done.record
        self.persisting_cache.vectors([record.goal] + [s.scene for s in record.steps])
        self.store.add_episode(record)
        self.listener("episode", {"round": record.round, **{k: v for k, v in asdict(record).items() if k not in {"steps", "extra"}}, "n_steps": record.n_actions})


def start_run(store: Store, config: RunConfig, run_id: str | None = None) -> RunRecord:
    """Record a new run in the store (its config, so that `resume_config` can rebuild it)."""
    config.check()
    spec = load_spec(config.spec)
    if config.train:
        load_spec(config.train)
    for included in config.include_runs:
        store.run(included)  # fails clearly on an unknown run
    run = RunRecord(
        id=run_id or new_run_id(spec.name, config.mode),
        spec=spec.name,
        llm=config.llm,
        mode=config.mode,
        k=config.k,
        rounds=config.rounds,
        config=asdict(config),
        include_runs=list(config.include_runs),
    )
    round0 = _round0_of(store, config) if config.round0_from else []
    store.add_run(run)
    for episode in round0:
        store.add_episode(replace(episode, run_id=run.id, id=None, extra={**episode.extra, "copied_from": episode.id}))
    return run


def _round0_of(store: Store, config: RunConfig) -> list[EpisodeRecord]:
    """The round-0 episodes of `config.round0_from`, checked to stand for a round 0 of `config`;
    the new run gets copies of them and goes on from round 1."""
    source = store.run(config.round0_from or "")
    theirs = source.config
    if config.train or theirs.get("train") or config.include_runs or theirs.get("include_runs"):
        raise PragError("--round0-from works for self-iteration runs without --train or --include, "
                        "whose round 0 retrieves nothing")
    ours = asdict(config)
    differ = [key for key in ROUND0_SETTINGS if theirs.get(key) != ours[key]]
    if differ:
        raise PragError(f"run {source.id} played round 0 with other settings ({', '.join(differ)}): "
                        f"its round 0 cannot stand for this run's; give the same options")
    episodes = [e for e in store.episodes(source.id) if e.round == 0 and e.source == "agent"]
    expected = len(load_spec(config.spec).open().tasks()[: config.limit])
    if len({e.task_id for e in episodes}) < expected:
        raise PragError(f"run {source.id} has not finished round 0 ({len(episodes)} of {expected} tasks): "
                        f"finish it first with `prag run --resume {source.id}`")
    return episodes


def resume_config(store: Store, run_id: str) -> tuple[RunRecord, RunConfig]:
    run = store.run(run_id)
    if run.status == "finished":
        raise PragError(f"run {run_id} is finished: nothing to resume")
    return run, RunConfig(**run.config)


class RunLog:
    """runs/<run>/log.jsonl: one line per event, appended as the run goes (survives a crash)."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.path = directory / "log.jsonl"

    def __call__(self, event: str, data: dict) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": event, "time": time.time(), **data}, sort_keys=True) + "\n")
