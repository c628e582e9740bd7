"""`--workers 1` against `--workers 2` with the local model in play: seconds a game, LLM calls a
second, and the peak memory of prag with everything it started.

    ALFWORLD_DATA=/tmp/alfdata/alfworld python benchmarks/llm_workers.py --limit 4 --cpus 1 \\
        [--llm local] [--workers 1 2] [--max-steps 50] [--llm-budget N] [--ask always --sources experience,llm]

Each setting is one `prag run` (one round, `--limit` games, a new store) of real ALFWorld
`valid_seen` with its goals in ALFRED's crowd annotations (goals = "turk", the spec
envs/alfworld-valid-seen-turk.toml), pinned with taskset to `--cpus`, from the checkout at `--code`.
With `--ask always --sources experience,llm` the LLM chooses every step (P-RAG as published);
without, the run's defaults (the LLM asked only where experience and search cannot go on).
`--workers 2` plays through one model server (prag.llm.model_server); `--workers 1` runs the
model in process. Memory is the proportional set size (PSS: shared pages split between the
processes sharing them) summed over prag's process and its children, sampled every half second;
the peak of that sum is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "envs" / "alfworld-valid-seen-turk.toml"


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def pss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue  # ended between the listing and the read
    return total / 1024


def play(args: argparse.Namespace, workers: int, work: Path) -> dict[str, float | int | str]:
    store = work / f"workers{workers}.db"
    name = f"w{workers}"
    prag = ["taskset", "-c", args.cpus, sys.executable, str(args.code / "cli.py")]
    command = [*prag, "run", str(SPEC), "--store", str(store), "--rounds", "1", "--limit", str(args.limit),
               "--workers", str(workers), "--llm", args.llm, "--name", name, "--max-steps", str(args.max_steps)]
    command += ["--llm-budget", str(args.llm_budget)] if args.llm_budget is not None else []
    command += ["--ask", args.ask] if args.ask else []
    command += ["--sources", args.sources] if args.sources else []
    env = {**os.environ, "PYTHONPATH": str(args.code), "OMP_WAIT_POLICY": "PASSIVE"}
    peak = [0.0]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def sample() -> None:
        while process.poll() is None:
            peak[0] = max(peak[0], pss_mib(descendants(process.pid)))
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    if process.returncode:
        sys.exit(f"{' '.join(command)}\nexited with {process.returncode}:\n{output[-3000:]}")
    card = json.loads(subprocess.run([*prag, "compare", str(store), name, "--card", "--json"], cwd=work, env=env,
                                     capture_output=True, text=True, check=True).stdout)
    round0 = card["rounds"][0]
    games = round0["episodes"]
    calls = round0["llm_calls_per_episode"] * games
    return {"workers": workers, "games": games, "won": round0["wins"], "wall": wall, "seconds_per_game": wall / games,
            "llm_calls": calls, "calls_per_second": calls / wall, "peak_mib": peak[0], "command": " ".join(command)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose prag is measured")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--limit", type=int, default=4, help="games (the first N of valid_seen)")
    parser.add_argument("--max-steps", type=int, default=50)
    parser.add_argument("--llm", default="local")
    parser.add_argument("--llm-budget", type=int)
    parser.add_argument("--ask", help="prag run's --ask (default: the run's)")
    parser.add_argument("--sources", help="prag run's --sources (default: the run's)")
    parser.add_argument("--cpus", default="1", help="taskset's CPU list")
    args = parser.parse_args()
    args.code = args.code.resolve()
    if not os.environ.get("ALFWORLD_DATA"):
        sys.exit("set ALFWORLD_DATA to the unpacked valid_seen games (see ../shared/data/alfworld/README.md)")
    work = Path(tempfile.mkdtemp(prefix="prag-llm-workers-"))
    rows = []
    for workers in args.workers:
        row = play(args, workers, work)
        rows.append(row)
        print(f"$ {row['command']}", flush=True)
        print(f"  workers {workers}: {row['won']}/{row['games']} won, {row['seconds_per_game']:.1f} s/game, "
              f"{row['llm_calls']:.0f} LLM calls, {row['calls_per_second']:.3f} calls/s, "
              f"peak {row['peak_mib'] / 1024:.2f} GiB (PSS)", flush=True)
    base = rows[0]
    for row in rows[1:]:
        print(f"games/hour, workers {row['workers']} / workers {base['workers']}: "
              f"{float(base['seconds_per_game']) / float(row['seconds_per_game']):.2f}x")
    print(f"stores in {work}")


if __name__ == "__main__":
    main()
