"""The SQLite experience store: runs, episodes, steps, embeddings and corrections in one file.

The store reads and writes with SQL on its connection (`Store.conn`). sqlite-utils (`Store.db`)
creates the tables in the migrations and is imported there alone: importing it, with numpy, which
it imports, took 0.17 CPU seconds, a fifth of `prag stats`. The schema is versioned by recorded
migrations (`prag_migrations`); a store is recognised by its `prag_meta` table. Opening a file
that is not a prag store, or one written by a newer prag, fails before anything in it is touched.

The store owns every table: callers read and write through its methods (and
`store.corrections`, `store.ask_policies`, `store.answers`, `store.places`,
`store.readings`, `store.action_models`), never with SQL of their own.
Every write goes through `transaction()`, which nests, so that an import or a deletion is one
transaction however many rows it touches.

A file with a damaged page is never written to: before its first write a process runs SQLite's
quick check and refuses with a way to recover; a read that meets a damaged page ends in the
same message (`damaged`), raised by the `with Store(...)` block it happened in. A store prag may
not write to is opened read-only, and a lock held too long or a full disk is a clear error
(`prag.store.access`), from a write's transaction or else from the `with Store(...)` block.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prag.errors import DamagedStore, StoreError
from prag.names import check_run_id
from prag.store.access import connect, read_only, read_only_reason, trouble
from prag.store.claims import Claim, run_state
from prag.store.episode_extra import stored_extra
from prag.store.outcomes import Outcome
from prag.store.outcomes import read as read_outcomes
from prag.store.places import Places, record_places
from prag.store.readings import Readings
from prag.store.readings import add as record_reading
from prag.store.records import STATUSES, EpisodeRecord, RunRecord, StepRecord, now, text_hash
from prag.store.schema import MIGRATIONS, SCHEMA_VERSION
from prag.store.values import damaged_value, stored_float, stored_int, stored_json, stored_time
from prag.store.visibility import Visibility
from prag.text import command

if TYPE_CHECKING:  # numpy loads where vectors are read or written: `stats` and `compare` read none
    import numpy as np
    import sqlite_utils

    from prag.store.action_models import ActionModels
    from prag.store.answers import Answers
    from prag.store.ask_policies import AskPolicies
    from prag.store.corrections import Corrections

__all__ = ["Deleted", "IndexRows", "Store", "damaged", "now"]

FORMAT = "prag-experience-store"
SQLITE_MAGIC = b"SQLite format 3\x00"
_CHUNK = 500  # SQLite caps the number of parameters of one statement


@dataclass
class IndexRows:
    """The retrieval index's bulk-load format: what it needs of new episodes and their steps, as
    columns in id order (visibility and vector keys; the episodes themselves are `EpisodeRecord`s)."""

    episode_ids: list[int]
    run_ids: list[str]
    rounds: list[int]
    sources: list[str]
    goal_hashes: list[str]
    step_episode_ids: list[int]
    step_t: list[int]
    step_scene_hashes: list[str]


@dataclass(frozen=True)
class Deleted:
    """What a deletion removed."""

    runs: int
    episodes: int
    steps: int
    vectors: int


def is_damage(exc: BaseException) -> bool:
    """Whether an SQLite error says the file itself is damaged (rather than locked or misused)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    return name in {"SQLITE_CORRUPT", "SQLITE_NOTADB"} or "malformed" in str(exc)


def damaged(path: Path, detail: str) -> StoreError:
    """The error for a damaged store file: what happened, that nothing was written, how to recover."""
    fixed = path.with_name(f"{path.stem}-recovered{path.suffix or '.db'}")
    return DamagedStore(
        f"{path} is damaged ({detail}); prag writes nothing into a damaged store. Recover what "
        f"SQLite can still read into a new file with `{command('sqlite3', path, '.recover')} | {command('sqlite3', fixed)}` "
        f"and use {fixed}, or save the runs that still read with `{command('prag', 'export', path, '--run', 'RUN')} > RUN.jsonl` "
        f"and `prag import NEW.db RUN.jsonl`"
    )


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


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


