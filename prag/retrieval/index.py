"""Top-K retrieval of past episodes, after P-RAG.

Score of stored episode n for a query (goal text, current scene-graph text):

    score_n = cos(Q_goal, K_goal,n) + max_t cos(Q_sg, K_sg,n,t)

Modes: "prag" (both terms), "goal" (goal term only: the paper's "w/o SG" ablation), "none".
All vectors are unit-normalised, so cosine is a dot product.

The index lives in memory as matrices and scores exactly with one matrix product per term
(benchmarks/retrieval.py gives the latency by store size). Exact search reads every scene
vector per query (3 GB at 100k episodes x 20 steps), so it is bound by memory bandwidth.

With `ann=True` (the default) it also keeps 4-bit product-quantisation codes (faiss fast scan) of every
step's concatenated [goal; scene] vector: since [g; s_t] . [q_g; q_s] = g.q_g + s_t.q_s, the
best step of an episode under this one inner product is its prag score, so the top steps name
the top episodes. The codes (96 bytes a step at 384-d) propose `ann_candidates` steps, which
are rescored exactly from the matrices; the answer is approximate only in which episodes make
the pool (recall@5 against exact search is in the benchmark), never in the scores it returns.
The codes are split into one shard per core, scanned and rescored in parallel.
Goal mode, small visible sets (under `ann_min_episodes`) and very selective visibility use
exact search, so the stores of ordinary runs are always searched exactly.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np

from prag.errors import PragError

if TYPE_CHECKING:
    from prag.retrieval.embed import EmbeddingCache
    from prag.store import Store

Mode = Literal["prag", "goal", "none"]
MODES: tuple[str, ...] = ("prag", "goal", "none")
_T = TypeVar("_T")


def check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise PragError(f"unknown retrieval mode {mode!r}: use one of {', '.join(MODES)}")
    return mode  # type: ignore[return-value]


@dataclass(frozen=True)
class Visibility:
    """Which stored episodes a query may see.

    With `run_id` set, a query made in round `before_round` of that run sees the run's
    episodes of earlier rounds only, plus every episode of `include_runs`. With `run_id`
    None, everything in the store is visible (`prag query`).
    """

    run_id: str | None = None
    before_round: int = 0
    include_runs: tuple[str, ...] = ()
    source: str = "agent"


@dataclass(frozen=True)
class Hit:
    """A retrieved episode (by id: the store holds the `EpisodeRecord`) and how well it matched."""

    episode_id: int
    score: float
    goal_score: float
    scene_score: float
    best_step: int | None  # t of the best-matching scene graph (prag mode)


class ExperienceIndex:
    """Goal vectors of episodes and scene vectors of their steps, held in memory."""

    def __init__(
        self,
        dim: int = 384,
        *,
        ann: bool = True,
        ann_min_episodes: int = 2_000,
        ann_candidates: int = 6_000,
        ann_shards: int | None = None,
    ) -> None:
        self.dim = dim
        self.ann = ann
        # Below ~2k visible episodes exact search takes a few ms and beats the candidate pass.
        self.ann_min_episodes = ann_min_episodes
        self.ann_candidates = ann_candidates
        self.ann_shards = ann_shards  # None: one per core, up to _StepCodes.MAX_SHARDS
        self.last_id = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.rounds = np.zeros(0, dtype=np.int32)
        self.run_codes = np.zeros(0, dtype=np.int32)
        self.source_codes = np.zeros(0, dtype=np.int32)
        self.goals = np.zeros((0, dim), dtype=np.float32)
        # Steps, grouped by episode in index order: episode e owns step_start[e]:step_start[e+1].
        self.step_start = np.zeros(1, dtype=np.int64)
        self.step_t = np.zeros(0, dtype=np.int32)
        self.step_vec = np.zeros(0, dtype=np.int64)  # row of `scenes` for each step
        self.scenes = np.zeros((0, dim), dtype=np.float32)  # unique scene vectors
        self._scene_row: dict[str, int] = {}
        self._codes: dict[str, int] = {}  # run ids and sources, as small integers
        self._names: list[str] = []
        self._ann: _StepCodes | None = None
        self._step_episode = np.zeros(0, dtype=np.int64)  # episode (index order) of each step

    # --- building -------------------------------------------------------------------------

    @classmethod
    def from_store(
        cls,
        store: "Store",
        cache: "EmbeddingCache",
        *,
        ann: bool = True,
        ann_min_episodes: int = 2_000,
        ann_candidates: int = 6_000,
        ann_shards: int | None = None,
    ) -> "ExperienceIndex":
        index = cls(ann=ann, ann_min_episodes=ann_min_episodes, ann_candidates=ann_candidates, ann_shards=ann_shards)
        index.refresh(store, cache)
        return index

    def refresh(self, store: "Store", cache: "EmbeddingCache") -> int:
        """Load the episodes added to the store since the last refresh; returns how many."""
        rows = store.index_rows(after_id=self.last_id)
        if not rows.episode_ids:
            return 0
        goal_vectors = cache.vectors_by_hash(rows.goal_hashes, store.texts)
        new_scenes = [h for h in dict.fromkeys(rows.step_scene_hashes) if h not in self._scene_row]
        new_scene_vectors = cache.vectors_by_hash(new_scenes, store.texts)
        if not len(self.ids):  # the first vectors fix the dimension (the model's)
            self.dim = goal_vectors.shape[1]
            self.goals = self.goals.reshape(0, self.dim)
            self.scenes = self.scenes.reshape(0, self.dim)
        first_new_scene = len(self._scene_row)
        self._scene_row.update((h, first_new_scene + i) for i, h in enumerate(new_scenes))

        first_new_episode = len(self.ids)
        episode_ids = np.asarray(rows.episode_ids, dtype=np.int64)
        self.ids = np.concatenate([self.ids, episode_ids])
        self.rounds = np.concatenate([self.rounds, np.asarray(rows.rounds, dtype=np.int32)])
        self.run_codes = np.concatenate([self.run_codes, self._codes_of(rows.run_ids)])
        self.source_codes = np.concatenate([self.source_codes, self._codes_of(rows.sources)])
        self.goals = np.concatenate([self.goals, goal_vectors])
        self.scenes = np.concatenate([self.scenes, new_scene_vectors])
        steps_per_episode = np.bincount(
            np.searchsorted(episode_ids, np.asarray(rows.step_episode_ids, dtype=np.int64)),
            minlength=len(episode_ids),
        )
        self.step_start = np.concatenate(
            [self.step_start, self.step_start[-1] + np.cumsum(steps_per_episode)]
        )
        self.step_t = np.concatenate([self.step_t, np.asarray(rows.step_t, dtype=np.int32)])
        self.step_vec = np.concatenate(
            [self.step_vec, np.fromiter((self._scene_row[h] for h in rows.step_scene_hashes), dtype=np.int64)]
        )
        self._step_episode = np.repeat(np.arange(len(self.ids)), np.diff(self.step_start))
        self.last_id = int(self.ids[-1])
        if self.ann:
            self._extend_ann(first_new_episode)
        return len(episode_ids)

    def _codes_of(self, names: list[str]) -> np.ndarray:
        for name in names:
            if name not in self._codes:
                self._codes[name] = len(self._names)
                self._names.append(name)
        return np.asarray([self._codes[name] for name in names], dtype=np.int32)

    def enable_ann(self) -> None:
        """Build the step codes now (e.g. once a loaded store turns out large); refreshes extend them."""
        self.ann = True
        if self._ann is None:
            self._extend_ann(0)

    def _extend_ann(self, first_new_episode: int) -> None:
        if self._ann is None:
            if len(self._step_episode) < _StepCodes.MIN_TRAINING_STEPS:
                return  # too few steps to learn codebooks from; queries stay exact until then
            self._ann = _StepCodes(2 * self.dim, self._step_vectors(self._sample_steps()), self.ann_shards)
            first_new_episode = 0
        first_step = int(self.step_start[first_new_episode])
        for lo in range(first_step, len(self._step_episode), 100_000):  # bounded copies
            self._ann.add(self._step_vectors(np.arange(lo, min(lo + 100_000, len(self._step_episode)))), lo)

    def _sample_steps(self) -> np.ndarray:
        n = len(self._step_episode)
        rng = np.random.default_rng(0)  # same data, same codebooks
        return np.sort(rng.choice(n, min(n, _StepCodes.TRAINING_STEPS), replace=False))

    def _step_vectors(self, steps: np.ndarray) -> np.ndarray:
        """[goal; scene] of the given steps, the vectors the step codes approximate."""
        return np.hstack([self.goals[self._step_episode[steps]], self.scenes[self.step_vec[steps]]])

    @property
    def size(self) -> int:
        return len(self.ids)

    # --- querying -------------------------------------------------------------------------

    def visible_mask(self, visibility: Visibility) -> np.ndarray:
        mask = self.source_codes == self._codes.get(visibility.source, -1)
        if visibility.run_id is None:
            return mask
        own = (self.run_codes == self._codes.get(visibility.run_id, -1)) & (
            self.rounds < visibility.before_round
        )
        included = np.isin(
            self.run_codes, [self._codes[r] for r in visibility.include_runs if r in self._codes]
        )
        return mask & (own | included)

    def query(
        self,
        goal_vector: np.ndarray,
        scene_vector: np.ndarray | None,
        *,
        k: int = 3,
        mode: Mode = "prag",
        visibility: Visibility = Visibility(),
        exact: bool = False,
    ) -> list[Hit]:
        if mode == "none" or k <= 0 or self.size == 0:
            return []
        if mode == "prag" and scene_vector is None:
            raise PragError("retrieval mode 'prag' needs a scene graph: give one, or use mode 'goal'")
        mask = self.visible_mask(visibility)
        candidates = np.flatnonzero(mask)
        if self._ann is not None and mode == "prag" and not exact and len(candidates) >= self.ann_min_episodes:
            assert scene_vector is not None
            found = self._query_ann(goal_vector, scene_vector, k, mask, len(candidates))
            if found is not None:
                return self._hits(*found, k, scene_vector)
        goal_scores, scene_scores = self._score(candidates, goal_vector, scene_vector if mode == "prag" else None)
        return self._hits(candidates, goal_scores, scene_scores, k, scene_vector if mode == "prag" else None)

    def _score(
        self, episodes: np.ndarray, goal_vector: np.ndarray, scene_vector: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact goal and best-scene similarities of the given episodes."""
        goal_scores = self.goals[episodes] @ goal_vector
        if scene_vector is None:
            return goal_scores, np.zeros_like(goal_scores)
        if len(episodes) == self.size:
            scene_sims = (self.scenes @ scene_vector)[self.step_vec]
            best = np.maximum.reduceat(scene_sims, self.step_start[:-1])
            return goal_scores, best
        if len(episodes) == 0:
            return goal_scores, goal_scores.copy()
        starts = self.step_start[episodes]
        lengths = self.step_start[episodes + 1] - starts
        offsets = np.cumsum(lengths) - lengths  # where each episode's steps begin in `steps`
        steps = np.repeat(starts - offsets, lengths) + np.arange(lengths.sum())
        scene_sims = self.scenes[self.step_vec[steps]] @ scene_vector
        return goal_scores, np.maximum.reduceat(scene_sims, offsets)

    def _query_ann(
        self, goal_vector: np.ndarray, scene_vector: np.ndarray, k: int, mask: np.ndarray, n_visible: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Episodes proposed by the step codes, scored exactly; None when exact search is cheaper."""
        assert self._ann is not None
        # Invisible steps are dropped after the search, so ask for more when few are visible.
        pool = int(self.ann_candidates * self.size / n_visible)
        if pool > len(self._step_episode) // 4:
            return None

        def rescore(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # on a shard's thread
            steps = steps[mask[self._step_episode[steps]]]
            episodes = self._step_episode[steps]
            sims = _dots(self.goals, goal_vector, episodes) + _dots(self.scenes, scene_vector, self.step_vec[steps])
            return _best_episodes(episodes, sims, 4 * k)

        # Each shard names its best few episodes by their best proposed step (an episode among the
        # first 4k overall is among the first 4k of the shard holding that step); those few get
        # their full exact score.
        parts = self._ann.search(np.concatenate([goal_vector, scene_vector]), pool, rescore)
        shortlist, _ = _best_episodes(
            np.concatenate([episodes for episodes, _ in parts]), np.concatenate([sims for _, sims in parts]), 4 * k
        )
        if len(shortlist) < k:
            return None
        goal_scores, scene_scores = self._score(shortlist, goal_vector, scene_vector)
        return shortlist, goal_scores, scene_scores

    def _hits(
        self,
        episodes: np.ndarray,
        goal_scores: np.ndarray,
        scene_scores: np.ndarray,
        k: int,
        scene_vector: np.ndarray | None,
    ) -> list[Hit]:
        scores = goal_scores + scene_scores
        # Deterministic ties: higher score first, then the older episode (smaller id).
        order = np.lexsort((self.ids[episodes], -np.round(scores, 6)))[:k]
        hits = []
        for i in order:
            e = int(episodes[i])
            best_step = None
            if scene_vector is not None:
                lo, hi = self.step_start[e], self.step_start[e + 1]
                sims = self.scenes[self.step_vec[lo:hi]] @ scene_vector
                best_step = int(self.step_t[lo + int(np.argmax(sims))])
            hits.append(
                Hit(
                    episode_id=int(self.ids[e]),
                    score=float(scores[i]),
                    goal_score=float(goal_scores[i]),
                    scene_score=float(scene_scores[i]),
                    best_step=best_step,
                )
            )
        return hits


class _StepCodes:
    """4-bit product-quantisation codes of [goal; scene] step vectors, searched by faiss fast scan.

    Four dimensions per 4-bit sub-quantiser: 96 bytes a step for 384-d vectors; on random
    vectors (the hard case) recall@5 0.96 with 6000 candidates at 100k episodes x 20 steps.
    Two dimensions (192 bytes) reached recall 1.0 with 1500 candidates but the longer scan
    made it ~3x slower; eight (48 bytes) needed 20000 candidates for 0.8. Fast scan's 8-bit
    lookup tables cost nothing measurable: ranked by float PQ distances instead, 99% of a
    3000-candidate pool is the same.

    A query scans every code and faiss parallelises fast scan over queries only, so the codes
    are split into one shard per core, step row r in shard r mod n, each scanned on its own
    thread (faiss releases the GIL), which also rescores its share of the candidates.
    """

    DIMS_PER_CODE = 4
    TRAINING_STEPS = 20_000  # faiss uses at most 256 points per centroid (16 here) anyway
    MIN_TRAINING_STEPS = 1_000
    MAX_SHARDS = 4

    def __init__(self, dim: int, training: np.ndarray, shards: int | None = None) -> None:
        import faiss

        codes = faiss.IndexPQFastScan(dim, dim // self.DIMS_PER_CODE, 4, faiss.METRIC_INNER_PRODUCT)
        with _one_thread():
            codes.train(np.ascontiguousarray(training, dtype=np.float32))
        n = shards or min(self.MAX_SHARDS, os.cpu_count() or 1)
        self.shards = [faiss.clone_index(codes) for _ in range(n)]
        self.code_size = int(codes.sa_code_size())
        # One OpenMP thread per worker: a single query gives a team nothing to share.
        self._workers = ThreadPoolExecutor(
            n, thread_name_prefix="prag-codes", initializer=faiss.omp_set_num_threads, initargs=(1,)
        )

    def add(self, vectors: np.ndarray, first_row: int) -> None:
        """Codes of step rows first_row, first_row + 1, ... (rows are added in order, once each)."""
        n = len(self.shards)
        with _one_thread():
            for s, shard in enumerate(self.shards):
                assert shard.ntotal == (first_row - s + n - 1) // n, "step rows must be added in order"
                shard.add(np.ascontiguousarray(vectors[(s - first_row) % n :: n], dtype=np.float32))

    def search(self, vector: np.ndarray, count: int, then: Callable[[np.ndarray], _T]) -> list[_T]:
        """`then(rows)` of each shard's share of the `count` steps with the highest inner product
        with `vector`, run on the shard's thread; results in shard order."""
        query = np.ascontiguousarray(vector[None, :], dtype=np.float32)
        n = len(self.shards)

        def scan(s: int) -> _T:
            _, local = self.shards[s].search(query, -(-count // n))
            return then(local[0][local[0] >= 0] * n + s)

        return list(self._workers.map(scan, range(n)))

    @property
    def ntotal(self) -> int:
        return sum(int(shard.ntotal) for shard in self.shards)

    @property
    def nbytes(self) -> int:
        return self.ntotal * self.code_size


def _best_episodes(episodes: np.ndarray, sims: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The `count` episodes whose best listed step has the highest sim, best first, with that sim
    (ties: the step listed first). `episodes[i]` is the episode of the step of `sims[i]`."""
    m = min(len(sims), 32 * count)  # the best few hundred steps nearly always name enough episodes
    while True:
        # The m best steps and any tied with the m-th, so that ties break as in a full sort.
        top = np.flatnonzero(sims >= -np.partition(-sims, m - 1)[m - 1]) if m else np.arange(0)
        top = top[np.lexsort((top, -sims[top]))]
        _, first = np.unique(episodes[top], return_index=True)  # an episode's first step is its best
        if len(first) >= count or m == len(sims):
            best = top[np.sort(first)[:count]]
            return episodes[best], sims[best]
        m = len(sims)  # a few long episodes of near-identical steps fill the top: rank them all


def _dots(matrix: np.ndarray, vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """matrix[rows] @ vector, reading the rows in place (numpy copies them out first: 2x slower).

    Call it on a thread whose OpenMP is set to one thread (faiss would start a team for one vector)."""
    import faiss

    assert matrix.dtype == np.float32 and matrix.flags.c_contiguous
    out = np.empty(len(rows), dtype=np.float32)
    vector = np.ascontiguousarray(vector, dtype=np.float32)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    faiss.fvec_inner_products_by_idx(  # type: ignore[attr-defined]  # missing from faiss's stubs
        faiss.swig_ptr(out), faiss.swig_ptr(vector), faiss.swig_ptr(matrix), faiss.swig_ptr(rows),
        matrix.shape[1], 1, len(rows),
    )
    return out


@contextmanager
def _one_thread() -> Iterator[None]:
    """Build codes on one OpenMP thread: on a busy 2-core machine faiss's spinning worker
    threads made training and encoding 3-4x slower (26 s against 7 s at 10k episodes)."""
    import faiss

    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(threads)
