"""Checking a corrected transcript in the simulator before it is trusted.

The interaction-learning paper stores improved transcripts unchecked and leaves checking them as
future work. We have the environments: replay the transcript's actions from the task's initial
state. It is verified only if the environment reports a win; otherwise the replay says at which
action it went wrong and why. The replayed transcript carries the environment's real
observations (not the ones an LLM imagined), and the scene graph of every replayed step is kept
for retrieval.
"""
from __future__ import annotations

from dataclasses import dataclass

from prag.envs.base import Environment, Task
from prag.envs.spec import TaskSetSpec, load_spec
from prag.errors import PragError
from prag.store import Store
from prag.store.records import EpisodeRecord, StepRecord
from prag.store.transcripts import Entry, Transcript
from prag.text import clip


@dataclass(frozen=True)
class Replay:
    won: bool
    actions: int  # actions played
    failed_at: int | None  # 1-based number of the action that went wrong; None when won
    note: str  # what happened, for people: "won after 5 actions" or where it failed
    transcript: Transcript  # as replayed: real observations, nothing after the win
    steps: list[StepRecord]  # the start and every played action, as an episode keeps them (scores too)

    @property
    def scenes(self) -> list[str]:
        """The scene graph at the start and after every played action."""
        return [step.scene for step in self.steps]


def replay(transcript: Transcript, env: Environment) -> Replay:
    """Play the transcript's actions in `env` from reset; person's utterances pass through."""
    observation = env.reset()
    steps = [StepRecord.of(0, None, observation)]
    entries: list[Entry] = []
    played = 0
    surprise = ""  # the first observation that differs from what the transcript claims
    for entry in transcript.entries:
        if entry.call == "learn_from_interaction":
            continue
        if entry.call == "observe":
            entries.append(Entry("observe", (), observation.text.strip()))
            continue
        if entry.call != "act":
            entries.append(entry)
            continue
        action = entry.args[0]
        if observation.won:
            break
        if action not in observation.admissible:
            number = played + 1
            return Replay(
                False, played, number,
                f"action {number} {action!r} is not admissible there (after: "
                f"{clip(observation.text, 160)!r}); admissible were: {', '.join(observation.admissible)}",
                Transcript(tuple(entries)), steps,
            )
        if observation.done:
            break
        observation = env.step(action)
        played += 1
        steps.append(StepRecord.of(played, action, observation))
        real = observation.text.strip()
        if not surprise and entry.result is not None and " ".join(entry.result.split()) != " ".join(real.split()):
            surprise = (
                f"; the first surprise was action {played} {action!r}: the transcript expected "
                f"{clip(entry.result, 100)!r}, the environment said {clip(real, 100)!r}"
            )
        entries.append(Entry.action(action, real))
    if observation.won:
        dropped = len(transcript.actions) - played
        tail = f" ({dropped} actions after the win were dropped)" if dropped else ""
        return Replay(True, played, None, f"won after {played} actions{tail}", Transcript(tuple(entries)), steps)
    return Replay(
        False, played, played or None,
        f"all {played} actions ran but the goal was not reached{surprise}",
        Transcript(tuple(entries)), steps,
    )


def open_task(spec_ref: str, task_id: str) -> tuple[TaskSetSpec, Task, Environment]:
    """The environment of one task of a spec (a name or a .toml path), ready to reset: as the
    family plays it, with neither the spec's step cap nor its action filter (a person's transcript
    may be longer than the agent's budget, and may use what the agent is not offered)."""
    spec = load_spec(spec_ref)
    source = spec.open_unwrapped()
    for task in source.tasks():
        if task.task_id == task_id:
            return spec, task, source.make(task)
    raise PragError(f"spec {spec.name} has no task {task_id!r}: was the spec changed since the episode?")


def episode_spec(store: Store, episode: EpisodeRecord) -> str:
    """The spec (as its run was given it: a name or a path) an episode's task comes from."""
    config = store.run(episode.run_id).config
    experiment = config.get("experiment", config)  # run config version 2 nests it; version 1 was flat
    played = episode.extra.spec
    for candidate in (experiment.get("spec"), experiment.get("train")):
        if candidate and (played is None or _spec_name(candidate) == played):
            return str(candidate)
    raise PragError(
        f"episode {episode.id}: its spec {played!r} is not among its run's specs; "
        "it cannot be replayed"
    )


def _spec_name(ref: str) -> str:
    try:
        return load_spec(ref).name
    except PragError:
        return ""


def replay_episode_task(spec_ref: str, task_id: str, transcript: Transcript) -> Replay:
    """Replay a transcript on a task, from its initial state, closing the environment after."""
    _, _, env = open_task(spec_ref, task_id)
    try:
        return replay(transcript, env)
    finally:
        env.close()
