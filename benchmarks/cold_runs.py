"""A user's first run on ALFWorld games this machine has never played (cold), against the same
run again (warm): wall and CPU seconds, wins, and whether both played the same actions.

    ALFWORLD_DATA=/tmp/alf/alfworld python benchmarks/cold_runs.py --code . --games 40 --workers 2 --cpus 0

Writes a spec of `--games` games of `--split` (a seeded choice across the six task types, the
spec's `num_tasks`, 50 steps), then plays `prag run SPEC --rounds 1 --llm random` twice from the
checkout at `--code`, pinned with taskset to `--cpus`, each into a new store, with the user cache
(`PRAG_CACHE`) pointed at a new empty folder: the first run finds it empty (the first run of a
new user, or of anyone on games never played here), the second finds what the first kept. The
user's own cache is never touched. `--llm random` needs no model: on these games every step comes
from search and experience (0 LLM calls); a call, if any, is a seeded uniform choice.

Prints per run: wall seconds, CPU seconds of the whole process tree (user + system: steadier
than wall on a shared machine), the seconds until round 0 started (the shipped prior transcripts
are replayed before it, and on an empty cache replayed for the first time), wins and LLM calls;
then cold/warm ratios and the episodes whose actions differ (benchmarks/behaviour.py). With
`--keep DIR` the stores and cache stay in DIR, to compare with another checkout's stores:
`python benchmarks/behaviour.py A/cold.db cold B/cold.db cold`.
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
from dataclasses import dataclass
from pathlib import Path

from behaviour import differences, episodes


@dataclass(frozen=True)
class Played:
    wall: float
    cpu: float  # user + system seconds of prag and every process it waited for
    to_round: float  # from the command to round 0's start
    won: int
    games: int
    llm_calls: int


def write_spec(work: Path, split: str, games: int, seed: int) -> Path:
    path = work / f"{split}-{games}.toml"
    path.write_text(f'name = "{split}-{games}"\nenv = "alfworld"\nmax_steps = 50\n'
                    f'[params]\nsplit = "{split}"\nnum_tasks = {games}\nseed = {seed}\n')
    return path


def play(code: Path, spec: Path, store: Path, name: str, cache: Path, args: argparse.Namespace) -> Played:
    command = ["taskset", "-c", args.cpus, sys.executable, str(code / "cli.py"), "run", str(spec), "--store", str(store),
               "--name", name, "--rounds", "1", "--workers", str(args.workers), "--llm", "random"]
    env = {**os.environ, "PYTHONPATH": str(code), "PRAG_CACHE": str(cache), "OMP_WAIT_POLICY": "PASSIVE"}
    print("$", f"PRAG_CACHE={cache}", " ".join(command), flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start_wall, start = time.time(), time.perf_counter()
    run = subprocess.run(command, cwd=store.parent, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode:
        sys.exit(f"prag run exited with {run.returncode}:\n{(run.stdout + run.stderr)[-3000:]}")
    log = [json.loads(line) for line in (store.parent / "runs" / name / "log.jsonl").read_text().splitlines()]
    to_round = next(e["time"] for e in log if e["event"] == "round") - start_wall
    card = subprocess.run([sys.executable, str(code / "cli.py"), "compare", str(store), name, "--card", "--json"],
                          cwd=store.parent, env=env, capture_output=True, text=True, check=True)
    [round0] = json.loads(card.stdout)["rounds"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Played(wall, cpu, to_round, round0["wins"], round0["episodes"], round(round0["llm_calls_per_episode"] * round0["episodes"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", default=".", help="the checkout whose prag is measured")
    parser.add_argument("--split", default="valid_train", help="games the user cache has not seen")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0, help="which games the spec's num_tasks keeps")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpus", default="0", help="taskset's CPU list")
    parser.add_argument("--keep", type=Path, help="a new folder for the stores and the cache (default: a temp dir)")
    args = parser.parse_args()
    code = Path(args.code).resolve()
    if args.keep is not None:
        args.keep.mkdir(parents=True)
    work = args.keep.resolve() if args.keep is not None else Path(tempfile.mkdtemp(prefix="prag-cold-"))
    spec = write_spec(work, args.split, args.games, args.seed)
    cache = work / "cache"  # empty: prag makes it at its first use
    results = {}
    for name in ("cold", "warm"):
        results[name] = played = play(code, spec, work / f"{name}.db", name, cache, args)
        print(f"{name}: wall {played.wall:.1f} s, CPU {played.cpu:.1f} s, round 0 started at {played.to_round:.1f} s; "
              f"won {played.won}/{played.games}, {played.llm_calls} LLM calls; load average {os.getloadavg()[0]:.2f}",
              flush=True)
    cold, warm = results["cold"], results["warm"]
    lines = differences(episodes(work / "cold.db", "cold"), episodes(work / "warm.db", "warm"))
    print("\n".join(lines))
    print(f"cold/warm: wall {cold.wall / warm.wall:.2f}x, CPU {cold.cpu / warm.cpu:.2f}x; "
          f"lost cold {cold.games - cold.won}, warm {warm.games - warm.won}; "
          f"actions {'identical' if not lines else f'differ in {len(lines)} episodes'}")
    print(f"stores and cache in {work}")


if __name__ == "__main__":
    main()
