"""Wall time, peak memory and start-up of `prag run` on real ALFWorld games, as a new user runs it.

    ALFWORLD_DATA=/tmp/alf/alfworld python benchmarks/real_rounds.py --code . --workers 2 --limit 140 --rounds 2

(`--rounds` is prag run's: the number of rounds played, round 0 included.)

Runs `prag run alfworld-valid-seen` on a new store from the checkout at `--code` (PYTHONPATH, so
an older commit unpacked elsewhere is measured the same way), pinned with `--cpus`, and prints:
the wall time of the command; the time from the command to round 0's start (after the prior
transcripts are loaded: the first episode starts then) and to the first stored episode (from the
run log); the peak of the summed resident memory of the process and its children, sampled every
0.1 s from /proc; wins per round. Compare the played actions with benchmarks/behaviour.py.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def tree_rss(pid: int) -> dict[int, int]:
    """Resident bytes of `pid` and each of its descendants (Linux /proc), by pid."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            ppid, pages = int(fields[1]), int(fields[21])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
        rss[int(entry.name)] = pages * os.sysconf("SC_PAGE_SIZE")
    tree, todo = {}, [pid]
    while todo:
        p = todo.pop()
        tree[p] = rss.get(p, 0)
        todo += children.get(p, [])
    return tree


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", default=".", help="the checkout whose prag is measured")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--limit", type=int, default=140)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--cpus", default="0,1", help="taskset's CPU list")
    parser.add_argument("--store", help="where the new store goes (default: a temp dir)")
    args = parser.parse_args()
    code = Path(args.code).resolve()
    work = Path(tempfile.mkdtemp(prefix="prag-bench-"))
    store = Path(args.store) if args.store else work / "s.db"
    name = f"bench-w{args.workers}"
    command = ["taskset", "-c", args.cpus, sys.executable, str(code / "cli.py"), "run", "alfworld-valid-seen",
               "--store", str(store), "--name", name, "--rounds", str(args.rounds), "--limit", str(args.limit),
               "--workers", str(args.workers)]
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_WAIT_POLICY": "PASSIVE"}
    print("$", " ".join(command), flush=True)
    start_wall, start = time.time(), time.perf_counter()
    process = subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak, peak_each = 0, {}  # the tree's summed peak; each process's own peak (driver, workers)
    while process.poll() is None:
        tree = tree_rss(process.pid)
        peak = max(peak, sum(tree.values()))
        peak_each = {p: max(peak_each.get(p, 0), tree.get(p, 0)) for p in {*peak_each, *tree}}
        time.sleep(0.1)
    wall = time.perf_counter() - start
    output = process.stdout.read() if process.stdout else ""
    if process.returncode:
        print(output[-3000:])
        sys.exit(f"prag run exited with {process.returncode}")
    events = [json.loads(line) for line in (work / "runs" / name / "log.jsonl").read_text().splitlines()]
    first_round = next(e["time"] for e in events if e["event"] == "round") - start_wall
    first_episode = next(e["time"] for e in events if e["event"] == "episode") - start_wall
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rounds = db.execute("select round, count(*), sum(won), sum(llm_calls) from episodes where run_id = ? "
                        "and source = 'agent' group by round", [name]).fetchall()
    load = os.getloadavg()
    print(f"wall {wall:.1f} s; round 0 starts at {first_round:.1f} s, first episode stored at {first_episode:.1f} s; "
          f"peak RSS of the process tree {peak / 2**30:.2f} GiB; load average after {load[0]:.2f} {load[1]:.2f}")
    each = sorted((b for p, b in peak_each.items() if p != process.pid and b > 2**26), reverse=True)
    print(f"peak RSS of the driver {peak_each.get(process.pid, 0) / 2**30:.2f} GiB; of its children over 64 MiB: "
          + (", ".join(f"{b / 2**30:.2f}" for b in each) or "none") + " GiB")
    for round_, games, wins, calls in rounds:
        print(f"round {round_}: {wins}/{games} won, {calls} LLM calls")
    print(f"store {store} run {name}")


if __name__ == "__main__":
    main()
