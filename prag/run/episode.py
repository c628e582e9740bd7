"""One episode of a run, as every executor plays it: the phase it belongs to, the agent it is
played by (built from `Players` by `prag.run.agents`), the record it becomes (`EpisodeDone`).
The runner and the executors (threads, processes, Ray) import this; it imports neither of them.
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prag.agent.protocol import Agent, Trace
from prag.envs.base import Environment, Observation, Task, TaskSource
from prag.envs.spec import TaskSetSpec
from prag.llm import LLM, WaitCallback, make_llm
from prag.llm.balance import server_urls
from prag.run.agents import Players, build_agent
from prag.run.config import ExecutionConfig, RunConfig
from prag.errors import PragError
from prag.store.answers import AnswerEvent
from prag.store.episode_extra import EpisodeExtra
from prag.store.ask_policies import DEFAULT_NAME
from prag.store.records import EpisodeRecord, StepRecord


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


def build_llm(
    spec: str, execution: ExecutionConfig, on_wait: WaitCallback | None = None, url: str | None = None
) -> LLM:
    """The LLM a `--llm` spec names, with the run's request timeout and retries, at server `url`
    (None: the backend's default); `on_wait` hears while a call to a server waits
    (`prag.llm.retrying`)."""
    where = {"base_url": url} if url is not None else {}
    return make_llm(spec, timeout=execution.llm_timeout, retries=execution.llm_retries, on_wait=on_wait, **where)


def serves_local_model(config: RunConfig) -> bool:
    """Whether the run's local model is served to its episodes (prag.llm.model_server): several
    play at once in this machine's threads or processes (a Ray cluster's workers load their own)."""
    execution = config.execution
    return config.experiment.llm.partition(":")[0] == "local" and execution.workers > 1 and execution.executor != "ray"


def llm_servers(config: RunConfig) -> list[str]:
    """The servers a run's episodes are spread over (prag.llm.balance); [] for a local model."""
    return server_urls(config.execution.llm_urls) if config.experiment.llm.startswith("openai:") else []


def play_task(
    run_id: str, config: RunConfig, phase: Phase, task: Task, players: Players, before_act: BeforeAct | None = None,
) -> EpisodeRecord:
    """One episode of `task` in `phase` by a P-RAG agent, as the store records it: played in the
    runner's threads and in Ray workers alike."""
    visibility = config.retrieval.visibility(run_id, phase.round)
    # The later rounds that play the task again (self-iteration, or a train round before the last): what
    # this one tries and fails is ruled out there (prag.agent.skills.irrevocable.gambling).
    later = max(0, config.experiment.rounds - 1 - phase.round)
    agent = build_agent(config, players, visibility, phase.spec.domain(), later=later)
    env = phase.source.make(task)
    start = time.perf_counter()
    try:
        steps, won, trace = play_episode(env, agent, before_act)
    finally:
        env.close()
    usage, cost = trace.usage, trace.usage.cost
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
        llm_calls=cost.calls,
        prompt_tokens=cost.prompt_tokens,
        cached_tokens=cost.cached_tokens,
        completion_tokens=cost.completion_tokens,
        reasks=usage.reasks,
        seconds=time.perf_counter() - start,
        llm_seconds=cost.seconds,
        extra=EpisodeExtra(
            **vars(trace.report), spec=phase.spec.name, env=phase.spec.env, retrieved=trace.retrieved,
            # The family's own sentence only where the agent was told the goal in other words.
            goal_sentence=env.goal_sentence if env.goal_sentence != trace.goal else None,
            shortest_plan=_plan_source(env),
        ),
    )


def _plan_source(env: Environment) -> str | None:
    """How the shortest plan SPL measures against was found, where the family says (ALFWorld's
    `plan_source`): the card states it."""
    source = getattr(env, "plan_source", None)
    return source if isinstance(source, str) else None




def asker_key(name: str | None) -> tuple[str, int | None]:
    """(name, version or None for the newest) of an `--asker NAME[:VERSION]`."""
    base, _, version = (name or DEFAULT_NAME).partition(":")
    if version and not version.isdigit():
        raise PragError(f"--asker {name!r}: give NAME or NAME:VERSION, the version a number")
    return base, int(version) if version else None
