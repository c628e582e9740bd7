"""Top-K retrieval: equal to a brute-force reference, modes, progressive visibility, ties."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prag import retrieval
from prag.embed import EmbeddingCache, text_hash
from prag.errors import PragError
from prag.retrieval import ExperienceIndex, Visibility
from prag.store import Store
from support import RefusingEncoder, episode, run, unit

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


def test_approximate_search_agrees_with_exact_search(tmp_path):
    rng = np.random.default_rng(3)
    with Store(tmp_path / "s.db") as store:
        fill(store, rng, [("r1", i % 4, 5) for i in range(1500)])
        cache = EmbeddingCache(store, RefusingEncoder(dim=DIM))
        index = ExperienceIndex.from_store(store, cache, ann=True, ann_min_episodes=1000, ann_candidates=400)
        assert index._ann is not None and index._ann.ntotal == 1500 * 5
        searches = []
        search = index._ann.search
        index._ann.search = lambda *a: searches.append(a) or search(*a)  # count, to see the codes used
        overlap = []
        for _ in range(20):
            q = unit(rng, DIM), unit(rng, DIM)
            approx = index.query(*q, k=5)
            exact = {h.episode_id: h for h in index.query(*q, k=5, exact=True)}
            overlap.append(len({h.episode_id for h in approx} & exact.keys()) / 5)
            for hit in approx:  # whatever the pool, the scores returned are exact
                if hit.episode_id in exact:
                    assert hit.score == pytest.approx(exact[hit.episode_id].score, abs=1e-6)
        assert np.mean(overlap) >= 0.95 and len(searches) == 20
        # Visibility still holds on the approximate path (1125 visible episodes, above the minimum).
        visible = index.query(*q, k=5, visibility=Visibility("r1", before_round=3))
        assert all(h.round < 3 for h in visible) and len(visible) == 5 and len(searches) == 21
        # Episodes added later get codes too.
        fill(store, rng, [("r2", 0, 3)])
        index.refresh(store, cache)
        assert index._ann.ntotal == 1500 * 5 + 3
