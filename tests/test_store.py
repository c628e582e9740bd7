"""The experience store: round trips, migrations, refusal of foreign files, atomic writes."""
from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest
from support import damage_a_page_of, episode, run, stored_steps

import prag.store.access as access
from prag.errors import StoreError
from prag.retrieval.embed import text_hash
from prag.store import Store
from prag.store.episode_extra import Choice, Effort, EpisodeExtra, GoalReading, Hypothesis
from prag.store.outcomes import Outcome, ReadGoal, ReadingOutcome
from prag.store.records import StepRecord
from prag.store.schema import SCHEMA_VERSION


def file_digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_episode_round_trip_with_steps_and_vectors(tmp_path):
    path = tmp_path / "s.db"
    record = episode()
    record.llm_calls, record.prompt_tokens, record.extra = 4, 900, EpisodeExtra(goal_sentence="put a mug in shelf")
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


# --- one transaction helper, nesting -----------------------------------------------------------


def test_a_nested_transaction_that_fails_is_undone_alone_and_an_outer_failure_undoes_all(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        with store.transaction():
            store.add_episode(episode(task_id="kept"))
            with pytest.raises(StoreError):
                store.add_episode(episode(run_id="nobody"))  # fails inside, handled by its caller
        assert [e.task_id for e in store.episodes()] == ["kept"]
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.add_episode(episode(task_id="gone"))
                raise RuntimeError("stop")
        assert [e.task_id for e in store.episodes()] == ["kept"] and store.count("steps") == 2


def test_outcomes_are_the_agents_episodes_of_the_runs(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run("a"))
        store.add_run(run("b"))
        store.add_episode(episode("a", task_id="t1", scenes=("x", "y", "z")))
        store.add_episode(episode("b", task_id="t2"))
        correction = episode("a", task_id="t3")
        correction.source = "correction"
        store.add_episode(correction)
        with store.transaction() as conn:  # a row of an early version: its counts NULL
            conn.execute("update episodes set llm_calls = null, seconds = null, task_type = null where task_id = 't1'")
        (got,) = store.outcomes(["a"])
        assert (got.task_id, got.n_actions, got.cost.calls, got.seconds, got.task_type) == ("t1", 2, 0, 0.0, "")
        assert [e.task_id for e in store.outcomes(["a", "b"])] == ["t1", "t2"]


def test_the_store_reads_what_the_metrics_count_as_they_would_take_it_from_the_whole_episode(tmp_path):
    """`Store.outcomes` picks from each episode's extra with SQL what `Outcome.of` takes from the
    episode read whole: the same, whatever the extra holds."""
    first = Hypothesis("put a mug in drawer", "words", 0.5, "pick_and_place_simple", {"obj": "mug", "recep": "drawer"},
                       dropped="its plan ran out")
    last = Hypothesis("put a mug in shelf", "llm", 0.8, "pick_and_place_simple", {"obj": "mug", "recep": "shelf"})
    extras = [
        EpisodeExtra(decisions=[Choice("find", False, False), Choice("episode", False, False), Choice("find", True, True)],
                     reading=GoalReading("Shelve the mug.", last.sentence, "llm", 0.8, last.task, last.slots,
                                         hypotheses=[first, last]),
                     goal_sentence="put a mug in shelf.", env="alfworld", effort=Effort(2, 9, 1), spec="s"),
        EpisodeExtra(reading=GoalReading("Shelve the mug.")),  # nothing read the goal, no decision recorded
        EpisodeExtra(decisions=[Choice("llm", True, False)] * 2, env="sciworld", thoughts=["think"] * 3),
    ]
    with Store(tmp_path / "s.db") as store:
        store.add_run(run("a"))
        for n, extra in enumerate(extras + [EpisodeExtra(), EpisodeExtra()]):
            played = episode("a", round_=n % 2, task_id=f"t{n}", won=n % 3 == 0)
            played.extra, played.score, played.llm_calls = extra, (None if n else 42.5), n
            store.add_episode(played)
        with store.transaction() as conn:  # extras of early versions: none at all
            conn.execute("update episodes set extra = null where task_id = 't3'")
            conn.execute("update episodes set extra = '' where task_id = 't4'")
        assert store.outcomes(["a"]) == [Outcome.of(e) for e in store.episodes("a")]
        assert store.outcomes(["a"])[0].reading == ReadingOutcome(
            "llm", 1, ReadGoal(last.task, last.slots), ReadGoal(first.task, first.slots))


# --- deleting --------------------------------------------------------------------------------------


def vectors_of(store: Store, *texts: str) -> set[str]:
    return set(store.vectors("m", [text_hash(t) for t in texts]))


def test_deleting_an_episode_removes_its_steps_and_the_vectors_no_other_row_uses(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        gone = episode(task_id="t1", goal="shared goal", scenes=("shared scene", "own scene"))
        kept = episode(task_id="t2", goal="shared goal", scenes=("shared scene", "other scene"))
        texts = {"shared goal", "shared scene", "own scene", "other scene"}
        store.add_vectors("m", {text_hash(t): np.ones(4, dtype=np.float32) for t in texts})
        store.add_vectors("m2", {text_hash("own scene"): np.ones(2, dtype=np.float32)})  # every model's goes
        store.add_episode(gone)
        store.add_episode(kept)
        store.count_embeddings("m", encoded=4, hits=3)
        result = store.delete_episode(gone.id)
        assert (result.episodes, result.steps, result.vectors) == (1, 2, 2)
        assert [e.task_id for e in store.episodes()] == ["t2"] and store.count("steps") == 2
        assert vectors_of(store, *texts) == {text_hash(t) for t in texts - {"own scene"}}
        assert store.vector_counts() == {"m": 3}
        assert store.embedding_counts() == {"m": {"encoded": 4, "hits": 3}}  # the cache's history stays
        with pytest.raises(StoreError, match="no episode"):
            store.delete_episode(gone.id)


def test_deleting_a_run_removes_it_with_its_episodes_in_one_transaction(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run("a"))
        store.add_run(run("b"))
        for n in range(3):
            store.add_episode(episode("a", round_=n))
        store.add_episode(episode("b"))
        result = store.delete_run("a")
        assert (result.runs, result.episodes, result.steps) == (1, 3, 6)
        assert [r.id for r in store.runs()] == ["b"] and [e.run_id for e in store.episodes()] == ["b"]
        with pytest.raises(StoreError, match="no run 'a'"):
            store.delete_run("a")


def test_an_episode_a_correction_was_made_from_is_not_deleted_under_it(tmp_path):
    from prag.store.corrections import Correction

    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        source = store.add_episode(episode())
        fixed = store.corrections.add(Correction(origin="edit", domain="alfworld", goal="g", instructions=["g"],
                                                 transcript=">>> act('look')\n", verified=True, source_episode=source))
        for delete in (lambda: store.delete_episode(source), lambda: store.delete_run("r1")):
            with pytest.raises(StoreError, match=f"{fixed} \\(of episode {source}\\).*prag corrections delete"):
                delete()
        assert store.count("episodes") == 1 and store.runs()
        store.corrections.delete(fixed)
        assert store.delete_run("r1").episodes == 1


# --- damaged files ---------------------------------------------------------------------------------


def test_a_damaged_store_is_never_written_to(tmp_path):
    path = tmp_path / "s.db"
    stored_steps(path)
    damage_a_page_of(path)
    before = file_digest(path)
    with Store(path) as store:  # opening reads only
        assert store.integrity() != "ok"
        for write in (lambda: store.add_run(run("new")), lambda: store.set_run_status("r1", "finished"),
                      lambda: store.add_vectors("m", {"h": np.ones(2, dtype=np.float32)})):
            with pytest.raises(StoreError, match=r"is damaged .* writes nothing .*`sqlite3 .*s.db \.recover \| sqlite3 "):
                write()
    assert file_digest(path) == before


def test_a_read_that_meets_a_damaged_page_ends_in_the_recovery_message(tmp_path):
    path = tmp_path / "s.db"
    stored_steps(path)
    damage_a_page_of(path)
    with pytest.raises(StoreError, match=r"s.db is damaged \(database disk image is malformed\)"):
        with Store(path) as store:
            list(store.episodes())


# --- run claims ------------------------------------------------------------------------------------

CLAIMER = """
import sys, time
from prag.store import Store
with Store(sys.argv[1]) as store:
    store.claim_run("r1")
print("claimed", flush=True)
time.sleep(600)
"""


def test_a_run_played_by_a_live_process_is_not_claimed_twice_and_shows_stale_once_it_is_killed(tmp_path):
    import subprocess
    import sys

    from prag.store.claims import Claim

    path = tmp_path / "s.db"
    with Store(path) as store:
        store.add_run(run())
        store.set_run_status("r1", "interrupted")
    other = subprocess.Popen([sys.executable, "-c", CLAIMER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "claimed"
        with Store(path) as store:
            assert store.run_states() == {"r1": "running"}
            with pytest.raises(StoreError, match=f"run r1 is being resumed elsewhere \\(pid {other.pid} on "):
                store.claim_run("r1")
            with pytest.raises(StoreError, match=f"run r1 is being played \\(pid {other.pid} on "):
                store.delete_run("r1")
    finally:
        other.kill()
        other.wait()
    with Store(path) as store:
        assert store.run_states() == {"r1": "running (stale)"}
        store.claim_run("r1")  # the killed process's claim lapses
        assert store.run_claims()["r1"].is_mine() and store.run_states() == {"r1": "running"}
        store.set_run_status("r1", "interrupted")
        assert store.run_claims() == {"r1": None} and store.run_states() == {"r1": "interrupted"}
    assert Claim("elsewhere", 1, None, "2026-01-01T00:00:00+00:00").is_alive() is False  # another host: by heartbeat


def test_a_new_run_is_claimed_by_its_process_and_stamped_by_each_episode(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        store.add_run(run("done"), claim=False)
        claims = store.run_claims()
        assert claims["r1"] is not None and claims["r1"].is_mine() and claims["done"] is None
        first = claims["r1"].heartbeat_at
        with store.transaction() as conn:
            conn.execute("update runs set heartbeat_at = '2020-01-01T00:00:00+00:00'")
        store.add_episode(episode())
        assert store.run_claims()["r1"].heartbeat_at >= first
        assert store.run_states() == {"r1": "running", "done": "running (stale)"}


# --- what the machine allows: another application's file, a lock held too long, a full disk --------


def test_an_empty_sqlite_file_of_another_application_is_refused_and_left_untouched(tmp_path):
    # Before: an SQLite file with no tables was adopted as a new store, whoever had marked it.
    path = tmp_path / "theirs.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1196444487")  # 'GPKG': a GeoPackage
    conn.close()
    before = file_digest(path)
    with pytest.raises(StoreError, match=r"theirs.db is an SQLite database of another application \(its application_id is 0x47504b47\); it was left untouched"):
        Store(path)
    assert file_digest(path) == before and not (tmp_path / "theirs.db-wal").exists()


HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("begin immediate")  # the write lock, held until stdin closes
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_store_locked_by_another_process_past_the_wait_says_which_process_and_loses_nothing(tmp_path, monkeypatch):
    import subprocess
    import sys

    path = tmp_path / "s.db"
    stored_steps(path, episodes=3)
    monkeypatch.setattr(access, "BUSY_SECONDS", 0.2)  # the wait is 60 s
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        with Store(path) as store:
            with pytest.raises(StoreError) as raised:
                store.add_run(run("new"))
            message = " ".join(str(raised.value).split())
            assert f"s.db is locked by process {holder.pid} (" in message and "held its write lock for more than 0.2 s" in message
            assert "Nothing stored was lost" in message and "take s.db-wal with it" in message
            assert [r.id for r in store.runs()] == ["r1"] and store.count("episodes") == 3
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    with Store(path) as store:  # once the lock is let go, the store takes writes again
        store.add_run(run("new"))
        assert store.count("episodes") == 3


def test_a_full_disk_ends_the_write_whole_with_what_to_do_and_keeps_what_was_stored(tmp_path):
    # SQLITE_FULL as a disk without room gives it: the file may not grow past its pages.
    path = tmp_path / "s.db"
    stored_steps(path, episodes=3)
    with Store(path) as store:
        (pages,) = store.db.execute("PRAGMA page_count").fetchone()
        store.db.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StoreError) as raised:
            for n in range(200):  # until the free pages run out
                store.add_run(run(f"new {n}"))
                store.add_episode(episode(f"new {n}", scenes=tuple(f"scene {n} {i} " * 40 for i in range(6))))
        message = " ".join(str(raised.value).split())
        assert "the disk holding" in message and "s.db is full" in message and "nothing stored before was lost" in message
        assert "move" in message and "together with s.db-wal" in message
        kept = store.count("episodes")
        store.db.execute("PRAGMA max_page_count = 1000000")
        assert store.count("episodes") == kept and store.integrity() == "ok"
        assert kept >= 3 and store.episode(1).steps  # the earlier writes, whole