class Store:
    """An experience store in one SQLite file."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.lock = threading.RLock()
        self.path = Path(path)
        self._depth = 0  # nesting of `transaction()`
        self._checked = False  # the quick check ran (before this process's first write)
        if not self.path.exists() and not create:
            raise StoreError(
                f"no store at {self.path}: create one with `prag run` or `prag import`"
            )
        _check_file(self.path)
        # Why prag may not write here (None: it may): then the store is only read.
        self.read_only = read_only_reason(self.path) if self.path.exists() else None
        if create:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a read-only place, or a file where a directory should be
                raise StoreError(f"{self.path} cannot be created ({exc.strerror}: {exc.filename}): "
                                 "give a store path in a directory you may write to") from None
        try:
            # Shared by parallel episodes' threads; `lock` serialises every use.
            self.conn = connect(self.path, self.read_only)
            self._recognise()
            self.conn.execute("PRAGMA foreign_keys = ON")
            if not self.read_only and self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                self._check_before_writing()
                self.conn.execute("PRAGMA journal_mode = wal")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise damaged(self.path, str(exc)) from None
            raise trouble(self.path, exc) or StoreError(
                f"{self.path} cannot be read as an SQLite database ({exc})") from None

    @classmethod
    def memory(cls) -> "Store":
        """A throwaway in-memory store (tests, dry runs)."""
        store = cls.__new__(cls)
        store.lock = threading.RLock()
        store.path = Path(":memory:")
        store.read_only = None
        store._depth = 0
        store._checked = False
        store.conn = sqlite3.connect(":memory:")
        store.conn.execute("PRAGMA foreign_keys = ON")
        store._recognise()
        store._migrate()
        return store

    # The parts of the store with tables of their own, each made where first used, its module
    # imported then if the store itself needs none of it: `prag compare` imports none of those
    # modules, `prag stats` the answers' alone.

    @cached_property
    def corrections(self) -> Corrections:
        from prag.store.corrections import Corrections

        return Corrections(self)

    @cached_property
    def ask_policies(self) -> AskPolicies:
        from prag.store.ask_policies import AskPolicies

        return AskPolicies(self)

    @cached_property
    def answers(self) -> Answers:
        from prag.store.answers import Answers

        return Answers(self)

    @cached_property
    def places(self) -> Places:
        return Places(self)

    @cached_property
    def readings(self) -> Readings:
        return Readings(self)

    @cached_property
    def action_models(self) -> ActionModels:
        from prag.store.action_models import ActionModels

        return ActionModels(self)

    @cached_property
    def db(self) -> sqlite_utils.Database:
        """sqlite-utils on the store's connection, for its table-creating helpers (the migrations)."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    def close(self) -> None:
        """Close the file (the `with` block does)."""
        self.conn.close()

    def rows(self, sql: str, params: Sequence[Any] = ()) -> Iterator[dict[str, Any]]:
        """The rows a query gives, each as {column: value}, as they are read."""
        cursor = self.conn.execute(sql, params)
        names = [column[0] for column in cursor.description]
        return (dict(zip(names, row)) for row in cursor)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.close()
        if exc is not None and is_damage(exc):
            raise damaged(self.path, str(exc)) from None
        found = trouble(self.path, exc) if isinstance(exc, sqlite3.OperationalError) else None
        if found is not None:  # a read kept from the file by a lock, say
            raise found from None

    # --- schema and transactions ------------------------------------------------------------

    def _recognise(self) -> None:
        (application,) = self.conn.execute("PRAGMA application_id").fetchone()
        if application:  # prag never sets one: a file another program marked as its own, even empty
            raise StoreError(
                f"{self.path} is an SQLite database of another application (its application_id is "
                f"{application:#010x}); it was left untouched: give a prag store, or a new file name"
            )
        tables = self._tables()
        if not tables:
            return
        if "prag_meta" not in tables:
            raise StoreError(
                f"{self.path} is an SQLite database but not a prag store "
                f"(it has tables: {', '.join(sorted(tables)[:6])}); it was left untouched: "
                "give a prag store, or a new file name"
            )
        meta = dict(self.conn.execute("select key, value from prag_meta").fetchall())
        if meta.get("format") != FORMAT:
            raise StoreError(f"{self.path} has a prag_meta table of another format; left untouched")
        if self.schema_version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer prag (schema {meta['schema_version']}, "
                f"this prag knows up to {SCHEMA_VERSION}): upgrade prag to open it"
            )

    @property
    def schema_version(self) -> int:
        """The schema the file is at (0 before the first migration): the newest migration applied,
        as `prag_meta` records it. A record that says otherwise (missing, -1, a version not
        applied) is damage: what prag does to a store (a deletion) depends on it."""
        if "prag_meta" not in self._tables():
            return 0
        row = self.conn.execute("select value from prag_meta where key = 'schema_version'").fetchone()
        applied = max(self._applied(), default=0)
        what = "prag_meta.schema_version"
        fix = (f"set it to the newest migration applied, {applied}: {command('sqlite3', self.path)} "
               f"\"insert or replace into prag_meta values ('schema_version', '{applied}')\"")
        if row is None:
            if applied:
                raise damaged_value(self.path, what, None, f"the newest migration applied, {applied}", fix)
            return 0
        version = stored_int(self.path, what, row[0], fix=fix)
        if version != applied and version <= SCHEMA_VERSION:  # past it: a newer prag's, refused as such
            raise damaged_value(self.path, what, row[0], f"the newest migration applied, {applied}", fix)
        return version

    def integrity(self) -> str:
        """SQLite's quick check of the whole file: "ok", or what is wrong with it."""
        try:
            return "; ".join(row[0] for row in self.conn.execute("PRAGMA quick_check(3)"))
        except sqlite3.DatabaseError as exc:
            return str(exc)

    def _check_before_writing(self) -> None:
        """The quick check, once per store object, before its first write: a damaged file is
        never written to (it reads the whole file: about a second a GB)."""
        if self._checked:
            return
        found = self.integrity()
        if found != "ok":
            raise damaged(self.path, found)
        self._checked = True

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One explicit transaction, holding the write lock; nested calls join it (as savepoints,
        so a failed inner part is undone alone when its caller handles the error). Inside it,
        write with the raw connection only: sqlite-utils' insert helpers commit on their own.
        A lock held too long by another process or a full disk ends it as a `StoreError`."""
        with self.lock:
            conn = self.conn
            outermost = self._depth == 0
            if outermost:
                if self.read_only:
                    raise read_only(self.path, self.read_only)
                self._check_before_writing()
            savepoint = f"prag_{self._depth}"
            try:
                conn.execute("BEGIN IMMEDIATE" if outermost else f"SAVEPOINT {savepoint}")
                self._depth += 1
                try:
                    yield conn
                    conn.execute("COMMIT" if outermost else f"RELEASE {savepoint}")
                except BaseException:
                    # SQLite ends the transaction itself after some errors (a full disk): then
                    # there is nothing left to undo.
                    if conn.in_transaction:
                        conn.execute("ROLLBACK" if outermost else f"ROLLBACK TO {savepoint}")
                        if not outermost:
                            conn.execute(f"RELEASE {savepoint}")
                    raise
                finally:
                    self._depth -= 1
            except sqlite3.OperationalError as exc:
                found = trouble(self.path, exc) if outermost else None
                if found is None:
                    raise
                raise found from None

    def _tables(self) -> set[str]:
        return {name for name, in self.conn.execute("select name from sqlite_master where type = 'table'")}

    def _applied(self) -> set[int]:
        if "prag_migrations" not in self._tables():
            return set()
        return {row[0] for row in self.conn.execute("select version from prag_migrations")}  # integer primary key: never text

    def _migrate(self) -> None:
        # By the recorded set, not the highest version: a migration released after a higher one
        # (numbers are taken as work starts) still runs.
        pending = [version for version, _, _ in MIGRATIONS if version not in self._applied()]
        if pending and self.read_only:
            raise StoreError(
                f"{self.path} needs this prag's schema upgrade (migrations {', '.join(map(str, pending))}), which "
                f"writes into it, but it is read-only for prag ({self.read_only}): copy it (with {self.path.name}-wal, "
                "if there is one) to a writable place and use the copy"
            )
        for version, name, step in MIGRATIONS:
            if version in self._applied():
                continue
            with self.transaction() as conn:  # each migration is one transaction, recorded with it
                # Another process may have migrated while we waited for the write lock.
                if version in self._applied():
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
                    "insert or replace into prag_meta values ('schema_version', ?)", [str(max(self._applied()))]
                )

    def migrations(self) -> list[dict[str, Any]]:
        """The migrations applied to the file, with when."""
        return list(self.rows("select * from prag_migrations order by version"))

    def count(self, table: str) -> int:
        """The number of rows of one of the store's tables."""
        (count,) = self.conn.execute(f"select count(*) from [{table}]").fetchone()
        return int(count)

    def insert(self, table: str, row: dict[str, Any]) -> int:
        """Insert one row, in the transaction under way or a new one; returns its rowid."""
        with self.transaction() as conn:
            return _insert(conn, table, row)

    def insert_version(self, table: str, key: str, row: dict[str, Any]) -> tuple[int, int]:
        """Insert `row` as the next version of its `key` column's value (1, 2, ...), reading and
        inserting under the write lock so that two writers get distinct versions; (rowid, version)."""
        with self.transaction() as conn:
            (latest,) = conn.execute(f"select coalesce(max(version), 0) from {table} where {key} = ?", [row[key]]).fetchone()
            version = latest + 1
            return _insert(conn, table, {**row, "version": version}), version

    # --- runs -------------------------------------------------------------------------------

    def add_run(self, run: RunRecord, *, claim: bool = True) -> None:
        """Record a run; a `running` one is claimed by this process (`claim=False`: an imported run).
        Its id must be a run id (prag.names: it names the run's folder)."""
        check_run_id(run.id)
        if self.conn.execute("select 1 from runs where id = ?", [run.id]).fetchone():
            raise StoreError(f"a run named {run.id!r} is already in {self.path}: choose another name")
        row = run.to_dict()
        row["created_at"] = row["created_at"] or now()
        row["config"] = json.dumps(run.config, sort_keys=True)
        row["include_runs"] = json.dumps(run.include_runs)
        if claim and run.status == "running":
            mine = Claim.mine()
            row.update(claim_host=mine.host, claim_pid=mine.pid, claim_started=mine.started, heartbeat_at=now())
        self.insert("runs", row)

    def run(self, run_id: str) -> RunRecord:
        """A run by id; an unknown one is an error naming the runs there are."""
        row = next(self.rows("select * from runs where id = ?", [run_id]), None)
        if row is None:
            known = ", ".join(r.id for r in self.runs()) or "none"
            raise StoreError(f"no run {run_id!r} in {self.path} (runs: {known})")
        return _run_from_row(self.path, row)

    def runs(self) -> list[RunRecord]:
        """Every run, oldest first."""
        return [_run_from_row(self.path, row) for row in self.rows("select * from runs order by created_at, id")]

    def set_run_status(self, run_id: str, status: str) -> None:
        """Record a run's status; a run no longer running is released by its process."""
        finished = now() if status == "finished" else None
        with self.transaction() as conn:
            conn.execute(
                "update runs set status = ?, finished_at = ? where id = ?", [status, finished, run_id]
            )
            if status != "running":
                conn.execute(
                    "update runs set claim_host = null, claim_pid = null, claim_started = null where id = ?",
                    [run_id],
                )

    def claim_run(self, run_id: str) -> None:
        """Take a run for this process to play (a resume), refused while another live process
        plays it: two resumes of one run would play the same tasks."""
        with self.transaction() as conn:
            run = self.run(run_id)
            claim = self.run_claims().get(run_id)
            if run.status == "running" and claim is not None and claim.is_alive() and not claim.is_mine():
                raise StoreError(
                    f"run {run_id} is being resumed elsewhere ({claim.describe()}): let it finish, "
                    f"or stop that process and resume again; `{command('prag', 'stats', self.path)}` shows the run's state"
                )
            mine = Claim.mine()
            conn.execute(
                "update runs set status = 'running', finished_at = null, claim_host = ?, claim_pid = ?, "
                "claim_started = ?, heartbeat_at = ? where id = ?",
                [mine.host, mine.pid, mine.started, now(), run_id],
            )

    def run_claims(self) -> dict[str, Claim | None]:
        """Which process plays each run (None: no process claims it)."""
        rows = self.conn.execute("select id, claim_host, claim_pid, claim_started, heartbeat_at from runs")
        return {
            run_id: Claim(host, stored_int(self.path, f"runs.claim_pid of run {run_id}", pid), started,
                          stored_time(self.path, f"runs.heartbeat_at of run {run_id}", heartbeat))
            if pid is not None else None
            for run_id, host, pid, started, heartbeat in rows
        }

    def run_states(self) -> dict[str, str]:
        """Each run's status as it should be shown: a `running` run whose process is gone is
        `running (stale)` (see `prag.store.claims`)."""
        claims = self.run_claims()
        return {run.id: run_state(run.status, claims.get(run.id)) for run in self.runs()}

    # --- episodes ---------------------------------------------------------------------------

    def add_episode(self, episode: EpisodeRecord) -> int:
        """Write an episode with all its steps in one transaction; returns its id.

        The goal and scene hashes refer to rows of `embeddings`; vectors are written by the
        embedding cache (`prag.retrieval.embed.EmbeddingCache`) before the episode.
        """
        if not episode.steps or episode.steps[0].t != 0:
            raise StoreError(f"episode {episode.task_id!r} has no reset step (t = 0); nothing stored")
        episode.n_actions = sum(1 for step in episode.steps if step.action is not None)
        row = {
            key: value
            for key, value in episode.to_dict().items()
            # An episode without a score leaves the column to its default (NULL), as stores of
            # schema 9 and before, which have no such column, are written.
            if key not in {"steps", "id", "extra", "n_actions"} and not (key == "score" and value is None)
        }
        row.update(
            won=int(episode.won),
            n_steps=episode.n_actions,
            goal_hash=text_hash(episode.goal),
            extra=json.dumps(episode.extra.to_json(), sort_keys=True),
            created_at=now(),
        )
        try:
            with self.transaction() as conn:
                episode_id = self.insert("episodes", row)
                scored = any(s.score is not None for s in episode.steps)
                conn.executemany(
                    "insert into steps (episode_id, t, action, observation, scene, scene_hash, graph"
                    + (", score) values (?, ?, ?, ?, ?, ?, ?, ?)" if scored else ") values (?, ?, ?, ?, ?, ?, ?)"),
                    [
                        (episode_id, s.t, s.action, s.observation, s.scene, text_hash(s.scene),
                         json.dumps({"location": s.location, "triples": s.triples}), *([s.score] if scored else []))
                        for s in episode.steps
                    ],
                )
                record_places(conn, episode_id, episode)
                record_reading(conn, episode_id, episode)
                conn.execute("update runs set heartbeat_at = ? where id = ?", [now(), episode.run_id])
        except sqlite3.IntegrityError as exc:
            raise StoreError(
                f"episode {episode.task_id!r} of run {episode.run_id!r} round {episode.round} "
                f"cannot be stored ({exc}): is the run in the store, and the episode new?"
            ) from None
        episode.id = int(episode_id)
        return episode.id

    def has_episode(self, run_id: str, round_: int, task_id: str, source: str = "agent") -> bool:
        """Whether the task was played (stored) in this round of the run."""
        return self.episode_id(run_id, round_, task_id, source) is not None

    def episode_id(self, run_id: str, round_: int, task_id: str, source: str = "agent") -> int | None:
        """The id of the episode with this key (each task is played once per round), if stored."""
        row = self.conn.execute(
            "select id from episodes where run_id = ? and round = ? and task_id = ? and source = ?",
            [run_id, round_, task_id, source],
        ).fetchone()
        return int(row[0]) if row else None

    def episode(self, episode_id: int) -> EpisodeRecord:
        """An episode with its steps; an unknown id is an error."""
        with self.lock:
            row = next(self.rows("select * from episodes where id = ?", [episode_id]), None)
            if row is None:
                raise StoreError(f"no episode {episode_id} in {self.path}")
            return self._episode_from_row(row)

    def episodes(self, run_id: str | None = None) -> Iterator[EpisodeRecord]:
        """The episodes (of one run, or all) with their steps, in id order."""
        where, params = (" where run_id = ?", [run_id]) if run_id else ("", [])
        for row in self.rows(f"select * from episodes{where} order by id", params):
            yield self._episode_from_row(row)

    def outcomes(self, run_ids: Sequence[str]) -> list[Outcome]:
        """What the metrics read of the agent's episodes (corrections are not plays) of the given
        runs, in id order (prag.store.outcomes)."""
        found: list[Outcome] = []
        for start in range(0, len(run_ids), _CHUNK):
            chunk = list(run_ids[start : start + _CHUNK])
            with self.lock:
                found += read_outcomes(self.path, self.conn, chunk)
        return sorted(found, key=lambda outcome: outcome.id or 0)

    def round_tallies(self, run_ids: Sequence[str]) -> list[tuple[str, int, bool, int]]:
        """(run id, round, won, actions taken) of each agent episode of the given runs, to count per
        round (`prag stats`): these columns alone are read and checked."""
        found: list[tuple[str, int, bool, int]] = []
        for start in range(0, len(run_ids), _CHUNK):
            chunk = list(run_ids[start : start + _CHUNK])
            with self.lock:
                rows = self.conn.execute(
                    f"select id, run_id, round, won, n_steps from episodes where source = 'agent' and run_id in ({_marks(chunk)})",
                    chunk,
                ).fetchall()
            found += [
                (run_id, stored_int(self.path, f"episodes.round of episode {id_}", round_, empty=0),
                 bool(stored_int(self.path, f"episodes.won of episode {id_}", won)),
                 stored_int(self.path, f"episodes.n_steps of episode {id_}", n_steps))
                for id_, run_id, round_, won, n_steps in rows
            ]
        return found

    def visible_episode_ids(self, visibility: Visibility) -> list[int]:
        """The ids of the episodes `visibility` sees, in id order: which there are, without reading them."""
        where, params = visibility.where()
        with self.lock:
            rows = self.conn.execute(f"select id from episodes where {where} order by id", params).fetchall()
        return [int(i) for i, in rows]

    def _episode_from_row(self, row: dict[str, Any]) -> EpisodeRecord:
        of = f"of episode {row['id']}"
        records = [self._step(s, of) for s in self.rows("select * from steps where episode_id = ? order by t", [row["id"]])]
        n_actions = stored_int(self.path, f"episodes.n_steps {of}", row.pop("n_steps"))
        for derived in ("goal_hash", "created_at"):
            row.pop(derived)
        # Counts of rows written by early versions may be NULL: nothing counted is 0.
        for name in ("round", "llm_calls", "prompt_tokens", "cached_tokens", "completion_tokens", "reasks", "seed"):
            row[name] = stored_int(self.path, f"episodes.{name} {of}", row[name], empty=0)
        for name in ("seconds", "llm_seconds"):
            row[name] = stored_float(self.path, f"episodes.{name} {of}", row[name], empty=0.0)
        row["task_type"] = row["task_type"] or ""
        row["won"] = bool(stored_int(self.path, f"episodes.won {of}", row["won"]))
        if row["score"] is not None:
            row["score"] = stored_float(self.path, f"episodes.score {of}", row["score"])
        row["extra"] = stored_extra(self.path, row["id"], row["extra"])
        return EpisodeRecord(steps=records, n_actions=n_actions, **row)

    def _step(self, row: dict[str, Any], of: str) -> StepRecord:
        what = f"steps.graph of step {row['t']} {of}"
        graph = stored_json(self.path, what, row["graph"], dict)
        if set(graph) != {"location", "triples"} or not isinstance(graph["triples"], list):
            raise damaged_value(self.path, what, row["graph"], "an object of a location and a list of triples")
        score = None if row["score"] is None else stored_float(self.path, f"steps.score {of}", row["score"])
        return StepRecord(stored_int(self.path, f"steps.t {of}", row["t"]), row["action"], row["observation"],
                          row["scene"], **graph, score=score)

    def index_rows(self, after_id: int = 0, limit: int | None = None) -> IndexRows:
        """What the retrieval index needs of the episodes with id > after_id (the first `limit`
        of them, or all), in id order."""
        episodes = self.conn.execute(
            "select id, run_id, round, source, goal_hash from episodes where id > ? order by id limit ?",
            [after_id, -1 if limit is None else limit],
        ).fetchall()
        upto = episodes[-1][0] if episodes else after_id
        steps = self.conn.execute(
            "select episode_id, t, scene_hash from steps where episode_id > ? and episode_id <= ? "
            "order by episode_id, t",
            [after_id, upto],
        ).fetchall()
        columns = list(zip(*episodes)) if episodes else [()] * 5
        step_columns = list(zip(*steps)) if steps else [()] * 3
        return IndexRows(
            episode_ids=list(columns[0]),
            run_ids=list(columns[1]),
            rounds=list(columns[2]),
            sources=list(columns[3]),
            goal_hashes=list(columns[4]),
            step_episode_ids=list(step_columns[0]),
            step_t=list(step_columns[1]),
            step_scene_hashes=list(step_columns[2]),
        )

    def index_digest(self, upto_id: int, after_id: int = 0) -> int:
        """A digest of the episode rows with after_id < id <= upto_id, for the retrieval index's
        files to tell whether the episodes they hold are still these: it changes when one is
        deleted, or its id reused. Digests of adjacent ranges add up (mod 2**128)."""
        total = 0
        for row in self.conn.execute(
            "select id, run_id, round, task_id, source, goal_hash, n_steps, seconds, created_at "
            "from episodes where id > ? and id <= ?",
            [after_id, upto_id],
        ):
            total += int.from_bytes(hashlib.blake2b(repr(row).encode(), digest_size=16).digest(), "little")
        return total % 2**128

    def texts(self, hashes: Sequence[str]) -> dict[str, str]:
        """The goal and scene texts stored under these hashes (to encode vectors never stored)."""
        texts: dict[str, str] = {}
        for start in range(0, len(hashes), _CHUNK):
            chunk = list(hashes[start : start + _CHUNK])
            for query in (
                f"select goal_hash, goal from episodes where goal_hash in ({_marks(chunk)}) group by goal_hash",
                f"select scene_hash, scene from steps where scene_hash in ({_marks(chunk)}) group by scene_hash",
            ):
                texts.update(self.conn.execute(query, chunk).fetchall())
        return texts

    def trajectory_bytes(self) -> int:
        """Characters of trajectory text (actions, observations, scene graphs) over all steps."""
        return int(
            self.conn.execute(
                "select coalesce(sum(length(coalesce(action, '')) + length(observation) + length(scene)), 0) "
                "from steps"
            ).fetchone()[0]
        )

    # --- deleting ---------------------------------------------------------------------------

    def delete_episode(self, episode_id: int) -> Deleted:
        """Remove an episode with its steps, and the vectors nothing else uses, in one transaction."""
        self.episode(episode_id)  # fails clearly on an unknown episode
        with self.transaction():
            return self._delete_episodes([episode_id])

    def delete_run(self, run_id: str) -> Deleted:
        """Remove a run with all its episodes, their steps and the vectors nothing else uses, in
        one transaction; refused while a live process plays the run."""
        with self.transaction() as conn:
            self.run(run_id)  # fails clearly on an unknown run
            claim = self.run_claims().get(run_id)
            if claim is not None and claim.is_alive() and not claim.is_mine():
                raise StoreError(
                    f"run {run_id} is being played ({claim.describe()}): stop it before deleting the run"
                )
            ids = [row[0] for row in conn.execute("select id from episodes where run_id = ?", [run_id])]
            gone = self._delete_episodes(ids)
            conn.execute("delete from runs where id = ?", [run_id])
        return Deleted(1, gone.episodes, gone.steps, gone.vectors)

    def _delete_episodes(self, ids: list[int]) -> Deleted:
        with self.transaction() as conn:
            hashes: set[str] = set()
            steps = 0
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                sources = conn.execute(
                    f"select id, source_episode from corrections where source_episode in ({_marks(chunk)})", chunk
                ).fetchall()
                if sources:
                    named = ", ".join(f"{c} (of episode {e})" for c, e in sources)
                    raise StoreError(
                        f"corrections by a person were made from these episodes: {named}; a correction goes "
                        f"away only when deleted itself: `{command('prag', 'corrections', 'delete', self.path, 'ID')}`, then delete again"
                    )
                hashes.update(row[0] for row in conn.execute(
                    f"select goal_hash from episodes where id in ({_marks(chunk)})", chunk))
                hashes.update(row[0] for row in conn.execute(
                    f"select distinct scene_hash from steps where episode_id in ({_marks(chunk)})", chunk))
                conn.execute(f"delete from places where episode_id in ({_marks(chunk)})", chunk)
                if self.schema_version >= 8:
                    conn.execute(f"delete from readings where episode_id in ({_marks(chunk)})", chunk)
                steps += conn.execute(f"delete from steps where episode_id in ({_marks(chunk)})", chunk).rowcount
                conn.execute(f"delete from episodes where id in ({_marks(chunk)})", chunk)
            vectors = self.drop_unused_vectors(hashes)
        return Deleted(0, len(ids), steps, vectors)

    # --- embeddings -------------------------------------------------------------------------

    def vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors of a model for these text hashes (missing ones are left out)."""
        wanted = list(dict.fromkeys(hashes))
        import numpy as np

        found: dict[str, np.ndarray] = {}
        with self.lock:
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                for digest, blob in self.conn.execute(
                    f"select hash, vector from embeddings where model = ? and hash in ({_marks(chunk)})",
                    [model, *chunk],
                ):
                    if not isinstance(blob, bytes) or len(blob) % 4:
                        raise damaged_value(self.path, f"the {model} vector of text {digest}", blob,
                                            "float32 numbers as bytes")
                    found[digest] = np.frombuffer(blob, dtype=np.float32)
        return found

    def add_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        """Store vectors of a model by text hash (one already there is kept)."""
        import numpy as np

        with self.transaction() as conn:
            conn.executemany(
                "insert or ignore into embeddings (model, hash, dim, vector) values (?, ?, ?, ?)",
                [
                    (model, digest, int(vec.shape[0]), np.asarray(vec, dtype=np.float32).tobytes())
                    for digest, vec in vectors.items()
                ],
            )

    def drop_unused_vectors(self, hashes: Iterable[str]) -> int:
        """Remove the vectors (of every model) of these hashes that no episode goal, step scene or
        correction text uses any more; returns how many rows went."""
        candidates = set(hashes)
        if not candidates:
            return 0
        from prag.store.corrections import correction_texts

        with self.transaction() as conn:
            used = {h for c in self.corrections.list() for h in map(text_hash, correction_texts(c))}
            unused = sorted(candidates - used)
            dropped = 0
            for start in range(0, len(unused), _CHUNK):
                chunk = unused[start : start + _CHUNK]
                still = {row[0] for row in conn.execute(
                    f"select goal_hash from episodes where goal_hash in ({_marks(chunk)}) "
                    f"union select scene_hash from steps where scene_hash in ({_marks(chunk)})", chunk + chunk)}
                gone = [h for h in chunk if h not in still]
                dropped += conn.execute(
                    f"delete from embeddings where hash in ({_marks(gone)})", gone).rowcount if gone else 0
        return dropped

    def count_embeddings(self, model: str, *, encoded: int, hits: int) -> None:
        """Add to the embedding cache's counts of texts encoded and served from the store."""
        with self.transaction() as conn:
            conn.execute(
                "insert into embedding_counts (model, encoded, hits) values (?, ?, ?) "
                "on conflict(model) do update set encoded = encoded + excluded.encoded, "
                "hits = hits + excluded.hits",
                [model, encoded, hits],
            )

    def embedding_models(self) -> list[str]:
        """The models the store holds vectors of."""
        return [row[0] for row in self.conn.execute("select distinct model from embeddings order by model")]

    def vector_counts(self) -> dict[str, int]:
        """Vectors stored per model."""
        return dict(self.conn.execute("select model, count(*) from embeddings group by model").fetchall())

    def vector_dims(self) -> dict[str, int]:
        """The dimension of each model's stored vectors."""
        return dict(self.conn.execute("select model, max(dim) from embeddings group by model").fetchall())

    def embedding_counts(self) -> dict[str, dict[str, int]]:
        """Per model: texts encoded and cache hits, as the embedding cache counted them."""
        return {
            row["model"]: {"encoded": row["encoded"], "hits": row["hits"]}
            for row in self.rows("select * from embedding_counts")
        }


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> int:
    cursor = conn.execute(
        f"insert into {table} ({', '.join(row)}) values ({_marks(list(row))})", list(row.values())
    )
    return int(cursor.lastrowid or 0)


def _run_from_row(path: Path, row: dict[str, Any]) -> RunRecord:
    data = {key: value for key, value in row.items() if not key.startswith("claim_") and key != "heartbeat_at"}
    of = f"of run {data['id']}"
    data["config"] = stored_json(path, f"runs.config {of}", data["config"], dict, empty="{}")
    data["include_runs"] = stored_json(path, f"runs.include_runs {of}", data["include_runs"], list, empty="[]")
    for name in ("rounds", "k"):
        data[name] = stored_int(path, f"runs.{name} {of}", data[name])
    if data["status"] not in STATUSES:
        raise damaged_value(path, f"runs.status {of}", data["status"], f"one of {', '.join(STATUSES)}")
    return RunRecord(**data)
