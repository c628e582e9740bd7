"""Top-K retrieval of past episodes, after P-RAG.

Score of stored episode n for a query (goal text, current scene-graph text):

    score_n = cos(Q_goal, K_goal,n) + max_t cos(Q_sg, K_sg,n,t)

Modes: "prag" (both terms), "goal" (goal term only: the paper's "w/o SG" ablation), "none".
All vectors are unit-normalised, so cosine is a dot product.

The index holds matrices and scores exactly with one matrix product per term
(benchmarks/retrieval.py gives the latency by store size). Exact search reads every scene
vector per query (3 GB at 100k episodes x 20 steps), so it is bound by memory bandwidth.
Over a store file the matrices are files beside it (`prag.retrieval.persist`), appended as
episodes land and mapped when opened, so a big store opens in seconds instead of being read
vector by vector from SQLite (73 s and 9.6 GB at 100k episodes).

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

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar, cast

import numpy as np

from prag.errors import PragError
from prag.retrieval.persist import IndexFiles, Unusable, index_folder, lockable, locked
from prag.store.visibility import Visibility

if TYPE_CHECKING:
    from prag.retrieval.embed import EmbeddingCache
    from prag.store import Store
    from prag.store.database import IndexRows

Mode = Literal["prag", "goal", "none"]
MODES: tuple[str, ...] = ("prag", "goal", "none")
_T = TypeVar("_T")
_log = logging.getLogger(__name__)
_CHUNK_EPISODES = 5_000  # episodes read from the store at a time (100k steps at 20 a episode)
# The index's columns, empty: per episode, per step, per unique scene, and the PQ codebook (bytes).
_EMPTY = {
    "ids": np.int64, "rounds": np.int32, "run_codes": np.int32, "source_codes": np.int32, "step_counts": np.int64,
    "goals": np.float32, "step_t": np.int32, "step_vec": np.int64, "codes": np.uint8,
    "scenes": np.float32, "scene_keys": np.uint8, "codebook": np.uint8,
}
# Attributes computed from the columns, never pickled.
_DERIVED = {"ids", "rounds", "run_codes", "source_codes", "goals", "step_start", "step_t", "step_vec", "scenes",
            "_step_episode", "_codes", "_scene_rows", "_ann"}


def check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise PragError(f"unknown retrieval mode {mode!r}: use one of {', '.join(MODES)}")
    return mode  # type: ignore[return-value]


@dataclass(frozen=True)
class Hit:
    """A retrieved episode (by id: the store holds the `EpisodeRecord`) and how well it matched."""

    episode_id: int
    score: float
    goal_score: float
    scene_score: float
    best_step: int | None  # t of the best-matching scene graph (prag mode)


class ExperienceIndex:
    """Goal vectors of episodes and scene vectors of their steps, as matrices.

    Over a store file, the matrices live in files beside it (`prag.retrieval.persist`), a cache of
    the store's rows that `refresh` appends to as episodes land and checks against the store each
    time: a big store opens in seconds, mapped rather than read. Over an in-memory store, or with
    `persist=False`, they are held in memory.

    Pickling it is cheap, for shipping a round's snapshot to workers: an index over files pickles
    as their paths and its row counts (whoever unpickles it maps the same rows, on a machine that
    sees the store's folder), an index in memory as its arrays (`in_memory()` makes one).
    """

    def __init__(
        self,
        dim: int = 384,
        *,
        ann: bool = True,
        ann_min_episodes: int = 2_000,
        ann_candidates: int = 6_000,
        ann_shards: int | None = None,
        persist: bool = True,
    ) -> None:
        self.ann = ann
        # Below ~2k visible episodes exact search takes a few ms and beats the candidate pass.
        self.ann_min_episodes = ann_min_episodes
        self.ann_candidates = ann_candidates
        self.ann_shards = ann_shards  # None: one per core, up to _StepCodes.MAX_SHARDS
        self.persist = persist
        self.rebuilt: str | None = None  # why the last refresh rebuilt the index's files, if it did
        self._reset(dim)

    def _reset(self, dim: int, files: IndexFiles | None = None) -> None:
        self.dim = dim
        self.model: str | None = None  # the encoder whose vectors these are
        self.last_id = 0
        self.digest = 0  # the store's `index_digest` of the episodes held: changes when one goes
        self._names: list[str] = []  # run ids and sources, coded as small integers
        self._files = files
        self._committed: dict[str, int] = {}  # the rows of each file that its meta counts
        self._columns: dict[str, np.ndarray] = {name: np.zeros(0, dtype=dtype) for name, dtype in _EMPTY.items()}
        self._scene_rows: _SceneRows | None = None
        self._ann: _StepCodes | None = None
        self._derive()

    def _derive(self) -> None:
        """The attributes queries read, from the columns."""
        c = self._columns
        self.ids, self.rounds, self.run_codes, self.source_codes = c["ids"], c["rounds"], c["run_codes"], c["source_codes"]
        self.goals = c["goals"].reshape(-1, self.dim)
        # Steps, grouped by episode in index order: episode e owns step_start[e]:step_start[e+1].
        self.step_start = np.concatenate([[0], np.cumsum(c["step_counts"])]).astype(np.int64)
        self.step_t = c["step_t"]
        self.step_vec = c["step_vec"]  # row of `scenes` for each step
        self.scenes = c["scenes"].reshape(-1, self.dim)  # unique scene vectors
        self._step_episode = np.repeat(np.arange(len(self.ids)), c["step_counts"])  # episode of each step
        self._codes = {name: i for i, name in enumerate(self._names)}

    # --- building -------------------------------------------------------------------------

    @classmethod
    def from_store(
        cls,
        store: Store,
        cache: EmbeddingCache,
        *,
        ann: bool = True,
        ann_min_episodes: int = 2_000,
        ann_candidates: int = 6_000,
        ann_shards: int | None = None,
        persist: bool = True,
    ) -> ExperienceIndex:
        index = cls(ann=ann, ann_min_episodes=ann_min_episodes, ann_candidates=ann_candidates,
                    ann_shards=ann_shards, persist=persist)
        index.refresh(store, cache)
        return index

    def refresh(self, store: Store, cache: EmbeddingCache) -> int:
        """Bring the index up to the store: take the episodes added since, from the index's files
        when another process appended them already, else from the store (appending them to the
        files); start again from the store when episodes it holds were deleted or replaced, or its
        files cannot be trusted. Returns how many episodes are new to the index."""
        self.rebuilt = None
        folder = self._folder(store, cache.encoder.name)
        with locked(folder) if folder is not None else nullcontext():
            held = self.size
            before = held if self._sync(store, cache.encoder.name, folder) else 0
            self.model = cache.encoder.name
            while True:  # in chunks: a big store is built without holding all of it in memory at once
                rows = store.index_rows(after_id=self.last_id, limit=_CHUNK_EPISODES)
                if not rows.episode_ids:
                    break
                self._add(rows, store, cache)
            if self.ann:
                self._extend_ann()
            if self._files is not None and (self._files.rows() != self._committed or not self._files.header):
                self._files.commit(self._header())
                self._committed = self._files.rows()
        return self.size - before

    def _folder(self, store: Store, model: str) -> Path | None:
        """The folder of the index's files, or None to keep the index in memory (an in-memory store,
        or a store whose folder cannot be written: a read-only directory or file system, where the
        folder may exist from before, but its lock cannot be taken)."""
        if not self.persist or str(store.path) == ":memory:":
            return None
        folder = index_folder(store.path, model)
        try:
            lockable(folder)
        except OSError as exc:
            _log.warning("the retrieval index of %s is kept in memory: its files in %s cannot be written (%s)", store.path, folder, exc)
            return None
        return folder

    def _sync(self, store: Store, model: str, folder: Path | None) -> bool:
        """Match the index to what may be trusted: the files (when they hold the store's episodes),
        or else nothing. Returns whether the episodes held before are still held."""
        if folder is None:
            if self.size and (self.model != model or store.index_digest(self.last_id) != self.digest):
                self._reset(self.dim)
                return False
            return True
        try:
            files = IndexFiles.load(folder)
            reason = self._mismatch(files.header, store, model)
        except Unusable as exc:
            files, reason = None, str(exc)
        if files is None or reason is not None:
            if files is not None or reason != "there are none":
                self.rebuilt = f"{folder}: {reason}"
                _log.warning("the retrieval index files in %s are not used (%s): rebuilding them from the store", folder, reason)
            self._reset(self.dim, IndexFiles.create(folder))
            return False
        mine = self._files.rows() if self._files is not None else {}
        kept = (
            self._files is not None and self._files.generation == files.generation
            and all(files.columns[name].rows >= rows for name, rows in mine.items() if name in files.columns)
        )
        if not kept or mine != files.rows():
            self._adopt(files, kept)
        self._committed = files.rows()
        return kept

    def _mismatch(self, header: dict, store: Store, model: str) -> str | None:
        """Why files with this header do not hold the store's episodes by `model` (None: they do)."""
        try:
            if header["model"] != model:
                return f"vectors of {header['model']}, not {model}"
            if int(header["digest"], 16) != store.index_digest(int(header["last_id"])):
                return "episodes were deleted or replaced in the store since, or they are another store's"
        except (KeyError, TypeError, ValueError) as exc:
            return f"meta.json lacks {exc}"
        return None

    def _adopt(self, files: IndexFiles, extend: bool) -> None:
        """Map the files' committed rows; `extend`: they begin with the rows held now (one generation)."""
        header = files.header
        lookup, codes = self._scene_rows, self._ann
        self._reset(int(header["dim"]), files)
        self.model, self.last_id, self.digest = header["model"], int(header["last_id"]), int(header["digest"], 16)
        self._names = list(header["names"])
        self._columns.update(files.arrays())
        self._derive()
        if extend:  # what was built over the rows held stays valid for them
            self._scene_rows, self._ann = lookup, codes

    def _header(self) -> dict:
        return {"model": self.model, "dim": self.dim, "last_id": self.last_id,
                "digest": f"{self.digest:032x}", "names": self._names}

    def _append(self, rows: dict[str, np.ndarray]) -> None:
        if self._files is not None:
            self._files.append(rows)
            self._columns.update(self._files.arrays())
        else:
            for name, values in rows.items():
                held = self._columns[name]
                self._columns[name] = values if not len(held) else np.concatenate([held, values])
        self._derive()

    def _add(self, rows: IndexRows, store: Store, cache: EmbeddingCache) -> None:
        """Append the rows of episodes new to the index, with their vectors."""
        goal_vectors = cache.vectors_by_hash(rows.goal_hashes, store.texts)
        if not self.size:  # the first vectors fix the dimension (the model's)
            self.dim = goal_vectors.shape[1]
        held = self._columns["scene_keys"].reshape(-1, 32)
        if self._scene_rows is None:
            self._scene_rows = _SceneRows()
        self._scene_rows.add(held[self._scene_rows.size :])  # rows another process appended, or all
        hashes = list(dict.fromkeys(rows.step_scene_hashes))
        found = self._scene_rows.find(_keys(hashes), held)
        new = [h for h, row in zip(hashes, found) if row < 0]
        row_of = {h: int(row) for h, row in zip(hashes, found) if row >= 0}
        first_new_scene = len(self.scenes)
        row_of.update((h, first_new_scene + i) for i, h in enumerate(new))
        new_keys = _keys(new)

        episode_ids = np.asarray(rows.episode_ids, dtype=np.int64)
        step_counts = np.bincount(
            np.searchsorted(episode_ids, np.asarray(rows.step_episode_ids, dtype=np.int64)), minlength=len(episode_ids)
        )
        last_id = int(episode_ids[-1])
        self.digest = (self.digest + store.index_digest(last_id, after_id=self.last_id)) % 2**128
        self.last_id = last_id
        self._append({
            "ids": episode_ids,
            "rounds": np.asarray(rows.rounds, dtype=np.int32),
            "run_codes": self._codes_of(rows.run_ids),
            "source_codes": self._codes_of(rows.sources),
            "step_counts": step_counts.astype(np.int64),
            "goals": np.ascontiguousarray(goal_vectors, dtype=np.float32),
            "step_t": np.asarray(rows.step_t, dtype=np.int32),
            "step_vec": np.fromiter((row_of[h] for h in rows.step_scene_hashes), dtype=np.int64,
                                    count=len(rows.step_scene_hashes)),
            "scenes": np.ascontiguousarray(cache.vectors_by_hash(new, store.texts), dtype=np.float32).reshape(-1, self.dim),
            "scene_keys": new_keys,
        })
        self._scene_rows.add(new_keys)

    def _codes_of(self, names: list[str]) -> np.ndarray:
        for name in names:
            if name not in self._codes:
                self._codes[name] = len(self._names)
                self._names.append(name)
        return np.asarray([self._codes[name] for name in names], dtype=np.int32)

    def _extend_ann(self) -> None:
        """Codes for every step (learning the codebooks first, once there are steps enough), kept
        as a column; then the searchable shards over them."""
        steps = len(self._step_episode)
        if not len(self._columns["codebook"]):
            if steps < _StepCodes.MIN_TRAINING_STEPS:
                return  # too few steps to learn codebooks from; queries stay exact until then
            self._append({"codebook": _StepCodes.train(self._step_vectors(self._sample_steps()))})
        if self._ann is None:
            self._ann = _StepCodes(self._columns["codebook"], self.ann_shards)
        for lo in range(len(self._columns["codes"]), steps, 100_000):  # bounded copies
            self._append({"codes": self._ann.encode(self._step_vectors(np.arange(lo, min(lo + 100_000, steps))))})
        self._ann.add(self._columns["codes"][self._ann.ntotal :], self._ann.ntotal)

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

    # --- shipping -------------------------------------------------------------------------

    def __getstate__(self) -> dict:
        state = {key: value for key, value in self.__dict__.items() if key not in _DERIVED}
        if self._files is not None:  # the files' paths and row counts say where the columns are
            del state["_columns"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if self._files is not None:
            self._columns = {name: np.zeros(0, dtype=dtype) for name, dtype in _EMPTY.items()} | self._files.arrays()
        self._scene_rows, self._ann = None, None
        self._derive()
        if self.ann and len(self._columns["codebook"]) and len(self._columns["codes"]) == len(self.step_t):
            self._ann = _StepCodes(self._columns["codebook"], self.ann_shards)
            self._ann.add(self._columns["codes"], 0)

    def in_memory(self) -> ExperienceIndex:
        """A copy with every array in memory and no files: to ship to machines that do not see the
        store's folder (it pickles as its arrays: 3.4 GB at 100k episodes x 20 steps)."""
        state = self.__getstate__()
        state["_columns"] = {name: np.array(values) for name, values in self._columns.items()}
        state["_files"] = None
        copy = ExperienceIndex.__new__(ExperienceIndex)
        copy.__setstate__(state)
        return copy

    # --- querying -------------------------------------------------------------------------

    def visible_mask(self, visibility: Visibility) -> np.ndarray:
        """Which episodes of the index `visibility` sees (the rule applied to the index's columns)."""
        first_hidden = np.array([visibility.first_hidden_round(name) for name in self._names], dtype=np.float64)
        return (self.source_codes == self._codes.get(visibility.source, -1)) & (self.rounds < first_hidden[self.run_codes])

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

    def __init__(self, codebook: np.ndarray, shards: int | None = None) -> None:
        """Empty shards over a trained codebook (`train`'s bytes)."""
        import faiss

        # `train` serialises an IndexPQFastScan; faiss's stub types the read-back as a plain Index.
        self.trained = cast("faiss.IndexPQFastScan", faiss.deserialize_index(np.ascontiguousarray(codebook, dtype=np.uint8)))
        n = shards or min(self.MAX_SHARDS, os.cpu_count() or 1)
        self.shards = [faiss.clone_index(self.trained) for _ in range(n)]
        self.code_size = int(self.trained.sa_code_size())
        # One OpenMP thread per worker: a single query gives a team nothing to share.
        self._workers = ThreadPoolExecutor(
            n, thread_name_prefix="prag-codes", initializer=faiss.omp_set_num_threads, initargs=(1,)
        )

    @classmethod
    def train(cls, training: np.ndarray) -> np.ndarray:
        """Codebooks learnt from these vectors, as bytes (kept beside the codes they decode)."""
        import faiss

        dim = training.shape[1]
        codes = faiss.IndexPQFastScan(dim, dim // cls.DIMS_PER_CODE, 4, faiss.METRIC_INNER_PRODUCT)
        with _one_thread():
            codes.train(np.ascontiguousarray(training, dtype=np.float32))
        return np.asarray(faiss.serialize_index(codes), dtype=np.uint8)

    def encode(self, vectors: np.ndarray) -> np.ndarray:
        """The codes of these vectors, one row of `code_size` bytes each."""
        with _one_thread():
            return self.trained.sa_encode(np.ascontiguousarray(vectors, dtype=np.float32))

    def add(self, codes: np.ndarray, first_row: int) -> None:
        """Make step rows first_row, first_row + 1, ... searchable by their codes (rows are added in
        order, once each)."""
        import faiss

        n = len(self.shards)

        def pack(s: int) -> None:  # on the shard's thread: the shards are packed side by side
            shard = self.shards[s]
            assert shard.ntotal == (first_row - s + n - 1) // n, "step rows must be added in order"
            mine = np.ascontiguousarray(codes[(s - first_row) % n :: n])
            if not len(mine):
                return
            # Fast scan packs codes in blocks and cannot take them as they are: a flat PQ index
            # takes them and converts. Merging into an empty shard repacks (3.5 s a million rows
            # against 0.5 s to convert), so an empty shard is replaced instead.
            flat = faiss.IndexPQ(self.trained.d, self.trained.pq.M, 4, faiss.METRIC_INNER_PRODUCT)
            flat.pq = self.trained.pq
            flat.is_trained = True
            flat.add_sa_codes(mine)
            packed = faiss.IndexPQFastScan(flat)  # type: ignore[arg-type]  # IndexPQFastScan(const IndexPQ&): not in faiss's stub
            if shard.ntotal:
                shard.merge_from(packed)
            else:
                self.shards[s] = packed

        list(self._workers.map(pack, range(n)))

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


class _SceneRows:
    """The row of each scene vector by the sha256 of its text (32 bytes): rows 0 to n-1 as sorted
    64-bit prefixes, the rows added since in a dict (a dict of every hash as a string took 1 s and
    300 MB to build at 2M scenes)."""

    def __init__(self) -> None:
        self._prefixes = np.zeros(0, dtype=np.uint64)
        self._rows = np.zeros(0, dtype=np.int64)  # the sorted rows are rows 0 .. len(_rows) - 1
        self._recent: dict[bytes, int] = {}  # and the rows after them
        self.size = 0

    def find(self, keys: np.ndarray, held: np.ndarray) -> np.ndarray:
        """The row of each key (-1: none); `held` is the key of every row."""
        found = np.full(len(keys), -1, dtype=np.int64)
        prefixes = _prefixes(keys)
        lo = np.searchsorted(self._prefixes, prefixes, "left")
        hi = np.searchsorted(self._prefixes, prefixes, "right")
        for i in range(len(keys)):
            key = keys[i].tobytes()
            if key in self._recent:
                found[i] = self._recent[key]
                continue
            for row in self._rows[lo[i] : hi[i]]:  # nearly always one: 64-bit prefixes of sha256
                if held[row].tobytes() == key:
                    found[i] = row
        return found

    def add(self, keys: np.ndarray) -> None:
        """The keys of the next rows."""
        first_row, self.size = self.size, self.size + len(keys)
        if len(self._recent) + len(keys) <= max(50_000, len(self._rows) // 4):
            self._recent.update((key.tobytes(), first_row + i) for i, key in enumerate(keys))
            return
        in_order: list[bytes] = sorted(self._recent, key=self._recent.__getitem__)  # sorting again is O(n log n)
        recent = b"".join(in_order)
        unsorted = np.concatenate([np.frombuffer(recent, dtype=np.uint8).reshape(-1, 32), keys])
        prefixes = np.concatenate([self._prefixes, _prefixes(unsorted)])
        rows = np.concatenate([self._rows, np.arange(len(self._rows), self.size, dtype=np.int64)])
        order = np.argsort(prefixes, kind="stable")
        self._prefixes, self._rows, self._recent = prefixes[order], rows[order], {}


def _keys(hashes: Sequence[str]) -> np.ndarray:
    """Text hashes (sha256 hex) as rows of 32 bytes."""
    return np.frombuffer(b"".join(bytes.fromhex(h) for h in hashes), dtype=np.uint8).reshape(-1, 32)


def _prefixes(keys: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(keys[:, :8]).view(np.uint64).ravel() if len(keys) else np.zeros(0, dtype=np.uint64)
