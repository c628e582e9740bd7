"""Retrieval latency as the store grows, next to the naive per-row loop of the published P-RAG code.

Builds real stores (SQLite files) of N episodes with 20 scene-graph steps each, goal and scene
vectors random 384-d unit vectors, loads the in-memory index, and prints p50/p95 latency of a
top-5 query in prag mode (goal + scene graph): prag's exact search, the naive loop, and the
approximate path (prag's default from 2000 visible episodes: 4-bit PQ codes of [goal; scene] step vectors in
one shard per core, each scanned by faiss fast scan and its candidates rescored exactly on its
own thread) with its build time, code memory and recall@5 against exact search, for a few
candidate-pool sizes. Next to each wall-clock p50/p95 is the p50 CPU time of the process per
query (all threads): on a busy machine, wall time near CPU time means the shards found no free
core to run side by side. Exact search reads every scene vector,
so the benchmark also measures this machine's memory bandwidth and the scan time it implies,
a floor no exact kernel (float32, float16 or int8) can beat. Random vectors are the worst case
for any approximate index: no clusters. The 1-minute load average is printed, as the 2 cores
are shared.

Opening the store for retrieval is measured in a fresh process each time (peak resident memory
is a high-water mark per process): cold, with no index files beside the store (the index is
built from the store, codes included, and written), then warm, from those files; for each, the
time to open, and the peak resident memory after opening and after the first query (file pages
mapped and touched count).

    python benchmarks/retrieval.py                  # 1k, 10k, 100k episodes
    python benchmarks/retrieval.py --sizes 1000 10000 --ann-max 10000
    python benchmarks/retrieval.py --sizes 100000 --candidates 6000 --shards 1 2   # one thread vs two
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from prag.retrieval.embed import EmbeddingCache, Encoder, text_hash
from prag.retrieval.index import ExperienceIndex
from prag.retrieval.persist import index_folder
from prag.store import Store
from prag.store.records import EpisodeRecord, RunRecord, StepRecord

DIM, STEPS, K = 384, 20, 5
MODEL = "random-unit"


class StoredVectorsOnly(Encoder):
    """Every vector is in the store already; the benchmark never encodes text."""

    def encode(self, texts):  # type: ignore[no-untyped-def]
        raise AssertionError("benchmark vectors must all come from the store")


def units(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build_store(path: Path, n_episodes: int, rng: np.random.Generator) -> None:
    with Store(path) as store:
        store.add_run(RunRecord(id="bench", spec="random", llm="none", mode="prag", k=K, rounds=1))
        for start in range(0, n_episodes, 1000):
            batch = range(start, min(start + 1000, n_episodes))
            goals = units(rng, len(batch))
            scenes = units(rng, len(batch) * STEPS)
            vectors = {}
            records = []
            for i, n in enumerate(batch):
                record = EpisodeRecord(
                    run_id="bench", round=0, task_id=f"task-{n}", task_type="random",
                    goal=f"goal {n}", won=bool(n % 3 == 0),
                    steps=[StepRecord(t, None if t == 0 else f"act {t}", f"obs {n}.{t}", f"scene {n}.{t}") for t in range(STEPS)],
                )
                vectors[text_hash(record.goal)] = goals[i]
                for t, step in enumerate(record.steps):
                    vectors[text_hash(step.scene)] = scenes[i * STEPS + t]
                records.append(record)
            store.add_vectors(MODEL, vectors)
            for record in records:
                store.add_episode(record)


def naive_top_k(rows: list[tuple[int, np.ndarray, list[np.ndarray]]], q_goal: np.ndarray, q_scene: np.ndarray) -> list[int]:
    """As the published code does it: a Python loop over every stored episode and step."""
    scored = []
    for episode_id, goal, scenes in rows:
        best = max(float(np.dot(q_scene, s)) for s in scenes)
        scored.append((float(np.dot(q_goal, goal)) + best, episode_id))
    scored.sort(reverse=True)
    return [e for _, e in scored[:K]]


def percentiles(times: tuple[list[float], list[float]]) -> str:
    wall, cpu = (np.asarray(samples) * 1000 for samples in times)
    return (f"p50 {np.percentile(wall, 50):9.2f} ms   p95 {np.percentile(wall, 95):9.2f} ms"
            f"   (cpu p50 {np.percentile(cpu, 50):7.2f} ms)")


def timed(fn, queries) -> tuple[tuple[list[float], list[float]], list]:
    """Wall-clock and process CPU time (all threads) of each query, and the results."""
    wall, cpu, results = [], [], []
    for q in queries:
        start, start_cpu = time.perf_counter(), time.process_time()
        results.append(fn(q))
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return (wall, cpu), results


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def measure_open(path: Path) -> None:
    """In a fresh process: open the store's index, then answer one query; print the figures as JSON."""
    with Store(path, create=False) as store:
        start = time.perf_counter()
        index = ExperienceIndex.from_store(store, EmbeddingCache(store, StoredVectorsOnly(MODEL), read_only=True))
        opened, rss_open = time.perf_counter() - start, peak_rss_gb()
        rng = np.random.default_rng(1)
        start = time.perf_counter()
        index.query(units(rng, 1)[0], units(rng, 1)[0], k=K)
        queried = time.perf_counter() - start
    print(json.dumps({"open": opened, "rss_open": rss_open, "query": queried, "rss_query": peak_rss_gb()}))


