"""Top-K retrieval: equal to a brute-force reference, modes, progressive visibility, ties."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import RefusingEncoder, episode, run, unit

from prag.errors import PragError
from prag.retrieval import index as retrieval
from prag.retrieval.embed import EmbeddingCache, text_hash
from prag.retrieval.index import ExperienceIndex, Visibility
from prag.store import Store

DIM = 8
_unique = itertools.count()


def fill(store: Store, rng: np.random.Generator, layout: list[tuple[str, int, int]]) -> dict[int, tuple]:
    """Store random-vector episodes; layout = (run, round, number of steps). Returns id -> vectors."""
    truth = {}
    for run_id in dict.fromkeys(r for r, _, _ in layout):
        store.add_run(run(run_id))
    for run_id, round_, n_steps in layout:
        n = next(_unique)
        record = episode(run_id, round_, f"task-{n}", goal=f"goal {n}", won=bool(n % 2),
                         scenes=tuple(f"scene {n}.{t}" for t in range(n_steps)))
        goal = unit(rng, DIM)
        scenes = [unit(rng, DIM) for _ in record.steps]
        store.add_vectors("random-unit", {text_hash(record.goal): goal} | {
            text_hash(s.scene): v for s, v in zip(record.steps, scenes)})
        truth[store.add_episode(record)] = (run_id, round_, goal, scenes)
    return truth


def brute_force(truth, q_goal, q_scene, k, mode, visible):
    """The published P-RAG way: a Python loop over every stored episode."""
    scored = []
    for episode_id, (run_id, round_, goal, scenes) in truth.items():
        if not visible(run_id, round_):
            continue
        scene = max(float(s @ q_scene) for s in scenes) if mode == "prag" else 0.0
        scored.append((float(goal @ q_goal) + scene, episode_id))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return scored[:k]


def make_index(store):
    return ExperienceIndex.from_store(store, EmbeddingCache(store, RefusingEncoder(dim=DIM)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**32 - 1),
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=25),
    k=st.integers(1, 6),
    mode=st.sampled_from(["prag", "goal"]),
)
def test_top_k_equals_brute_force(tmp_path_factory, seed, sizes, k, mode):
    rng = np.random.default_rng(seed)
    with Store(tmp_path_factory.mktemp("r") / "s.db") as store:
        truth = fill(store, rng, [("r1", i % 3, n) for i, n in enumerate(sizes)])
        index = make_index(store)
        q_goal, q_scene = unit(rng, DIM), unit(rng, DIM)
        hits = index.query(q_goal, q_scene, k=k, mode=mode)
        expected = brute_force(truth, q_goal, q_scene, k, mode, lambda r, rd: True)
        assert [h.episode_id for h in hits] == [e for _, e in expected]
        assert [h.score for h in hits] == pytest.approx([s for s, _ in expected], abs=1e-5)
        for hit in hits:
            _, _, goal, scenes = truth[hit.episode_id]
            assert hit.goal_score == pytest.approx(float(goal @ q_goal), abs=1e-5)
            if mode == "prag":
                assert hit.best_step == int(np.argmax([s @ q_scene for s in scenes]))
            else:
                assert hit.best_step is None and hit.scene_score == 0


def test_none_mode_retrieves_nothing(tmp_path):
    rng = np.random.default_rng(0)
    with Store(tmp_path / "s.db") as store:
        fill(store, rng, [("r1", 0, 3)])
        assert make_index(store).query(unit(rng, DIM), unit(rng, DIM), mode="none") == []


def test_prag_mode_needs_a_scene_and_modes_are_checked(tmp_path):
    rng = np.random.default_rng(0)
    with Store(tmp_path / "s.db") as store:
        fill(store, rng, [("r1", 0, 3)])
        with pytest.raises(PragError, match="needs a scene"):
            make_index(store).query(unit(rng, DIM), None, mode="prag")
    with pytest.raises(PragError, match="unknown retrieval mode 'sg'"):
        retrieval.check_mode("sg")


def test_progressive_visibility(tmp_path):
    rng = np.random.default_rng(1)
    with Store(tmp_path / "s.db") as store:
        truth = fill(store, rng, [("old", 0, 2), ("r1", 0, 2), ("r1", 1, 2), ("r1", 2, 2), ("other", 0, 2)])
        index = make_index(store)
        q = unit(rng, DIM), unit(rng, DIM)

        def seen(visibility):
            return {(truth[h.episode_id][0], truth[h.episode_id][1]) for h in index.query(*q, k=10, visibility=visibility)}

        assert seen(Visibility("r1", before_round=0)) == set()
        assert seen(Visibility("r1", before_round=2)) == {("r1", 0), ("r1", 1)}
        assert seen(Visibility("r1", before_round=1, include_runs=("old",))) == {("r1", 0), ("old", 0)}
        assert len(seen(Visibility())) == 5


def test_refresh_adds_new_episodes_only(tmp_path):
    rng = np.random.default_rng(2)
    with Store(tmp_path / "s.db") as store:
        fill(store, rng, [("r1", 0, 2), ("r1", 0, 3)])
        index = make_index(store)
        fill(store, rng, [("r2", 1, 4)])
        assert index.refresh(store, EmbeddingCache(store, RefusingEncoder(dim=DIM))) == 1
        assert index.size == 3 and len(index.step_t) == 2 + 3 + 4


def test_ties_are_broken_by_the_older_episode(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        same = np.eye(DIM, dtype=np.float32)[0]
        for n in range(4):
            record = episode(task_id=f"t{n}", goal="the same goal", scenes=("same scene",))
            store.add_vectors("random-unit", {text_hash("the same goal"): same, text_hash("same scene"): same})
            store.add_episode(record)
        hits = make_index(store).query(same, same, k=3)
        assert [h.episode_id for h in hits] == [1, 2, 3]


# --- the approximate path (PQ codes in shards, exact rescoring) ---------------------------------

TWIN_GOAL, TWIN_SCENE = np.eye(DIM, dtype=np.float32)[0], np.eye(DIM, dtype=np.float32)[1]


def add_twins(store: Store, run_id: str, round_: int, names: list[str]) -> dict[int, str]:
    """Episodes whose goal and every scene have the same vectors: exactly tied for a query of them.
    Returns their task ids by episode id."""
    ids = {}
    for name in names:
        record = episode(run_id, round_, name, goal=f"goal {name}", scenes=tuple(f"scene {name}.{t}" for t in range(5)))
        store.add_vectors("random-unit", {text_hash(record.goal): TWIN_GOAL} | {
            text_hash(step.scene): TWIN_SCENE for step in record.steps})
        ids[store.add_episode(record)] = name
    return ids


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """1803 episodes of 5 steps: run r1 (rounds 0-3, three exact twins in round 3) and run "old";
    codes in 3 shards, used from 1000 visible episodes with 400 candidates. With the index: each
    episode's (run, round, task id) by id."""
    rng = np.random.default_rng(3)
    with Store(tmp_path_factory.mktemp("ann") / "s.db") as store:
        truth = fill(store, rng, [("r1", i % 4, 5) for i in range(1500)] + [("old", 0, 5)] * 300)
        twins = add_twins(store, "r1", 3, ["twin-a", "twin-b", "twin-c"])  # rows 9000, 9005, 9010: one per shard
        index = ExperienceIndex.from_store(
            store, EmbeddingCache(store, RefusingEncoder(dim=DIM)),
            ann=True, ann_min_episodes=1000, ann_candidates=400, ann_shards=3,
        )
    assert index._ann is not None and index._ann.ntotal == 1803 * 5
    where = {i: (run_id, round_, "") for i, (run_id, round_, _, _) in truth.items()}
    return index, where | {i: ("r1", 3, name) for i, name in twins.items()}


