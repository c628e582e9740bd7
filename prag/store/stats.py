"""What is in a store: runs, success per round, steps, text per episode, embeddings, size."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from prag.store import Store
from prag.store.answers import answer_stats


@dataclass
class RoundStats:
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
    answers: dict[str, dict[str, float]] = field(default_factory=dict)  # model -> rows / hits / misses / saved_seconds
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for row, stats in zip(data["rounds"], self.rounds):
            row["success_rate"] = stats.success_rate
        return data


def store_stats(store: Store) -> StoreStats:
    db = store.db
    rounds = [
        RoundStats(*row)
        for row in db.execute(
            "select run_id, round, count(*), sum(won), sum(n_steps) from episodes "
            "where source = 'agent' group by run_id, round order by run_id, round"
        )
    ]
    text_bytes = db.execute(
        "select coalesce(sum(length(coalesce(action, '')) + length(observation) + length(scene)), 0) "
        "from steps"
    ).fetchone()[0]
    episodes = store.count("episodes")
    size = sum(
        os.path.getsize(f"{store.path}{suffix}")
        for suffix in ("", "-wal")
        if os.path.exists(f"{store.path}{suffix}")
    )
    return StoreStats(
        path=str(store.path),
        schema_version=store.schema_version,
        runs=[
            {"id": r.id, "spec": r.spec, "llm": r.llm, "mode": r.mode, "k": r.k, "status": r.status}
            for r in store.runs()
        ],
        rounds=rounds,
        episodes=episodes,
        steps=store.count("steps"),
        bytes_per_episode=text_bytes / episodes if episodes else 0.0,
        vectors=dict(db.execute("select model, count(*) from embeddings group by model").fetchall()),
        cache=store.embedding_counts(),
        answers=answer_stats(store),
        db_bytes=size,
    )
