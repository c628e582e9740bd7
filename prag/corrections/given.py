"""Corrections given whole: a person's transcript of a task, or the world's own reference path
standing in for one.

`prag correct` turns feedback on an episode into a correction; here a person brings the whole
transcript of a task (`--transcript FILE`, console format, read with `ast` only and never run), or
asks for the task's reference path (`--reference`: the environment's own winning sequence, where
the family gives one, as ScienceWorld's gold paths; stored with origin "reference" so that every
measurement says it used that stand-in and not a person). Either is replayed from the task's
start and stored verified only if it wins; its replay, step by step, is what the progress source
learns the task's sub-goals from, re-bound to the other variations of its template
(prag.agent.goals.milestones).
"""
from __future__ import annotations

from dataclasses import dataclass

from prag.corrections.replay import Replay, open_task, replay
from prag.envs.registry import domain
from prag.envs.spec import load_spec
from prag.errors import PragError
from prag.retrieval.corrections import add_correction
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store
from prag.store.corrections import Correction
from prag.store.transcripts import Entry, Transcript


@dataclass(frozen=True)
class Given:
    """What became of one given transcript: the correction stored (None when it was not), its replay, why."""

    task_id: str
    stored: Correction | None
    replay: Replay | None
    message: str


def reference_transcript(spec_ref: str, task_id: str) -> Transcript:
    """The task's reference path as a console transcript: the goal said, then its actions (their
    observations are the replay's to fill in). An error where the family gives no reference path."""
    _, task, env = open_task(spec_ref, task_id)
    try:
        goal = env.reset().goal
        try:
            actions = env.oracle_plan()
        except (AttributeError, NotImplementedError):
            actions = []
    finally:
        env.close()
    if not actions:
        raise PragError(f"the family of {spec_ref} gives no reference path for {task_id}: give a person's transcript "
                        "with --transcript FILE instead")
    return Transcript((Entry.utterance(goal), *(Entry.action(action, "") for action in actions)))


def add_given(store: Store, cache: EmbeddingCache, spec_ref: str, task_id: str, transcript: Transcript, origin: str,
              keep_unverified: bool = False) -> Given:
    """Replay `transcript` on the task and store it as a correction of that origin ("edit" for a
    person's, "reference" for the stand-in) if it wins, else only with `keep_unverified`."""
    spec, task, env = open_task(spec_ref, task_id)
    try:
        played = replay(transcript, env)
    finally:
        env.close()
    if not played.won and not keep_unverified:
        return Given(task_id, None, played, f"{task_id}: not stored, the replay failed ({played.note})")
    correction = Correction(
        origin=origin,
        domain=domain(spec.env).name,
        goal=_goal(played, transcript),
        instructions=[_goal(played, transcript)],
        transcript=played.transcript.render(),
        verified=played.won,
        verify_note=played.note,
        scenes=played.scenes,
        steps=played.steps,
        spec=spec_ref,
        task_id=task.task_id,
        task_type=task.task_type,
        improvement_model="reference path" if origin == "reference" else "person",
    )
    add_correction(store, cache, correction)
    state = "verified" if played.won else "unverified"
    return Given(task_id, correction, played, f"{task_id}: stored {state} correction {correction.id} ({played.note})")


def _goal(played: Replay, transcript: Transcript) -> str:
    return transcript.goal or played.transcript.goal


def task_ids(spec_ref: str, wanted: list[str] | None) -> list[str]:
    """The spec's task ids, or those of `wanted` (each checked to be the spec's)."""
    known = [task.task_id for task in load_spec(spec_ref).open().tasks()]
    if not wanted:
        return known
    unknown = [t for t in wanted if t not in known]
    if unknown:
        raise PragError(f"spec {spec_ref} has no task {', '.join(map(repr, unknown))}: its tasks are {', '.join(known[:10])}"
                        + (" ..." if len(known) > 10 else ""))
    return wanted