def counting_searches(index, monkeypatch) -> list:
    searches = []
    search = index._ann.search
    monkeypatch.setattr(index._ann, "search", lambda *a: searches.append(a) or search(*a))
    return searches


def test_approximate_search_agrees_with_exact_search(large, monkeypatch):
    large, _ = large
    rng = np.random.default_rng(5)
    searches = counting_searches(large, monkeypatch)
    overlap = []
    for _ in range(20):
        q = unit(rng, DIM), unit(rng, DIM)
        approx = large.query(*q, k=5)
        exact = {h.episode_id: h for h in large.query(*q, k=5, exact=True)}
        overlap.append(len({h.episode_id for h in approx} & exact.keys()) / 5)
        for hit in approx:  # whatever the pool, the scores and best steps returned are exact
            if hit.episode_id in exact:
                assert hit.score == pytest.approx(exact[hit.episode_id].score, abs=1e-6)
                assert hit.best_step == exact[hit.episode_id].best_step
    assert np.mean(overlap) >= 0.95 and len(searches) == 20


def test_approximate_ties_go_to_the_older_episode(large, monkeypatch):
    large, where = large
    searches = counting_searches(large, monkeypatch)
    hits = large.query(TWIN_GOAL, TWIN_SCENE, k=5)
    exact = large.query(TWIN_GOAL, TWIN_SCENE, k=5, exact=True)
    assert len(searches) == 1
    assert [where[h.episode_id][2] for h in hits[:3]] == ["twin-a", "twin-b", "twin-c"]  # spread over the shards
    assert [h.episode_id for h in hits[:3]] == [h.episode_id for h in exact[:3]]
    assert [h.score for h in hits[:3]] == pytest.approx([2.0] * 3) and {h.best_step for h in hits[:3]} == {0}


