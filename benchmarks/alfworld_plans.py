"""Compute the shortest plan of every game of an ALFWorld split once, with textworld's planner, and
write them as the table prag ships (`prag/data/alfworld_plans.json`, keyed by the game file's sha256).

    ALFWORLD_DATA=/tmp/alf/alfworld taskset -c 1 python benchmarks/alfworld_plans.py valid_seen [valid_train ...]

Prints, per game, the planner's seconds and plan length beside the count of ALFRED's expert plan
(`plan.high_pddl` without its NoOp), to show why the latter is no substitute.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from prag.envs.alfworld.env import find_games
from prag.envs.alfworld.plans import SHIPPED, game_key, planner_plan

TABLE = Path(__file__).resolve().parent.parent / "prag" / "data" / SHIPPED


def main(splits: list[str]) -> None:
    root = Path(os.environ["ALFWORLD_DATA"]) / "json_2.1.1"
    table = json.loads(TABLE.read_text()) if TABLE.is_file() else {}
    same = total = 0
    for split in splits:
        for game in find_games(root / split):
            key = game_key(game.game_file.read_bytes())
            traj = json.loads((game.game_file.parent / "traj_data.json").read_text())
            expert = sum(1 for a in traj["plan"]["high_pddl"] if a["discrete_action"]["action"] != "NoOp")
            start = time.perf_counter()
            plan = table.get(key) or planner_plan(game.game_file)
            seconds = time.perf_counter() - start
            table[key] = plan
            total += 1
            same += len(plan) == expert
            print(f"{split}/{game.task_id}\tplanner {len(plan)} steps in {seconds:.1f} s\texpert {expert}", flush=True)
            TABLE.write_text(json.dumps(table, sort_keys=True, indent=0) + "\n")
    print(f"{total} games; ALFRED's expert count equals the planner's on {same}")


if __name__ == "__main__":
    main(sys.argv[1:])
