"""Environment figures: ALFWorld game generation time, and reset/step time of every family.

Everything is written into a fresh temp dir (PRAG_CACHE and ALFWORLD_DATA point there), so every
generated game is generated here, not read from a cache:

- ALFWorld generation: seconds per kept game (`alfworld_gen.generate_game`, which writes the game
  and plays its planner plan to a win before keeping it; a seed whose game its plan does not win
  is retried with the next, and those retries are in the time), for each difficulty and task type.
- Reset and step time per family: generated ALFWorld (the alfworld-mini spec), real ALFWorld
  (valid_seen from ../shared/data/alfworld/, unpacked to the temp dir; skipped with a message
  when absent), TextWorld (each textworld-* spec, i.e. each challenge), the grid world (each task).
  "reset, new env" is the first reset of a fresh env (loads the game, asks the planner/solver);
  "reset again" is a second reset of the same env. Steps play the task's own plan (its
  `oracle_plan()`, the same name in every family), which must win.

    python benchmarks/envs.py             # 3 seeds per task type, 6 tasks per family/challenge
    python benchmarks/envs.py --quick     # 1 seed, 2 tasks: about a minute
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tarfile
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from prag.envs.base import Task, TaskSource

SHARED_ALFWORLD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alfworld"
VALID_SEEN = SHARED_ALFWORLD / "alfworld-valid_seen.tar.gz"


def seconds(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


# --- ALFWorld generation ------------------------------------------------------------------------


def generation(out: Path, seeds: int) -> None:
    from prag.envs.alfworld.env import TASK_TYPES
    from prag.envs.alfworld.gen import DIFFICULTIES, generate_game

    print(f"\nALFWorld game generation (seconds per kept game, seeds 0..{seeds - 1} per type; "
          "retries = seeds whose game its plan did not win)")
    print(f"{'difficulty':<10} {'task type':<32} {'median':>7} {'min':>7} {'max':>7} {'retries':>7}")
    for name, size in DIFFICULTIES.items():
        pooled: list[float] = []
        pooled_retries = 0
        for task_type in TASK_TYPES:
            times, retries = [], 0
            for seed in range(seeds):
                took, game = seconds(generate_game, task_type, seed, out / name, size)
                times.append(took)
                # The kept game's directory is trial_gen_<seed it came from>.
                retries += int(game.parent.name.removeprefix("trial_gen_")) - seed
            pooled += times
            pooled_retries += retries
            print(f"{name:<10} {task_type:<32} {statistics.median(times):7.2f} {min(times):7.2f} "
                  f"{max(times):7.2f} {retries:7d}")
        print(f"{name:<10} {'all types (' + str(len(pooled)) + ' games)':<32} {statistics.median(pooled):7.2f} "
              f"{min(pooled):7.2f} {max(pooled):7.2f} {pooled_retries:7d}")


# --- reset and step -----------------------------------------------------------------------------




class Timings:
    def __init__(self) -> None:
        self.make: list[float] = []
        self.cold: list[float] = []
        self.warm: list[float] = []
        self.steps: list[float] = []
        self.won = 0
        self.tasks = 0

    def play(self, source: TaskSource, task: Task) -> None:
        took, env = seconds(source.make, task)
        self.make.append(took)
        try:
            took, first = seconds(env.reset)
            self.cold.append(took)
            plan = env.oracle_plan()
            obs = first
            for action in plan:
                took, obs = seconds(env.step, action)
                self.steps.append(took)
            self.won += bool(obs.won)
            self.tasks += 1
            took, _ = seconds(env.reset)
            self.warm.append(took)
        finally:
            env.close()


def pair(samples: list[float]) -> str:
    """Median and p95 in milliseconds."""
    p50, p95 = np.percentile(np.asarray(samples) * 1000, [50, 95])
    return f"{p50:8.1f} {p95:8.1f}"


HEADER = (f"{'family':<20} {'part':<30} {'tasks':>5} {'make s':>7} {'reset new env ms':>17} {'reset again ms':>17} "
          f"{'step ms':>17} {'steps':>5} {'won':>5}")
SUB = f"{'':<20} {'':<30} {'':>5} {'(max)':>7}" + f" {'median      p95':>17}" * 3


def report(family: str, part: str, t: Timings) -> None:
    print(f"{family:<20} {part:<30} {t.tasks:5d} {max(t.make):7.2f} {pair(t.cold)} {pair(t.warm)} "
          f"{pair(t.steps)} {len(t.steps):5d} {t.won:>2}/{t.tasks:<2}")


def round_robin(tasks: list[Task], n: int) -> list[Task]:
    """The first `n` tasks taking one of each type in turn, so that a few tasks cover many types."""
    rank: dict[str, int] = {}
    keyed: list[tuple[int, int, Task]] = []
    for position, task in enumerate(tasks):
        rank[task.task_type] = rank.get(task.task_type, -1) + 1
        keyed.append((rank[task.task_type], position, task))
    return [task for *_, task in sorted(keyed, key=lambda k: k[:2])[:n]]


def alfworld_mini(n_tasks: int) -> None:
    from prag.envs.spec import load_spec

    took, source = seconds(load_spec("alfworld-mini").open)
    tasks = source.tasks()
    print(f"{'alfworld-mini':<20} {'(generate the whole set)':<30} {len(tasks):5d} {took:7.2f}")
    chosen = round_robin(tasks, n_tasks)
    t = Timings()
    for task in chosen:
        t.play(source, task)
    report("alfworld-mini", f"{len({c.task_type for c in chosen})} types", t)


def alfworld_real(n_tasks: int, scratch: Path) -> None:
    if not VALID_SEEN.is_file():
        print(f"{'alfworld valid_seen':<20} skipped: no {VALID_SEEN} (the shared real ALFWorld data)")
        return
    from prag.envs.alfworld.env import from_params

    with tarfile.open(VALID_SEEN) as archive:
        archive.extractall(scratch, filter="data")
    root = scratch / "alfworld"
    source = from_params({"split": "valid_seen", "data_dir": str(root)}, root)
    chosen = round_robin(source.tasks(), n_tasks)
    t = Timings()
    for task in chosen:
        t.play(source, task)
    report("alfworld valid_seen", f"{len({c.task_type for c in chosen})} types", t)


def textworld(n_tasks: int) -> None:
    from prag.envs.spec import list_specs, load_spec

    for path in list_specs():
        spec = load_spec(str(path))
        if spec.env != "textworld":
            continue
        source = spec.open()
        t = Timings()
        for task in source.tasks()[:n_tasks]:
            t.play(source, task)  # make() generates and compiles the game here (a fresh cache)
        report(spec.name, str(spec.params["challenge"]), t)


def grid(n_tasks: int) -> None:
    from prag.envs.grid import TASKS, from_params
    from prag.envs.spec import load_spec

    params = dict(load_spec("grid-household").params)
    for name in TASKS:
        source = from_params({**params, "tasks": [name], "per_task": n_tasks}, Path("."))
        t = Timings()
        for task in source.tasks():
            t.play(source, task)
        report("grid-household", name, t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1 seed per task type and 2 tasks per family/challenge")
    parser.add_argument("--seeds", type=int, default=3, help="generation seeds per task type and difficulty")
    parser.add_argument("--tasks", type=int, default=6, help="tasks played per family, challenge or grid task")
    parser.add_argument("--skip-generation", action="store_true", help="only the reset/step figures")
    args = parser.parse_args()
    seeds, n_tasks = (1, 2) if args.quick else (args.seeds, args.tasks)

    scratch = Path(tempfile.mkdtemp(prefix="prag-bench-envs-"))
    os.environ["PRAG_CACHE"] = str(scratch / "cache")
    os.environ["ALFWORLD_DATA"] = str(scratch / "alfworld-home")  # `import alfworld` writes there
    print(f"prag environment figures: {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; alfworld {version('alfworld')}, "
          f"textworld {version('textworld')}, minigrid {version('minigrid')}")
    try:
        if not args.skip_generation:
            generation(scratch / "generated", seeds)
        print(f"\nReset and step, {n_tasks} tasks each (wall-clock; steps play the task's own plan, "
              "which must win; 'make' generates TextWorld games)")
        print(HEADER)
        print(SUB)
        alfworld_mini(n_tasks)
        alfworld_real(n_tasks, scratch / "real")
        textworld(n_tasks)
        grid(n_tasks)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
