"""The store's schema as recorded migrations: append-only, each one transaction.

A released migration is never edited, only followed by a new one; `prag_migrations` records
which ran and when.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from prag.envs.base import scene_from_text
from prag.store.places import backfill
from prag.store.readings import backfill as readings_backfill

if TYPE_CHECKING:  # a store imports sqlite-utils when it migrates (`Store.db`), not whenever it is opened
    import sqlite_utils


def _v1(db: sqlite_utils.Database) -> None:
    db.table("runs").create(
        {
            "id": str,
            "spec": str,
            "llm": str,
            "mode": str,
            "k": int,
            "rounds": int,
            "config": str,
            "include_runs": str,
            "status": str,
            "created_at": str,
            "finished_at": str,
        },
        pk="id",
    )
    db.table("episodes").create(
        {
            "id": int,
            "run_id": str,
            "round": int,
            "task_id": str,
            "task_type": str,
            "seed": int,
            "goal": str,
            "goal_hash": str,
            "won": int,
            "n_steps": int,
            "shortest_path": int,
            "source": str,
            "llm_calls": int,
            "prompt_tokens": int,
            "cached_tokens": int,
            "completion_tokens": int,
            "reasks": int,
            "seconds": float,
            "llm_seconds": float,
            "extra": str,
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id")],
        not_null={"run_id", "round", "task_id", "goal", "won", "n_steps", "source"},
    )
    db.table("episodes").create_index(["run_id", "round", "task_id", "source"], unique=True)
    db.table("steps").create(
        {
            "episode_id": int,
            "t": int,
            "action": str,
            "observation": str,
            "scene": str,
            "scene_hash": str,
        },
        pk=("episode_id", "t"),
        foreign_keys=[("episode_id", "episodes", "id")],
        not_null={"observation", "scene"},
    )
    db.table("embeddings").create(
        {"model": str, "hash": str, "dim": int, "vector": bytes},
        pk=("model", "hash"),
        not_null={"dim", "vector"},
    )
    db.table("embedding_counts").create({"model": str, "encoded": int, "hits": int}, pk="model")


def _v2(db: sqlite_utils.Database) -> None:
    # The corrections layer (prag.store.corrections): console transcripts corrected by a person, with
    # where they came from. Instruction and scene vectors live in `embeddings`, by text hash.
    db.table("corrections").create(
        {
            "id": int,
            "origin": str,  # prior | feedback | edit
            "name": str,  # prior transcripts: "<prior spec>/<task id>"
            "source_episode": int,
            "domain": str,  # action vocabulary: alfworld | grid | textworld
            "spec": str,
            "task_id": str,
            "task_type": str,
            "goal": str,
            "instructions": str,  # JSON list: the goal, then the person's utterances
            "feedback": str,
            "improvement_model": str,
            "problem": str,
            "advice": str,
            "answer": str,  # the improvement model's third answer, as it came
            "input_transcript": str,
            "transcript": str,
            "verified": int,
            "verify_note": str,
            "scenes": str,  # JSON list: the scene graph at every replayed step
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("source_episode", "episodes", "id")],
        not_null={"origin", "domain", "goal", "instructions", "transcript", "verified", "scenes"},
    )
    # Prior transcripts loaded once: a deleted one is not loaded again.
    db.table("prior_loads").create({"name": str, "digest": str, "loaded_at": str}, pk="name")


def _v3(db: sqlite_utils.Database) -> None:
    # A prior transcript is one correction: two runs starting at once on a new store each loaded
    # the prior (12 rows for 6 transcripts). Keep the first copy, then let the key refuse another.
    db.execute(
        "delete from corrections where origin = 'prior' and id not in "
        "(select min(id) from corrections where origin = 'prior' group by name)"
    )
    db.execute("create unique index corrections_prior_name on corrections (name) where origin = 'prior'")
    # Who plays a running run (prag.store.claims): host, pid and the process's start time, and
    # when it last stored an episode; a run whose process is gone shows as stale.
    for column, kind in (("claim_host", "text"), ("claim_pid", "integer"), ("claim_started", "text"),
                         ("heartbeat_at", "text")):
        db.execute(f"alter table runs add column {column} {kind}")
    # Deleting an episode keeps the vectors other rows still use: look them up by hash.
    db.execute("create index steps_scene_hash on steps (scene_hash)")
    db.execute("create index episodes_goal_hash on episodes (goal_hash)")


def _v4(db: sqlite_utils.Database) -> None:
    # Scene graphs as data: each step's key node and triples as JSON ({"location", "triples"}), read
    # by where-things-were and never-opened instead of re-parsing the text. Older rows get them from
    # their text, once.
    db.execute("alter table steps add column graph text")
    rows = db.execute("select scene_hash, min(scene) from steps group by scene_hash").fetchall()
    for scene_hash, scene in rows:  # by hash: indexed since migration 3
        location, triples = scene_from_text(scene)
        graph = json.dumps({"location": location, "triples": triples})
        db.execute("update steps set graph = ? where scene_hash = ?", [graph, scene_hash])


def _v5(db: sqlite_utils.Database) -> None:
    # The LLM answer cache (prag.store.answers): greedy answers by a hash of (model, prompt, decoding
    # settings). The prompt is not kept, so a row stays small.
    db.table("answers").create(
        {
            "key": str,
            "model": str,
            "text": str,
            "prompt_tokens": int,
            "completion_tokens": int,
            "seconds": float,  # what the model took when it first answered
            "created_at": str,
        },
        pk="key",
        not_null={"model", "text", "prompt_tokens", "completion_tokens", "seconds"},
    )
    db.table("answer_counts").create(
        {"model": str, "hits": int, "misses": int, "saved_seconds": float}, pk="model"
    )


def _v6(db: sqlite_utils.Database) -> None:
    # Learned ask policies (prag.store.ask_policies): the trained network as bytes, versioned per
    # name, with what it was trained on (task set, tasks, LLM, budget, lambda, seed, reward curve).
    db.table("ask_policies").create(
        {
            "id": int,
            "name": str,
            "version": int,
            "algorithm": str,
            "spec": str,
            "tasks": str,  # JSON list of task ids
            "llm": str,
            "timesteps": int,
            "penalty": float,
            "gamma": float,
            "seed": int,
            "features": int,
            "curve": str,  # JSON list: per PPO rollout, timesteps, episodes, mean return, asks
            "extra": str,  # JSON: evaluation before and after, network shape
            "model": bytes,
            "created_at": str,
        },
        pk="id",
        not_null={"name", "version", "algorithm", "spec", "tasks", "llm", "timesteps", "penalty", "gamma",
                  "seed", "features", "curve", "model"},
    )
    db.table("ask_policies").create_index(["name", "version"], unique=True)


def _v7(db: sqlite_utils.Database) -> None:
    # Semantic memory of where things are (prag.store.places): one row per (episode, kind of thing,
    # kind of place) its scene graphs showed, with the episode's run, round and source (never
    # changed once stored) so that a lookup by kind under the progressive rule reads this index
    # alone; filled here from the stored episodes.
    db.execute(
        "create table places (episode_id integer not null references episodes(id), run_id text not null, "
        "round integer not null, source text not null, kind text not null, place text not null, "
        "primary key (episode_id, kind, place))"
    )
    db.execute("create index places_kind on places (kind, source, run_id, round, place, episode_id)")
    backfill(db.conn)


def _v8(db: sqlite_utils.Database) -> None:
    # Goal readings (prag.store.readings): one row per episode that read its instruction, with the
    # episode's run, round and source for the progressive rule; filled from the stored episodes.
    db.execute(
        "create table readings (episode_id integer primary key references episodes(id), run_id text not null, "
        "round integer not null, source text not null, wording text not null, sentence text not null, "
        "reader text not null, verified integer not null)"
    )
    db.execute("create index readings_wording on readings (verified, source, run_id, round, wording, sentence)")
    readings_backfill(db.conn)


def _v9(db: sqlite_utils.Database) -> None:
    # Learned action models (prag.store.action_models): snapshots of the safe learner's model as
    # JSON, versioned per family, with the run and round they were learned for.
    db.table("action_models").create(
        {"id": int, "family": str, "version": int, "model": str, "episodes": int, "transitions": int,
         "run_id": str, "round": int, "created_at": str},
        pk="id",
        not_null={"family", "version", "model", "episodes", "transitions", "created_at"},
    )
    db.table("action_models").create_index(["family", "version"], unique=True)


def _v10(db: sqlite_utils.Database) -> None:
    # Scores where a family keeps one (ScienceWorld's 0-100 partial credit): the episode's final
    # score and each step's; NULL for families that only win or lose, and for earlier rows.
    db.execute("alter table episodes add column score real")
    db.execute("alter table steps add column score real")


def _v11(db: sqlite_utils.Database) -> None:
    # A correction's replay step by step (scene graphs as triples, scores): the sub-goals a
    # person's correction teaches are read from it (prag.agent.goals.milestones). Earlier rows: none.
    db.execute("alter table corrections add column steps text not null default '[]'")


# Append-only: a released migration is never edited, only followed by a new one.
MIGRATIONS: list[tuple[int, str, Callable[[sqlite_utils.Database], None]]] = [
    (1, "runs, episodes, steps, embeddings", _v1),
    (2, "corrections, prior_loads", _v2),
    (3, "one row per prior transcript, run claims, hash indexes", _v3),
    (4, "scene graphs as triples (steps.graph)", _v4),
    (5, "answers, answer_counts", _v5),
    (6, "ask_policies", _v6),
    (7, "places: where things of each kind were found", _v7),
    (8, "readings: how each episode read its goal", _v8),
    (9, "action_models: learned action models, versioned per family", _v9),
    (10, "scores: the family's score of each episode and step (ScienceWorld)", _v10),
    (11, "corrections.steps: a correction's replay, step by step", _v11),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
