"""The retrieval index's files beside the store: opened instead of rebuilt, appended as episodes
land, rebuilt when stale, damaged, foreign or of another encoder, and shipped cheaply."""
from __future__ import annotations

import json
import pickle
import shutil

import numpy as np
import pytest
from support import RefusingEncoder, add_random_episode, run, unit

from prag.retrieval import index as retrieval
from prag.retrieval.embed import EmbeddingCache, text_hash
from prag.retrieval.index import ExperienceIndex, Visibility
from prag.retrieval.persist import index_folder
from prag.store import Store

DIM, MODEL = 8, "random-unit"
ANN = {"ann_min_episodes": 100, "ann_candidates": 100, "ann_shards": 2}


class CountingCache(EmbeddingCache):
    """The embedding cache, counting the vectors the index asks it for (what it reads of the store)."""

    def __init__(self, store: Store, model: str = MODEL) -> None:
        super().__init__(store, RefusingEncoder(model, dim=DIM), read_only=True)
        self.asked = 0

    def vectors_by_hash(self, hashes, texts_of):  # type: ignore[no-untyped-def]
        self.asked += len(hashes)
        return super().vectors_by_hash(hashes, texts_of)


def fill(store: Store, rng: np.random.Generator, run_id: str, episodes: int, steps: int = 5, round_: int = 0) -> None:
    if run_id not in {r.id for r in store.runs()}:
        store.add_run(run(run_id))
    for _ in range(episodes):
        n = store.count("episodes")
        add_random_episode(store, rng, MODEL, DIM, run_id=run_id, round_=round_, task_id=f"task-{n}", goal=f"goal {n}",
                           scenes=tuple(f"scene {n}.{t}" for t in range(steps)))


def open_index(store: Store, *, persist: bool = True) -> tuple[ExperienceIndex, CountingCache]:
    cache = CountingCache(store)
    return ExperienceIndex.from_store(store, cache, persist=persist, **ANN), cache


EVERYTHING = Visibility()