def open_in_child(path: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--measure-open", str(path)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--naive-queries", type=int, default=5)
    parser.add_argument("--ann-max", type=int, default=100_000)
    parser.add_argument("--candidates", type=int, nargs="+", default=[1_500, 3_000, 6_000, 12_000],
                        help="candidate pools (steps) to measure; prag's default is 6000")
    parser.add_argument("--shards", type=int, nargs="+", default=[0],
                        help="code shards (threads) to measure, each opened anew; 0 is prag's default, one per core")
    parser.add_argument("--measure-open", type=Path, help=argparse.SUPPRESS)  # the child process of an open
    args = parser.parse_args()
    if args.measure_open:
        measure_open(args.measure_open)
        return
    rng = np.random.default_rng(0)
    print(f"top-{K} prag-mode query, {STEPS} scene-graph steps per episode, {DIM}-d vectors, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    opens = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.db"
            start = time.perf_counter()
            build_store(path, size, rng)
            built = time.perf_counter() - start
            cold, warm = open_in_child(path), open_in_child(path)
            files_mb = sum(f.stat().st_size for f in index_folder(path, MODEL).iterdir()) / 2**20
            opens.append((size, cold, warm, files_mb))
            with Store(path, create=False) as store:
                cache = EmbeddingCache(store, StoredVectorsOnly(MODEL), read_only=True)
                index = ExperienceIndex.from_store(store, cache, ann=False)  # the codes are opened below
                queries = list(zip(units(rng, args.queries), units(rng, args.queries)))
                exact_t, exact_r = timed(lambda q: [h.episode_id for h in index.query(*q, k=K, exact=True)], queries)
                start = time.perf_counter()
                index.scenes.sum()  # one pass over the scene matrix: what an exact query must read
                read = time.perf_counter() - start
                ann_lines = [f"  approximate             not built above --ann-max {args.ann_max} episodes"]
                if size <= args.ann_max:
                    ann_lines = []
                    for shards in args.shards:
                        start = time.perf_counter()
                        index = ExperienceIndex.from_store(store, cache, ann_shards=shards or None)
                        ann_opened = time.perf_counter() - start
                        assert index._ann is not None
                        n = len(index._ann.shards)
                        ann_lines.append(
                            f"  approximate (PQ codes in {n} shard{'s' * (n > 1)}, {n} thread{'s' * (n > 1)})  opened in "
                            f"{ann_opened:.1f} s, {index._ann.nbytes / 2**20:.0f} MB of codes"
                            + ("" if size >= index.ann_min_episodes else
                               f"; unused below {index.ann_min_episodes} visible episodes, so these are exact"))
                        for pool in args.candidates:
                            index.ann_candidates = pool
                            ann_t, ann_r = timed(lambda q: [h.episode_id for h in index.query(*q, k=K)], queries)
                            recall = np.mean([len(set(a) & set(b)) / K for a, b in zip(ann_r, exact_r)])
                            ann_lines.append(f"    {pool:6d} candidates    {percentiles(ann_t)}   recall@5 vs exact {recall:.3f}")
                rows = []
                for e in range(index.size):
                    lo, hi = index.step_start[e], index.step_start[e + 1]
                    rows.append((int(index.ids[e]), np.array(index.goals[e]), list(np.array(index.scenes[index.step_vec[lo:hi]]))))
                naive_t, naive_r = timed(lambda q: naive_top_k(rows, *q), queries[: args.naive_queries])
                assert naive_r == exact_r[: args.naive_queries], "naive loop and exact index disagree"
            db_mb = path.stat().st_size / 2**20
        gb = index.scenes.nbytes / 1e9
        print(f"\n{size:>7} episodes x {STEPS} steps  store {db_mb:7.0f} MB  built {built:6.1f} s  index files {files_mb:6.0f} MB"
              f"  load average {os.getloadavg()[0]:.1f}")
        print(f"  memory bandwidth        {gb / read:5.1f} GB/s (one core); a scan of the {gb:.2f} GB of float32 scene vectors "
              f"takes {read * 1000:.0f} ms, of int8 copies {read * 250:.0f} ms")
        print(f"  exact                   {percentiles(exact_t)}")
        print(f"  naive per-row loop      {percentiles(naive_t)}   ({len(naive_r)} queries)")
        print("\n".join(ann_lines))
    print("\nopening the store for retrieval, each in a fresh process (cold: no index files, built and written; warm: from them)")
    print(f"{'episodes':>9} | {'open':>5} | {'time':>8} | {'peak RSS open':>13} | {'first query':>11} | {'peak RSS query':>14}")
    for size, cold, warm, files_mb in opens:
        for name, m in (("cold", cold), ("warm", warm)):
            print(f"{size:>9} | {name:>5} | {m['open']:6.1f} s | {m['rss_open']:10.2f} GB | {m['query'] * 1000:8.1f} ms"
                  f" | {m['rss_query']:11.2f} GB")
    print(f"\npeak resident memory of this process {peak_rss_gb():.1f} GB")


if __name__ == "__main__":
    main()
