"""Episodes per hour against the number of workers, Ray actors and threads, with an LLM stand-in
that answers after a fixed delay (`SleepingLLM`): what the executors add to a round, the model
aside.

    python benchmarks/ray_scaling.py [--workers 1 2 4 8] [--delay 1.0] [--steps 3] [--waves 2]
    python benchmarks/ray_scaling.py --ship 1000 10000    # what a round's snapshot costs instead

Each setting plays a grid round of `waves * workers` tasks (`steps` actions each, the stand-in
taking the first admissible action, so every episode asks `steps` times) after a warm-up round that
starts the workers, into a fresh store; the measured round is the second. Retrieval and
corrections are off: the executors are measured, not MiniLM. Ray runs on a local cluster with
one logical CPU per worker (the stand-in sleeps, so 8 workers fit on 2 cores).

Printed per setting: the round's wall time, episodes per hour, the speed-up over one worker of
the same executor, the overhead per episode (wall * workers / episodes minus the stand-in's own
seconds per episode, its calls * delay) and the time the driver took to build and put the
round's snapshot.

With `--ship N…`, for stores of N episodes x 20 steps (random vectors, built as
benchmarks/retrieval.py builds them): the time to put the round's index into the object store,
as its files' paths (one machine) and as its arrays (across machines), and to read the records
of N visible episodes from the store and put them (pickled one by one, as the runner ships them);
their pickled sizes; and the time a worker takes to resolve each (once per round for the index,
once per run for the records).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prag.llm import Completion, Cost, Message
from prag.retrieval.embed import EmbeddingCache
from prag.retrieval.index import ExperienceIndex, Visibility
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.ray_executor import packed_records
from prag.run.runner import Runner, start_run
from prag.store import Store

SPEC = """name = "ray-bench"
env = "grid"
max_steps = {steps}
[params]
tasks = ["throw_away_trash", "collect_toys"]
per_task = {per_task}
seed = 0
"""


@dataclass(frozen=True)
class SleepingLLM:
    """A stand-in LLM that sleeps `delay` seconds per call (as a model served elsewhere keeps its
    caller waiting, not computing), then answers the first admissible action the prompt lists."""

    delay: float
    name: str = "sleeping"
    supports_choices: bool = False

    def complete(self, messages: list[Message], *, max_tokens: int = 64, stop: list[str] | None = None,
                 choices: list[str] | None = None, more_lines: int = 0, temperature: float = 0.0,
                 seed: int = 0, grammar: str | None = None) -> Completion:
        time.sleep(self.delay)
        listed = messages[-1]["content"].split("Admissible actions: ")[1].split("\n")[0]
        verb, _, rests = listed.split("; ")[0].partition(": ")  # folded as `verb: a, b; verb2: ...`
        return Completion(f"{verb} {rests.split(', ')[0]}" if rests else verb, Cost(calls=1, seconds=self.delay))


@dataclass
class Round:
    """The measured round of one setting."""

    executor: str
    workers: int
    episodes: int
    seconds: float
    llm_seconds: float  # the stand-in's own seconds per episode
    snapshot_seconds: float = 0.0

    @property
    def per_hour(self) -> float:
        return self.episodes * 3600 / self.seconds

    @property
    def overhead(self) -> float:
        return self.seconds * self.workers / self.episodes - self.llm_seconds


def measure(folder: Path, executor: str, workers: int, args: argparse.Namespace) -> Round:
    spec = folder / f"{executor}-{workers}.toml"
    spec.write_text(SPEC.format(steps=args.steps, per_task=max(1, args.waves * workers // 2)))
    config = RunConfig(
        ExperimentConfig(spec=str(spec), rounds=2, llm="sleeping"),
        RetrievalConfig(mode="none", k=0, corrections=False),
        execution=ExecutionConfig(workers=workers, executor=executor, answer_cache=False),
    )
    events: list[tuple[float, str, dict]] = []
    with Store(folder / f"{executor}-{workers}.db") as store:
        run = start_run(store, config, f"{executor}-{workers}")
        Runner(store, run, config, lambda event, data: events.append((time.perf_counter(), event, data)),
               llm=SleepingLLM(args.delay)).play()
        calls = [e.llm_calls for e in store.episodes(run.id) if e.round == 1]
    start = next(t for t, event, data in events if event == "round" and data["round"] == 1)
    end = max(t for t, event, data in events if event == "episode" and data["round"] == 1)
    snapshot = sum(data["seconds"] for _, event, data in events if event == "snapshot" and data["round"] == 1)
    return Round(executor, workers, len(calls), end - start, sum(calls) / len(calls) * args.delay, snapshot)


def resolve_seconds(ray, ref) -> float:
    """Seconds a worker process takes to resolve `ref` (handed over unresolved), its modules
    already imported (an actor imports them once, not once a round): the second of two tries."""

    @ray.remote(num_cpus=0, max_calls=0)
    def resolve(parts: list) -> float:
        start = time.perf_counter()
        ray.get(parts[0])
        return time.perf_counter() - start

    return [ray.get(resolve.remote([ref])) for _ in range(2)][-1]


def measure_shipping(folder: Path, sizes: list[int]) -> None:
    """What a round's snapshot costs the driver and a worker, by store size."""
    import pickle

    import numpy as np
    import ray
    from retrieval import MODEL, StoredVectorsOnly, build_store

    print(f"{'episodes':>9}{'what':>16}{'MB':>8}{'put ms':>8}{'worker ms':>10}")
    for n in sizes:
        path = folder / f"ship-{n}.db"
        build_store(path, n, np.random.default_rng(0))
        with Store(path) as store:
            index = ExperienceIndex.from_store(store, EmbeddingCache(store, StoredVectorsOnly(MODEL)))
            start = time.perf_counter()
            records = packed_records(store, [int(i) for i in index.ids[index.visible_mask(Visibility("bench", 1))]])
            read = time.perf_counter() - start
            for what, value, extra in (("index (files)", index, 0.0), ("index (arrays)", index.in_memory(), 0.0),
                                       ("records", records, read)):
                start = time.perf_counter()
                ref = ray.put(value)
                put = time.perf_counter() - start + extra
                size = len(pickle.dumps(value, protocol=5)) / 1e6
                print(f"{n:>9}{what:>16}{size:>8.1f}{put * 1000:>8.0f}{resolve_seconds(ray, ref) * 1000:>10.0f}", flush=True)
                del ref


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the stand-in sleeps per call")
    parser.add_argument("--steps", type=int, default=3, help="actions per episode (the step cap)")
    parser.add_argument("--waves", type=int, default=2, help="tasks per worker in the measured round")
    parser.add_argument("--executors", nargs="+", default=["threads", "ray"])
    parser.add_argument("--ship", type=int, nargs="+", help="measure the snapshot of stores of these sizes instead")
    args = parser.parse_args()
    if "ray" in args.executors or args.ship:
        import ray

        ray.init(num_cpus=max(args.workers), include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    if args.ship:
        with tempfile.TemporaryDirectory(prefix="prag-ray-ship-") as tmp:
            measure_shipping(Path(tmp), args.ship)
        return
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="prag-ray-bench-") as tmp:
        for executor in args.executors:
            for workers in args.workers:
                rounds.append(measure(Path(tmp), executor, workers, args))
                r = rounds[-1]
                print(f"  {executor} x{workers}: {r.episodes} episodes in {r.seconds:.2f} s", file=sys.stderr, flush=True)
    print(f"{args.steps} stand-in calls of {args.delay:g} s per episode, {args.waves} episodes per worker")
    print(f"{'executor':<9}{'workers':>8}{'episodes':>9}{'wall s':>8}{'ep/hour':>9}{'speed-up':>9}{'overhead ms/ep':>15}"
          f"{'snapshot ms':>12}")
    for r in rounds:
        one = next(o for o in rounds if o.executor == r.executor and o.workers == min(args.workers))
        speedup = r.per_hour / one.per_hour * min(args.workers)
        print(f"{r.executor:<9}{r.workers:>8}{r.episodes:>9}{r.seconds:>8.2f}{r.per_hour:>9.0f}{speedup:>8.2f}x"
              f"{r.overhead * 1000:>15.0f}{r.snapshot_seconds * 1000:>12.1f}")


if __name__ == "__main__":
    main()