def answers(index: ExperienceIndex, seed: int = 9, visibility: Visibility = EVERYTHING) -> list[list[tuple]]:
    """Exact and approximate top-5 of 10 random queries, as (episode, score rounded, best step)."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(10):
        q = unit(rng, DIM), unit(rng, DIM)
        for exact in (True, False):
            hits = index.query(*q, k=5, exact=exact, visibility=visibility)
            found.append([(h.episode_id, round(h.score, 5), h.best_step) for h in hits])
    return found


@pytest.fixture
def stored(tmp_path):
    """A store of 260 five-step episodes (1300 steps: enough for codes) in runs r1 and r2."""
    path = tmp_path / "s.db"
    rng = np.random.default_rng(0)
    with Store(path) as store:
        fill(store, rng, "r1", 200)
        fill(store, rng, "r2", 60, round_=1)
    return path


def test_an_open_from_the_files_reads_no_vector_and_answers_as_a_fresh_build(stored):
    with Store(stored) as store:
        fresh, _ = open_index(store, persist=False)
        cold, cold_cache = open_index(store)
        warm, warm_cache = open_index(store)
    assert cold_cache.asked == 260 + 260 * 5 and warm_cache.asked == 0
    assert warm._ann is not None and warm._ann.ntotal == 1300 and isinstance(warm.scenes, np.memmap)
    assert warm.rebuilt is None and cold.rebuilt is None  # no files at first is no message
    assert answers(warm) == answers(cold) == answers(fresh)
    seen = Visibility("r2", before_round=2, include_runs=("r1",))
    assert answers(warm, visibility=seen) == answers(fresh, visibility=seen)


def test_an_episode_stored_later_is_appended_not_rebuilt(stored):
    rng = np.random.default_rng(1)
    with Store(stored) as store:
        index, cache = open_index(store)
        folder = index_folder(stored, MODEL)
        generation = index._files.generation
        fill(store, rng, "r2", 1, steps=7, round_=2)
        newest = store.count("episodes")
        assert index.refresh(store, cache) == 1
        assert cache.asked == 260 + 1300 + 1 + 7  # the build, then the new episode's goal and steps only
        assert index.rebuilt is None and index._files.generation == generation
        assert index.size == 261 and index._ann.ntotal == 1307
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["header"]["last_id"] == newest and meta["columns"]["codes"]["rows"] == 1307
        # The next process opens the grown files: nothing read from the store, the new episode found.
        reopened, reopened_cache = open_index(store)
        assert reopened_cache.asked == 0 and reopened.size == 261
        goal = store.vectors(MODEL, [text_hash(f"goal {newest - 1}")])[text_hash(f"goal {newest - 1}")]
        scene = store.vectors(MODEL, [text_hash(f"scene {newest - 1}.3")])[text_hash(f"scene {newest - 1}.3")]
        assert reopened.query(goal, scene, k=1)[0].episode_id == newest  # through the codes (261 >= 100 episodes)
        assert answers(reopened) == answers(index)
        # Exact answers as a fresh build's (whose codes, learnt from all 1307 steps, differ).
        assert answers(reopened)[::2] == answers(open_index(store, persist=False)[0])[::2]


def test_another_process_appends_are_taken_from_the_files(stored):
    rng = np.random.default_rng(2)
    with Store(stored) as store:
        behind, behind_cache = open_index(store)
        fill(store, rng, "r1", 3)
        ahead, _ = open_index(store)  # appends the 3 episodes to the files
        assert ahead.size == 263
        assert behind.refresh(store, behind_cache) == 3 and behind_cache.asked == 1560  # its own build only
        assert answers(behind) == answers(ahead)
        # A scene first stored by the other process is known by its row, not added again.
        scenes = len(behind.scenes)
        add_random_episode(store, rng, MODEL, DIM, run_id="r1", task_id="again", goal="goal again",
                           scenes=("scene 262.0", "a scene never seen"))
        assert behind.refresh(store, behind_cache) == 1 and len(behind.scenes) == scenes + 1
        assert behind.step_vec[-2] == ahead.step_vec[ahead.step_start[-2]]


def corrupt_truncate(folder, other):
    path = next(folder.glob("g*.scenes"))
    path.write_bytes(path.read_bytes()[:1000])


def corrupt_head(folder, other):
    path = next(folder.glob("g*.goals"))
    data = bytearray(path.read_bytes())
    data[:64] = b"\x00" * 64
    path.write_bytes(bytes(data))


def corrupt_meta(folder, other):
    (folder / "meta.json").write_text('{"format": "prag-retrieval-index", "vers')


def missing_file(folder, other):
    next(folder.glob("g*.step_vec")).unlink()


def foreign(folder, other):
    """The files of another store (same model, other episodes) copied over these."""
    shutil.rmtree(folder)
    shutil.copytree(other, folder)


@pytest.mark.parametrize("damage", [corrupt_truncate, corrupt_head, corrupt_meta, missing_file, foreign])
def test_damaged_or_foreign_files_are_rebuilt_from_the_store(stored, tmp_path, damage, caplog):
    rng = np.random.default_rng(3)
    with Store(tmp_path / "other.db") as other:
        fill(other, rng, "r1", 250)
        open_index(other)
    with Store(stored) as store:
        fresh, _ = open_index(store, persist=False)
        open_index(store)
        episodes = store.count("episodes")
    folder = index_folder(stored, MODEL)
    damage(folder, index_folder(tmp_path / "other.db", MODEL))
    with Store(stored) as store:
        index, cache = open_index(store)
        assert index.rebuilt is not None and "rebuilding" in caplog.text
        assert cache.asked == 260 + 1300  # read again from the store, whole
        assert answers(index) == answers(fresh)
        assert store.count("episodes") == episodes and store.integrity() == "ok"
        again, again_cache = open_index(store)
        assert again_cache.asked == 0 and again.rebuilt is None  # the rebuilt files are trusted
    assert len(list(folder.glob("g*.scenes"))) == 1  # the old generation is gone


def test_deleting_a_run_or_reusing_an_id_invalidates(stored):
    rng = np.random.default_rng(4)
    with Store(stored) as store:
        index, cache = open_index(store)
        store.delete_run("r2")
        # The same index, refreshed (a runner between rounds), and a new one (another process).
        assert index.refresh(store, cache) == 200 and index.rebuilt is not None
        reopened, _ = open_index(store)
        assert reopened.rebuilt is None and reopened.size == 200
        assert answers(reopened) == answers(index) == answers(open_index(store, persist=False)[0])
        assert all(h[0] <= 200 for found in answers(reopened) for h in found)
        # The last episode deleted and its id given to a new one: the same count, other rows.
        last = store.count("episodes")
        store.delete_episode(last)
        fill(store, rng, "r3", 1)
        assert store.count("episodes") == 200 and max(index.ids) == last
        index.refresh(store, cache)
        assert index.rebuilt is not None and answers(index) == answers(open_index(store, persist=False)[0])


def test_an_index_in_memory_checks_the_store_too(stored):
    with Store(stored) as store:
        index, cache = open_index(store, persist=False)
        store.delete_run("r2")
        assert index.refresh(store, cache) == 200 and index.size == 200
        assert not index_folder(stored, MODEL).exists()


def test_each_encoder_has_its_own_files(stored):
    rng = np.random.default_rng(5)
    with Store(stored) as store:
        for e in store.episodes():  # the same texts, vectors of a second model
            store.add_vectors("other-model", {text_hash(t): unit(rng, DIM) for t in [e.goal, *(s.scene for s in e.steps)]})
        first, _ = open_index(store)
        cache = CountingCache(store, "other-model")
        second = ExperienceIndex.from_store(store, cache, **ANN)
        assert cache.asked == 1560 and second.rebuilt is None
        assert index_folder(stored, MODEL) != index_folder(stored, "other-model")
        assert not np.allclose(first.goals, second.goals)
        assert open_index(store)[1].asked == 0


def test_a_pickled_index_names_its_files_and_keeps_its_snapshot(stored):
    rng = np.random.default_rng(6)
    with Store(stored) as store:
        index, cache = open_index(store)
        shipped, before = pickle.dumps(index), answers(index)
        assert len(shipped) < 20_000  # paths and row counts, not 60 KB of vectors
        fill(store, rng, "r1", 2)
        index.refresh(store, cache)
        snapshot = pickle.loads(shipped)
        assert snapshot.size == 260 and index.size == 262  # the round's rows, not the ones appended since
        assert snapshot._ann is not None and snapshot._ann.ntotal == 1300
        assert answers(snapshot) == before
        detached = index.in_memory()
        assert detached._files is None and not isinstance(detached.scenes, np.memmap)
        assert answers(pickle.loads(pickle.dumps(detached))) == answers(index)


def test_scene_rows_find_every_key_across_sorts_and_prefix_collisions():
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 256, size=(120_000, 32), dtype=np.uint8)
    keys[1, :8] = keys[0, :8]  # the same 64-bit prefix, another hash
    rows = retrieval._SceneRows()
    for lo, hi in ((0, 1000), (1000, 31_000), (31_000, 31_005), (31_005, 120_000)):  # in the dict, then sorted
        batch = keys[lo:hi]
        assert (rows.find(batch, keys[:lo]) == -1).all()
        rows.add(batch)
        assert rows.find(batch, keys[:hi]).tolist() == list(range(lo, hi))
    assert rows.size == 120_000 and rows.find(keys, keys).tolist() == list(range(120_000))
    stranger = keys[:1].copy()
    stranger[0, 20] ^= 1  # a known prefix, an unknown hash
    assert rows.find(stranger, keys).tolist() == [-1]
