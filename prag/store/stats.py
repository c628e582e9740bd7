"""What is in a store: runs, success per round, steps, text per episode, embeddings, size, and
where things of the most seen kinds were found."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from prag.store import Store

KINDS_SHOWN, PLACES_SHOWN = 8, 3  # `prag stats`' where-things-are section: the most seen kinds, their best places


@dataclass
class RoundStats:
    """The agent's episodes of one round of one run: how many, how many won, actions taken."""

    run_id: str
    round: int
    episodes: int
    won: int
    steps: int

    @property
    def success_rate(self) -> float:
        return self.won / self.episodes if self.episodes else 0.0


@dataclass
class StoreStats:
    """What `prag stats` shows of a store."""

    path: str
    schema_version: int
    runs: list[dict[str, Any]]
    rounds: list[RoundStats]
    episodes: int
    steps: int
    bytes_per_episode: float  # trajectory text (actions, observations, scene graphs) per episode
    vectors: dict[str, int]  # model -> vectors stored
    cache: dict[str, dict[str, int]]  # model -> encoded / hits
    db_bytes: int
    corrections: int = 0
    integrity: str = "ok"  # SQLite's quick check: "ok", or what is wrong with the file
    answers: dict[str, dict[str, float]] = field(default_factory=dict)  # model -> rows / hits / misses / saved_seconds
    # The most seen kinds of thing: {"kind", "episodes" that saw it placed, "places": [[place kind, episodes], ...]}
    places: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for row, stats in zip(data["rounds"], self.rounds):
            row["success_rate"] = stats.success_rate
        return data


def store_stats(store: Store) -> StoreStats:
    """The figures of `prag stats`, read through the store's own methods."""
    runs = store.runs()
    totals: dict[tuple[str, int], RoundStats] = {}
    for run_id, round_, won, actions in store.round_tallies([run.id for run in runs]):
        row = totals.setdefault((run_id, round_), RoundStats(run_id, round_, 0, 0, 0))
        row.episodes += 1
        row.won += int(won)
        row.steps += actions
    episodes = store.count("episodes")
    size = sum(
        os.path.getsize(f"{store.path}{suffix}")
        for suffix in ("", "-wal")
        if os.path.exists(f"{store.path}{suffix}")
    )
    states = store.run_states()
    return StoreStats(
        path=str(store.path),
        schema_version=store.schema_version,
        runs=[
            {"id": r.id, "spec": r.spec, "llm": r.llm, "mode": r.mode, "k": r.k, "status": states[r.id]}
            for r in runs
        ],
        rounds=[totals[key] for key in sorted(totals)],
        episodes=episodes,
        steps=store.count("steps"),
        bytes_per_episode=store.trajectory_bytes() / episodes if episodes else 0.0,
        vectors=store.vector_counts(),
        cache=store.embedding_counts(),
        answers=store.answers.stats(),
        places=[
            {"kind": kind, "episodes": seen, "places": [list(p) for p in store.places.ranked(kind)[:PLACES_SHOWN]]}
            for kind, seen in store.places.kinds(limit=KINDS_SHOWN)
        ],
        db_bytes=size,
        corrections=store.count("corrections"),
        integrity=store.integrity(),
    )
