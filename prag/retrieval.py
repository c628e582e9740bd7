"""Top-K retrieval of past episodes, after P-RAG.

Score of stored episode n for a query (goal text, current scene-graph text):

    score_n = cos(Q_goal, K_goal,n) + max_t cos(Q_sg, K_sg,n,t)

Modes: "prag" (both terms), "goal" (goal term only: the paper's "w/o SG" ablation), "none".
All vectors are unit-normalised, so cosine is a dot product.

The index lives in memory as matrices and scores exactly with one matrix product per term
(benchmarks/retrieval.py gives the latency by store size). With `ann=True` it also keeps
approximate nearest-neighbour indexes (usearch HNSW) that propose candidates, which are then
scored exactly; a test in the style of Fagin's threshold algorithm (no episode outside the
pool can beat the K-th candidate) decides when the pool is large enough, else exact search
runs. The ANN option pays off on clustered real embeddings; on random vectors its recall is
poor (see the benchmark), which is why exact search is the default.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from prag.errors import PragError

if TYPE_CHECKING:
    from prag.embed import EmbeddingCache
    from prag.store import Store

Mode = Literal["prag", "goal", "none"]
MODES: tuple[str, ...] = ("prag", "goal", "none")


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
    episode_id: int
    run_id: str
    round: int
    task_id: str
    task_type: str
    goal: str
    won: bool
    score: float
    goal_score: float
    scene_score: float
    best_step: int | None  # t of the best-matching scene graph (prag mode)


class ExperienceIndex:
    """Goal vectors of episodes and scene vectors of their steps, held in memory."""

    def __init__(self, dim: int = 384, *, ann: bool = False) -> None:
        self.dim = dim
        self.ann = ann
        self.last_id = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.rounds = np.zeros(0, dtype=np.int32)
        self.run_codes = np.zeros(0, dtype=np.int32)
        self.source_codes = np.zeros(0, dtype=np.int32)
        self.goals = np.zeros((0, dim), dtype=np.float32)
        self.meta: list[tuple[str, str, str, bool]] = []  # task_id, task_type, goal, won
        # Steps, grouped by episode in index order: episode e owns step_start[e]:step_start[e+1].
        self.step_start = np.zeros(1, dtype=np.int64)
        self.step_t = np.zeros(0, dtype=np.int32)
        self.step_vec = np.zeros(0, dtype=np.int64)  # row of `scenes` for each step
        self.scenes = np.zeros((0, dim), dtype=np.float32)  # unique scene vectors
        self._scene_row: dict[str, int] = {}
        self._codes: dict[str, int] = {}  # run ids and sources, as small integers
        self._names: list[str] = []
        self._ann: _AnnIndexes | None = None

    # --- building -------------------------------------------------------------------------

    @classmethod
    def from_store(cls, store: "Store", cache: "EmbeddingCache", *, ann: bool = False) -> "ExperienceIndex":
        index = cls(ann=ann)
        index.refresh(store, cache)
        return index

    def refresh(self, store: "Store", cache: "EmbeddingCache") -> int:
        """Load the episodes added to the store since the last refresh; returns how many."""
        rows = store.index_rows(after_id=self.last_id)
        if not rows.episode_ids:
            return 0
        goals_by_hash = dict(zip(rows.goal_hashes, rows.goals))
        goal_vectors = cache.vectors_by_hash(
            rows.goal_hashes, lambda missing: {h: goals_by_hash[h] for h in missing}
        )
        new_scenes = [h for h in dict.fromkeys(rows.step_scene_hashes) if h not in self._scene_row]
        new_scene_vectors = cache.vectors_by_hash(new_scenes, store.scene_texts)
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
        self.meta.extend(zip(rows.task_ids, rows.task_types, rows.goals, rows.won))
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
        self.last_id = int(self.ids[-1])
        if self.ann:
            self._extend_ann(first_new_episode, first_new_scene)
        return len(episode_ids)

    def _codes_of(self, names: list[str]) -> np.ndarray:
        for name in names:
            if name not in self._codes:
                self._codes[name] = len(self._names)
                self._names.append(name)
        return np.asarray([self._codes[name] for name in names], dtype=np.int32)

    def _extend_ann(self, first_new_episode: int, first_new_scene: int) -> None:
        if self._ann is None:
            self._ann = _AnnIndexes(self.dim)
            first_new_episode = first_new_scene = 0
        self._ann.add(self.goals[first_new_episode:], first_new_episode, self.scenes[first_new_scene:], first_new_scene)
        # Which episodes contain each unique scene vector (CSR), to map scene hits to episodes.
        order = np.argsort(self.step_vec, kind="stable")
        self._scene_owner_start = np.searchsorted(self.step_vec[order], np.arange(len(self.scenes) + 1))
        step_episode = np.repeat(np.arange(len(self.ids)), np.diff(self.step_start))
        self._scene_owner = step_episode[order]

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
        if self._ann is not None and not exact:
            found = self._query_ann(goal_vector, scene_vector if mode == "prag" else None, k, mask)
            if found is not None:
                return self._hits(*found, scene_vector if mode == "prag" else None)
        candidates = np.flatnonzero(mask)
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
        self, goal_vector: np.ndarray, scene_vector: np.ndarray | None, k: int, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
        """Candidates from the ANN indexes, scored exactly; None when exact search is needed."""
        assert self._ann is not None
        pool = max(64, 16 * k)
        while pool < self.size // 4:
            goal_hits, goal_floor = self._ann.goals_near(goal_vector, pool)
            candidates = [goal_hits]
            floor = goal_floor
            if scene_vector is not None:
                scene_hits, scene_floor = self._ann.scenes_near(scene_vector, pool)
                for row in scene_hits:
                    candidates.append(self._scene_owner[self._scene_owner_start[row] : self._scene_owner_start[row + 1]])
                floor += scene_floor
            pool_episodes = np.unique(np.concatenate(candidates))
            pool_episodes = pool_episodes[mask[pool_episodes]]
            if len(pool_episodes) >= k:
                goal_scores, scene_scores = self._score(pool_episodes, goal_vector, scene_vector)
                kth = np.sort(goal_scores + scene_scores)[-k]
                # An episode outside the pool is below both floors, so it scores under `floor`.
                if kth >= floor:
                    return pool_episodes, goal_scores, scene_scores, k
            pool *= 4
        return None

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
            task_id, task_type, goal, won = self.meta[e]
            best_step = None
            if scene_vector is not None:
                lo, hi = self.step_start[e], self.step_start[e + 1]
                sims = self.scenes[self.step_vec[lo:hi]] @ scene_vector
                best_step = int(self.step_t[lo + int(np.argmax(sims))])
            hits.append(
                Hit(
                    episode_id=int(self.ids[e]),
                    run_id=self._names[int(self.run_codes[e])],
                    round=int(self.rounds[e]),
                    task_id=task_id,
                    task_type=task_type,
                    goal=goal,
                    won=won,
                    score=float(scores[i]),
                    goal_score=float(goal_scores[i]),
                    scene_score=float(scene_scores[i]),
                    best_step=best_step,
                )
            )
        return hits


class _AnnIndexes:
    """HNSW indexes (usearch) over goal vectors and unique scene vectors."""

    def __init__(self, dim: int = 384) -> None:
        from usearch.index import Index

        # i8 halves build time against f16 at the same recall; candidates are rescored exactly.
        self.goals = Index(ndim=dim, metric="ip", dtype="i8", connectivity=16, expansion_add=128, expansion_search=256)
        self.scenes = Index(ndim=dim, metric="ip", dtype="i8", connectivity=16, expansion_add=128, expansion_search=256)

    def add(self, goals: np.ndarray, goal_base: int, scenes: np.ndarray, scene_base: int) -> None:
        if len(goals):
            self.goals.add(np.arange(goal_base, goal_base + len(goals)), goals)
        if len(scenes):
            self.scenes.add(np.arange(scene_base, scene_base + len(scenes)), scenes)

    @staticmethod
    def _near(index: object, vector: np.ndarray, count: int) -> tuple[np.ndarray, float]:
        matches = index.search(vector, count)  # type: ignore[attr-defined]
        keys = np.asarray(matches.keys, dtype=np.int64)
        # usearch's "ip" distance is 1 - dot product.
        floor = 1.0 - float(np.max(matches.distances)) if len(keys) else -1.0
        return keys, floor

    def goals_near(self, vector: np.ndarray, count: int) -> tuple[np.ndarray, float]:
        return self._near(self.goals, vector, count)

    def scenes_near(self, vector: np.ndarray, count: int) -> tuple[np.ndarray, float]:
        return self._near(self.scenes, vector, count)
