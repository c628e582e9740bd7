"""The experience store: round trips, migrations, refusal of foreign files, atomic writes."""
from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest
from support import episode, run

from prag.errors import StoreError
from prag.retrieval.embed import text_hash
from prag.store import Store
from prag.store.schema import SCHEMA_VERSION
from prag.store.records import StepRecord


def file_digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_episode_round_trip_with_steps_and_vectors(tmp_path):
    path = tmp_path / "s.db"
    record = episode()
    record.llm_calls, record.prompt_tokens, record.extra = 4, 900, {"reason": "won"}
    vectors = {text_hash(s.scene): np.full(4, i, dtype=np.float32) for i, s in enumerate(record.steps)}
    with Store(path) as store:
        store.add_run(run())
        store.add_vectors("m", vectors)
        episode_id = store.add_episode(record)
    with Store(path, create=False) as store:  # reopened from disk
        back = store.episode(episode_id)
        assert back == record
        found = store.vectors("m", vectors)
        assert all(np.array_equal(found[h], v) for h, v in vectors.items())
        assert store.run("r1").mode == "prag"


def test_new_file_gets_the_schema_with_recorded_migrations(tmp_path):
    path = tmp_path / "empty.db"
    path.write_bytes(b"")  # an empty file is a new store, not a foreign one
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert [m["version"] for m in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        assert store.db.execute("pragma journal_mode").fetchone()[0] == "wal"


def test_foreign_sqlite_file_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("create table customers (id integer, name text)")
    conn.execute("insert into customers values (1, 'Ada')")
    conn.commit()
    conn.close()
    before = file_digest(path)
    with pytest.raises(StoreError, match="not a prag store.*customers"):
        Store(path)
    assert file_digest(path) == before
    assert not (tmp_path / "other.db-wal").exists()


def test_corrupt_file_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not a database at all" * 50)
    before = file_digest(path)
    with pytest.raises(StoreError, match="not an SQLite database"):
        Store(path)
    assert file_digest(path) == before


def test_store_of_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "future.db"
    with Store(path) as store:
        store.db.execute("update prag_meta set value = '99' where key = 'schema_version'")
        store.db.conn.commit()
    with pytest.raises(StoreError, match="newer prag"):
        Store(path)


def test_missing_store_is_not_created_when_reading(tmp_path):
    with pytest.raises(StoreError, match="no store at"):
        Store(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()


def test_a_failed_episode_write_leaves_nothing_behind(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        broken = episode()
        broken.steps.append(StepRecord(1, "again", "duplicate t", "x"))  # violates the (episode, t) key
        with pytest.raises(StoreError):
            store.add_episode(broken)
        assert store.count("episodes") == 0 and store.count("steps") == 0
        store.add_episode(episode())  # the store is still usable
        assert store.count("episodes") == 1


def test_each_task_is_stored_once_per_round(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        store.add_episode(episode(round_=0))
        with pytest.raises(StoreError, match="cannot be stored"):
            store.add_episode(episode(round_=0))
        store.add_episode(episode(round_=1))
        assert store.has_episode("r1", 1, "t0") and not store.has_episode("r1", 2, "t0")


def test_episode_needs_its_run_and_a_reset_step(tmp_path):
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(StoreError):
            store.add_episode(episode(run_id="nobody"))
        store.add_run(run())
        headless = episode()
        headless.steps = headless.steps[1:]
        with pytest.raises(StoreError, match="reset step"):
            store.add_episode(headless)


def test_duplicate_run_name_is_refused(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        with pytest.raises(StoreError, match="already"):
            store.add_run(run())


def test_processes_creating_the_same_store_at_once_all_succeed(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "shared.db"
    code = f"from prag.store import Store; Store({str(path)!r}).close()"
    processes = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE) for _ in range(4)]
    assert [(p.wait(), p.stderr.read()) for p in processes] == [(0, b"")] * 4
    with Store(path) as store:
        assert [m["version"] for m in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
