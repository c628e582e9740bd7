"""How long the commands a user types most take on a store of 10k episodes, each in a fresh process.

    python benchmarks/cli_latency.py [--episodes 10000] [--store PATH] [--repeat 3] [--cpus 1] [--against CHECKOUT]

Builds (or reuses, with --store) a store of N episodes of two runs, 10 steps each, whose goals and
scene graphs are drawn from a few hundred ALFWorld-like texts embedded with the real encoder
(all-MiniLM-L6-v2), as `prag run` stores them. Then times, each as `python cli.py ...` in a new
process pinned with taskset to --cpus: `prag stats`, `prag compare` (both runs), and `prag query`
with a goal never stored (so the encoder must run), the first query after the store was built
(the retrieval index files beside the store are written then) and the later ones. Prints wall
seconds per command (each repeat) and their medians, and checks that every repeat printed the
same as the first.

With --against, another checkout of prag (say a git worktree of the code before a change) runs
each command too, alternately with this one (which goes first swaps every repeat, so that both
meet the same load): the figures are printed per checkout, and their outputs must be the same.

With --instructions, each command also runs once per checkout under valgrind's callgrind, which
counts the instructions it executed: a figure the speed of a shared CPU does not move (on this
machine the same command's wall time varies by half between runs), for comparing two versions.
"""
from __future__ import annotations

import argparse
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prag.retrieval.embed import EmbeddingCache, Encoder  # noqa: E402
from prag.store import Store  # noqa: E402
from prag.store.episode_extra import EpisodeExtra
from prag.store.records import EpisodeRecord, RunRecord, StepRecord  # noqa: E402

THINGS = ["apple", "mug", "plate", "knife", "book", "pen", "cd", "cloth", "soapbar", "egg", "potato", "lettuce",
          "pan", "pot", "spoon", "vase", "keychain", "creditcard", "newspaper", "watch"]
PLACES = ["countertop", "cabinet", "drawer", "shelf", "desk", "fridge", "microwave", "sinkbasin", "sidetable",
          "diningtable", "garbagecan", "sofa", "bed", "dresser", "coffeetable", "stoveburner", "toilet", "cart"]
TYPES = ["pick_and_place_simple", "pick_clean_then_place_in_recep", "pick_heat_then_place_in_recep",
         "pick_cool_then_place_in_recep", "look_at_obj_in_light", "pick_two_obj_and_place"]
STEPS = 10


def goal_text(rng: random.Random) -> str:
    verb = rng.choice(["put a", "put a clean", "put a hot", "put a cool", "put two"])
    return f"{verb} {rng.choice(THINGS)} in {rng.choice(PLACES)}."


def scene_text(rng: random.Random) -> str:
    at = rng.choice(PLACES)
    seen = ", ".join(f"(agent, sees, {rng.choice(THINGS)} {rng.randint(1, 4)})" for _ in range(4))
    return f"(agent, at, {at} {rng.randint(1, 3)}), {seen}, ({rng.choice(THINGS)}, in, {rng.choice(PLACES)})"


def build(path: Path, episodes: int) -> None:
    """`episodes` episodes over two runs, their texts embedded once each (as a run stores them)."""
    rng = random.Random(0)
    goals = sorted({goal_text(rng) for _ in range(400)})
    scenes = sorted({scene_text(rng) for _ in range(2000)})
    with Store(path) as store:
        cache = EmbeddingCache(store, Encoder())
        cache.vectors(goals + scenes)
        for run in ("first", "second"):
            store.add_run(RunRecord(id=run, spec="alfworld-like", llm="local", mode="prag", k=3, rounds=3))
        for n in range(episodes):
            run = "first" if n < episodes // 2 else "second"
            steps = [StepRecord(t, None if t == 0 else f"go to {rng.choice(PLACES)} 1", f"obs {n}.{t}",
                                rng.choice(scenes)) for t in range(STEPS)]
            store.add_episode(EpisodeRecord(run_id=run, round=n % 3, task_id=f"task-{n}",
                                            task_type=rng.choice(TYPES), goal=rng.choice(goals),
                                            won=rng.random() < 0.6, steps=steps, shortest_path=5,
                                            extra=EpisodeExtra(env="alfworld", spec="alfworld-like")))
        for run in ("first", "second"):
            store.set_run_status(run, "finished")


def timed(command: list[str], checkout: Path) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system, of the command's processes) and what it printed,
    run from `checkout`. On a shared machine the CPU seconds are what an idle one would take, about."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{' '.join(command)} exited with {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, done.stdout


def instructions(command: list[str], checkout: Path) -> int:
    """The instructions `command` executes (its python, not taskset, run under callgrind)."""
    python = command.index(sys.executable)
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command[python:]],
                          cwd=checkout, capture_output=True, text=True)
    collected = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not collected:
        sys.exit(f"valgrind {' '.join(command[python:])} failed:\n{done.stderr[-2000:]}")
    return int(collected.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--store", type=Path, help="a store built by an earlier run of this benchmark")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpus", default="1", help="taskset's CPU list")
    parser.add_argument("--against", type=Path, help="another checkout of prag, run alternately with this one")
    parser.add_argument("--instructions", action="store_true", help="also count each command's instructions (valgrind)")
    args = parser.parse_args()
    if args.instructions and not shutil.which("valgrind"):
        sys.exit("--instructions needs valgrind: apt-get install valgrind")
    store = args.store or Path(tempfile.mkdtemp(prefix="prag-cli-latency-")) / "store.db"
    if not store.exists():
        start = time.perf_counter()
        build(store, args.episodes)
        print(f"built {store}: {args.episodes} episodes in {time.perf_counter() - start:.0f} s", flush=True)
    prag = ["taskset", "-c", args.cpus, sys.executable, "cli.py"]
    commands = {
        "stats": [*prag, "stats", str(store)],
        "compare": [*prag, "compare", str(store), "first", "second"],
        "query": [*prag, "query", str(store), "Put a washed apple on the kitchen table, please."],
    }
    checkouts = [ROOT, *([args.against.resolve()] if args.against else [])]
    for name, command in commands.items():
        times: dict[Path, list[tuple[float, float]]] = {checkout: [] for checkout in checkouts}
        outputs = []
        for repeat in range(args.repeat):
            for checkout in checkouts if repeat % 2 == 0 else checkouts[::-1]:
                wall, cpu, out = timed(command, checkout)
                times[checkout].append((wall, cpu))
                outputs.append(out)
        same = all(out == outputs[0] for out in outputs)
        for checkout, runs in times.items():
            walls, cpus = zip(*runs)
            print(f"prag {name}{f' ({checkout})' if args.against else ''}: "
                  + ", ".join(f"{w:.2f} s ({c:.2f} s CPU)" for w, c in runs)
                  + f"; median {statistics.median(walls):.2f} s ({statistics.median(cpus):.2f} s CPU)", flush=True)
        if args.instructions:
            for checkout in checkouts:
                print(f"  instructions{f' ({checkout})' if args.against else ''}: "
                      f"{instructions(command, checkout) / 1e9:.2f} G", flush=True)
        if not same:
            print("  (outputs differ between repeats or checkouts!)", flush=True)
        print(f"  $ {' '.join(command)}", flush=True)


if __name__ == "__main__":
    main()
