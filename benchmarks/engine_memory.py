"""Resident memory of one process playing real ALFWorld games one after another (engine only).

    ALFWORLD_DATA=/tmp/alfdata/alfworld python benchmarks/engine_memory.py --games 24

Plays every 5th game of valid_seen by its shortest plan, closing each, and prints the process's
RSS every 4 games: what a process keeps per game played (docs/records/engine_speed.md).
"""
from __future__ import annotations

import argparse
import gc
import os
from pathlib import Path

from prag.envs.alfworld.env import AlfworldTaskSource, find_games


def rss_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=24)
    args = parser.parse_args()
    split = Path(os.environ["ALFWORLD_DATA"]) / "json_2.1.1" / "valid_seen"
    games = find_games(split)[::5][: args.games]
    for i, game in enumerate(games, 1):
        env = AlfworldTaskSource([game.task()]).make(game.task())
        env.reset()
        for action in env.oracle_plan():
            env.step(action)
        env.close()
        gc.collect()
        if i % 4 == 0:
            print(f"{i} games: {rss_mib():.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
