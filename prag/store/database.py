"""The SQLite experience store: runs, episodes, steps and embeddings in one file.

Built on sqlite-utils. The schema is versioned by recorded migrations (`prag_migrations`);
a store is recognised by its `prag_meta` table. Opening a file that is not a prag store,
or one written by a newer prag, fails before anything in it is touched.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import sqlite_utils

from prag.errors import StoreError
from prag.store.records import EpisodeRecord, RunRecord, StepRecord, text_hash
from prag.store.schema import MIGRATIONS, SCHEMA_VERSION

FORMAT = "prag-experience-store"
SQLITE_MAGIC = b"SQLite format 3\x00"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class EpisodeRow:
    """An episode as listed by the store, without its steps."""

    id: int
    run_id: str
    round: int
    task_id: str
    task_type: str
    goal: str
    won: bool
    n_steps: int
    shortest_path: int | None
    source: str


@dataclass
class IndexRows:
    """Column lists of episodes and their steps, as the retrieval index loads them."""

    episode_ids: list[int]
    run_ids: list[str]
    rounds: list[int]
    sources: list[str]
    task_ids: list[str]
    task_types: list[str]
    goals: list[str]
    goal_hashes: list[str]
    won: list[bool]
    step_episode_ids: list[int]
    step_t: list[int]
    step_scene_hashes: list[str]


def _check_file(path: Path) -> None:
    """Refuse anything that is not an SQLite file, before SQLite gets to write to it."""
    if not path.exists() or path.stat().st_size == 0:
        return
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a store file")
    with path.open("rb") as handle:
        if handle.read(16) != SQLITE_MAGIC:
            raise StoreError(
                f"{path} is not an SQLite database (corrupt, or not a prag store): "
                "give the path of a prag store, or a new file name to create one"
            )


class Store:
    """An experience store in one SQLite file."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.lock = threading.RLock()
        self.path = Path(path)
        if not self.path.exists() and not create:
            raise StoreError(
                f"no store at {self.path}: create one with `prag run` or `prag import`"
            )
        _check_file(self.path)
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # Shared by parallel episodes' threads; `lock` serialises every use.
            # A generous busy timeout: another process (a run, a query) may hold the write lock.
            self.db = sqlite_utils.Database(sqlite3.connect(self.path, timeout=60, check_same_thread=False))
            self._recognise()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} cannot be read as an SQLite database ({exc})") from None
        self.db.conn.execute("PRAGMA foreign_keys = ON")
        self.db.enable_wal()
        self._migrate()

    @classmethod
    def memory(cls) -> "Store":
        """A throwaway in-memory store (tests, dry runs)."""
        store = cls.__new__(cls)
        store.lock = threading.RLock()
        store.path = Path(":memory:")
        store.db = sqlite_utils.Database(memory=True)
        store.db.conn.execute("PRAGMA foreign_keys = ON")
        store._recognise()
        store._migrate()
        return store

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- schema ---------------------------------------------------------------------------

    def _recognise(self) -> None:
        tables = set(self.db.table_names())
        if not tables:
            return
        if "prag_meta" not in tables:
            raise StoreError(
                f"{self.path} is an SQLite database but not a prag store "
                f"(it has tables: {', '.join(sorted(tables)[:6])}); it was left untouched: "
                "give a prag store, or a new file name"
            )
        meta = dict(self.db.execute("select key, value from prag_meta").fetchall())
        if meta.get("format") != FORMAT:
            raise StoreError(f"{self.path} has a prag_meta table of another format; left untouched")
        if int(meta.get("schema_version", 0)) > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer prag (schema {meta['schema_version']}, "
                f"this prag knows up to {SCHEMA_VERSION}): upgrade prag to open it"
            )

    @property
    def schema_version(self) -> int:
        if "prag_meta" not in self.db.table_names():
            return 0
        row = self.db.execute("select value from prag_meta where key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One explicit transaction. Inside it, write with the raw connection only:
        sqlite-utils' insert helpers commit on their own and would split it."""
        with self.lock:
            conn = self.db.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _migrate(self) -> None:
        for version, name, step in MIGRATIONS:
            if version <= self.schema_version:
                continue
            with self.transaction() as conn:  # each migration is one transaction, recorded with it
                # Another process may have migrated while we waited for the write lock.
                if version <= self.schema_version:
                    continue
                if version == 1:
                    conn.execute("create table prag_meta (key text primary key, value text)")
                    conn.execute(
                        "create table prag_migrations "
                        "(version integer primary key, name text, applied_at text)"
                    )
                    conn.execute("insert into prag_meta values ('format', ?)", [FORMAT])
                step(self.db)
                conn.execute("insert into prag_migrations values (?, ?, ?)", [version, name, now()])
                conn.execute(
                    "insert or replace into prag_meta values ('schema_version', ?)", [str(version)]
                )

    def migrations(self) -> list[dict[str, Any]]:
        return list(self.db["prag_migrations"].rows_where(order_by="version"))

    # --- runs -----------------------------------------------------------------------------

    def add_run(self, run: RunRecord) -> None:
        if self.db["runs"].count_where("id = ?", [run.id]):
            raise StoreError(f"a run named {run.id!r} is already in {self.path}: choose another name")
        row = run.to_dict()
        row["created_at"] = row["created_at"] or now()
        row["config"] = json.dumps(run.config, sort_keys=True)
        row["include_runs"] = json.dumps(run.include_runs)
        with self.transaction() as conn:
            _insert(conn, "runs", row)

    def run(self, run_id: str) -> RunRecord:
        try:
            row = self.db["runs"].get(run_id)
        except sqlite_utils.db.NotFoundError:
            known = ", ".join(r.id for r in self.runs()) or "none"
            raise StoreError(f"no run {run_id!r} in {self.path} (runs: {known})") from None
        return _run_from_row(row)

    def runs(self) -> list[RunRecord]:
        return [_run_from_row(row) for row in self.db["runs"].rows_where(order_by="created_at, id")]

    def set_run_status(self, run_id: str, status: str) -> None:
        finished = now() if status == "finished" else None
        with self.transaction() as conn:
            conn.execute(
                "update runs set status = ?, finished_at = ? where id = ?", [status, finished, run_id]
            )

    # --- episodes -------------------------------------------------------------------------

    def add_episode(self, episode: EpisodeRecord) -> int:
        """Write an episode with all its steps in one transaction; returns its id.

        The goal and scene hashes refer to rows of `embeddings`; vectors are written by the
        embedding cache (`prag.retrieval.embed.EmbeddingCache`) before the episode.
        """
        if not episode.steps or episode.steps[0].t != 0:
            raise StoreError(f"episode {episode.task_id!r} has no reset step (t = 0); nothing stored")
        row = {
            key: value
            for key, value in episode.to_dict().items()
            if key not in {"steps", "id", "extra"}
        }
        row.update(
            won=int(episode.won),
            n_steps=episode.n_actions,
            goal_hash=text_hash(episode.goal),
            extra=json.dumps(episode.extra, sort_keys=True),
            created_at=now(),
        )
        try:
            with self.transaction() as conn:
                episode_id = _insert(conn, "episodes", row)
                conn.executemany(
                    "insert into steps (episode_id, t, action, observation, scene, scene_hash, graph) "
                    "values (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (episode_id, s.t, s.action, s.observation, s.scene, text_hash(s.scene),
                         json.dumps({"location": s.location, "triples": s.triples}))
                        for s in episode.steps
                    ],
                )
        except sqlite3.IntegrityError as exc:
            raise StoreError(
                f"episode {episode.task_id!r} of run {episode.run_id!r} round {episode.round} "
                f"cannot be stored ({exc}): is the run in the store, and the episode new?"
            ) from None
        episode.id = int(episode_id)
        return episode.id

    def has_episode(self, run_id: str, round_: int, task_id: str, source: str = "agent") -> bool:
        return bool(
            self.db["episodes"].count_where(
                "run_id = ? and round = ? and task_id = ? and source = ?",
                [run_id, round_, task_id, source],
            )
        )

    def episode_rows(self, where: str = "", params: Iterable[Any] = ()) -> list[EpisodeRow]:
        rows = self.db["episodes"].rows_where(
            where or None,
            list(params),
            select="id, run_id, round, task_id, task_type, goal, won, n_steps, shortest_path, source",
            order_by="id",
        )
        return [EpisodeRow(**{**row, "won": bool(row["won"])}) for row in rows]

    def episode(self, episode_id: int) -> EpisodeRecord:
        with self.lock:
            try:
                row = dict(self.db["episodes"].get(episode_id))
            except sqlite_utils.db.NotFoundError:
                raise StoreError(f"no episode {episode_id} in {self.path}") from None
            return self._episode_from_row(row)

    def episodes(self, run_id: str | None = None) -> Iterator[EpisodeRecord]:
        where, params = ("run_id = ?", [run_id]) if run_id else (None, [])
        for row in self.db["episodes"].rows_where(where, params, order_by="id"):
            yield self._episode_from_row(dict(row))

    def _episode_from_row(self, row: dict[str, Any]) -> EpisodeRecord:
        steps = [
            StepRecord(s["t"], s["action"], s["observation"], s["scene"], **json.loads(s["graph"]))
            for s in self.db["steps"].rows_where("episode_id = ?", [row["id"]], order_by="t")
        ]
        for derived in ("goal_hash", "n_steps", "created_at"):
            row.pop(derived)
        row["won"] = bool(row["won"])
        row["extra"] = json.loads(row["extra"] or "{}")
        return EpisodeRecord(steps=steps, **row)

    def index_rows(self, after_id: int = 0) -> "IndexRows":
        """What the retrieval index needs of the episodes with id > after_id, in id order."""
        episodes = self.db.execute(
            "select id, run_id, round, source, task_id, task_type, goal, goal_hash, won "
            "from episodes where id > ? order by id",
            [after_id],
        ).fetchall()
        steps = self.db.execute(
            "select episode_id, t, scene_hash from steps where episode_id > ? order by episode_id, t",
            [after_id],
        ).fetchall()
        columns = list(zip(*episodes)) if episodes else [()] * 9
        step_columns = list(zip(*steps)) if steps else [()] * 3
        return IndexRows(
            episode_ids=list(columns[0]),
            run_ids=list(columns[1]),
            rounds=list(columns[2]),
            sources=list(columns[3]),
            task_ids=list(columns[4]),
            task_types=list(columns[5]),
            goals=list(columns[6]),
            goal_hashes=list(columns[7]),
            won=[bool(w) for w in columns[8]],
            step_episode_ids=list(step_columns[0]),
            step_t=list(step_columns[1]),
            step_scene_hashes=list(step_columns[2]),
        )

    def scene_texts(self, hashes: list[str]) -> dict[str, str]:
        texts: dict[str, str] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            texts.update(
                self.db.execute(
                    f"select scene_hash, scene from steps where scene_hash in ({marks}) "
                    "group by scene_hash",
                    chunk,
                ).fetchall()
            )
        return texts

    def count(self, table: str) -> int:
        return self.db[table].count

    # --- embeddings -----------------------------------------------------------------------

    def vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        with self.lock:
            for start in range(0, len(wanted), 500):  # SQLite caps the number of parameters
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" for _ in chunk)
                for digest, blob in self.db.execute(
                    f"select hash, vector from embeddings where model = ? and hash in ({marks})",
                    [model, *chunk],
                ):
                    found[digest] = np.frombuffer(blob, dtype=np.float32)
        return found

    def add_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.transaction() as conn:
            conn.executemany(
                "insert or ignore into embeddings (model, hash, dim, vector) values (?, ?, ?, ?)",
                [
                    (model, digest, int(vec.shape[0]), np.asarray(vec, dtype=np.float32).tobytes())
                    for digest, vec in vectors.items()
                ],
            )

    def count_embeddings(self, model: str, *, encoded: int, hits: int) -> None:
        with self.transaction() as conn:
            conn.execute(
                "insert into embedding_counts (model, encoded, hits) values (?, ?, ?) "
                "on conflict(model) do update set encoded = encoded + excluded.encoded, "
                "hits = hits + excluded.hits",
                [model, encoded, hits],
            )

    def embedding_models(self) -> list[str]:
        return [row[0] for row in self.db.execute("select distinct model from embeddings order by model")]

    def embedding_counts(self) -> dict[str, dict[str, int]]:
        return {
            row["model"]: {"encoded": row["encoded"], "hits": row["hits"]}
            for row in self.db["embedding_counts"].rows
        }


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> int:
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    cursor = conn.execute(f"insert into {table} ({columns}) values ({marks})", list(row.values()))
    return int(cursor.lastrowid or 0)


def _run_from_row(row: dict[str, Any]) -> RunRecord:
    data = dict(row)
    data["config"] = json.loads(data["config"] or "{}")
    data["include_runs"] = json.loads(data["include_runs"] or "[]")
    return RunRecord(**data)