def test_approximate_search_respects_visibility(large, monkeypatch):
    large, where = large
    rng = np.random.default_rng(6)
    searches = counting_searches(large, monkeypatch)
    visibility = Visibility("r1", before_round=2, include_runs=("old",))  # 1050 visible episodes

    def visible(hit):
        run_id, round_, _ = where[hit.episode_id]
        return run_id == "old" or (run_id == "r1" and round_ < 2)

    # The twins (round 3) would top this query: hidden, they must not appear.
    hits = large.query(TWIN_GOAL, TWIN_SCENE, k=5, visibility=visibility)
    assert len(hits) == 5 and all(visible(h) for h in hits)
    assert not any(where[h.episode_id][2].startswith("twin") for h in hits)
    overlap = []
    for _ in range(20):
        q = unit(rng, DIM), unit(rng, DIM)
        approx = large.query(*q, k=5, visibility=visibility)
        assert len(approx) == 5 and all(visible(h) for h in approx)
        exact = large.query(*q, k=5, visibility=visibility, exact=True)
        overlap.append(len({h.episode_id for h in approx} & {h.episode_id for h in exact}) / 5)
    assert np.mean(overlap) >= 0.95 and len(searches) == 21
    # Too few visible episodes: exact search, no codes.
    assert large.query(TWIN_GOAL, TWIN_SCENE, k=5, visibility=Visibility("r1", before_round=1)) and len(searches) == 21


def test_codes_of_later_episodes_are_searched(tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    with Store(tmp_path / "s.db") as store:
        fill(store, rng, [("r1", 0, 5)] * 210)
        cache = EmbeddingCache(store, RefusingEncoder(dim=DIM))
        index = ExperienceIndex.from_store(store, cache, ann=True, ann_min_episodes=100, ann_candidates=100, ann_shards=2)
        assert index._ann is not None and index._ann.ntotal == 1050
        fill(store, rng, [("r2", 0, 3)])  # odd batches shift which shard takes the next row
        (late,) = add_twins(store, "r2", 0, ["late"])
        index.refresh(store, cache)
        assert index._ann.ntotal == 1050 + 3 + 5
        searches = counting_searches(index, monkeypatch)
        hits = index.query(TWIN_GOAL, TWIN_SCENE, k=3)
        assert len(searches) == 1 and hits[0].episode_id == late and hits[0].score == pytest.approx(2.0)


def test_step_codes_keep_rows_in_order_across_shards():
    rng = np.random.default_rng(8)
    vectors = rng.standard_normal((1100, 16)).astype(np.float32)
    codes = retrieval._StepCodes(retrieval._StepCodes.train(vectors), shards=3)
    first = 0
    for n in (5, 1, 700, 0, 394):  # uneven batches: row r always goes to shard r mod 3
        codes.add(codes.encode(vectors[first:first + n]), first)
        first += n
    assert codes.ntotal == 1100 and codes.nbytes == 1100 * 4 * 4 // 8
    pq = codes.shards[0].pq  # every shard has the same codebooks
    decoded = pq.decode(pq.compute_codes(vectors))
    for s, shard in enumerate(codes.shards):
        assert np.allclose(shard.reconstruct_n(0, shard.ntotal), decoded[s::3])
    rows = codes.search(vectors[0], 1100, lambda rows: rows)
    assert sorted(np.concatenate(rows).tolist()) == list(range(1100))
    with pytest.raises(AssertionError, match="in order"):
        codes.add(codes.encode(vectors[:2]), 5)


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8)), max_size=800),
    count=st.integers(1, 25),
)
def test_best_episodes_equals_a_full_sort(pairs, count):
    """The shortlist helper ranks episodes as a stable full sort of their steps would, ties included."""
    episodes = np.array([e for e, _ in pairs], dtype=np.int64)
    sims = np.array([s for _, s in pairs], dtype=np.float32) / 8
    order = np.argsort(-sims, kind="stable")
    expected = list(dict.fromkeys(episodes[order].tolist()))[:count]
    got, best = retrieval._best_episodes(episodes, sims, count)
    assert got.tolist() == expected
    assert best.tolist() == [float(sims[episodes == e].max()) for e in expected]
