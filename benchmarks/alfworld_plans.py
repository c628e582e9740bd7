"""textworld's planner's shortest plans of ALFWorld games: the table prag ships, and a check of the
plans prag makes itself.

    ALFWORLD_DATA=/tmp/alf/alfworld taskset -c 1 python benchmarks/alfworld_plans.py valid_seen [valid_train ...]

computes the plan of every game of the splits with textworld's planner (its `replan`, on the
whole game) and writes them as the table prag ships (`prag/data/alfworld_plans.json`, keyed by the
game file's sha256); prints, per game, the planner's seconds and plan length beside the count of
ALFRED's expert plan (`plan.high_pddl` without its NoOp), to show why the latter is no substitute.

    ALFWORLD_DATA=/tmp/alf/alfworld taskset -c 1 python benchmarks/alfworld_plans.py --check valid_seen valid_train

writes nothing: per game, textworld's plan (from the table, else planned now) beside prag's
(textworld's search on the part of the game its goal can use, `prag.envs.alfworld.shortest`),
their lengths and CPU seconds; exits 1 if any length differs.
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from prag.envs.alfworld.env import argv_kept, close_engine, find_games
from prag.envs.alfworld.plans import SHIPPED, game_key
from prag.envs.alfworld.shortest import goal_operators

T = TypeVar("T")
TABLE = Path(__file__).resolve().parent.parent / "prag" / "data" / SHIPPED


def textworld_plan(game_file: Path) -> list[str]:
    """textworld's planner on the game from its start (slow: seconds, up to about a minute)."""
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

    infos = textworld.EnvInfos(extras=["walkthrough"])
    with argv_kept():
        engine = textworld.start(str(game_file), request_infos=infos, wrappers=[AlfredDemangler(), AlfredInfos])
        try:
            return list(engine.reset()["extra.walkthrough"] or [])
        finally:
            close_engine(engine)


def timed(work: Callable[..., T], *args: Any) -> tuple[T, float]:
    """What `work(*args)` returns, and the CPU seconds it took."""
    start = time.process_time()
    result = work(*args)
    return result, time.process_time() - start


def main(argv: list[str]) -> int:
    check = "--check" in argv
    splits = [a for a in argv if a != "--check"]
    root = Path(os.environ["ALFWORLD_DATA"]) / "json_2.1.1"
    table = json.loads(TABLE.read_text()) if TABLE.is_file() else {}
    same = total = 0
    seconds = {"textworld": 0.0, "prag": 0.0}
    for split in splits:
        for game in find_games(root / split):
            key = game_key(game.game_file.read_bytes())
            plan, planned = (table[key], 0.0) if key in table else timed(textworld_plan, game.game_file)
            seconds["textworld"] += planned
            total += 1
            if check:
                data = json.loads(game.game_file.read_text())
                ours, ours_seconds = timed(goal_operators, data["pddl_domain"], data["pddl_problem"])
                seconds["prag"] += ours_seconds
                same += len(ours or ()) == len(plan)
                print(f"{split}/{game.task_id}\ttextworld {len(plan)} steps" + (f" in {planned:.2f} s" if planned else " (table)")
                      + f"\tprag {len(ours or ())} in {ours_seconds:.2f} s" + ("" if len(ours or ()) == len(plan) else "\tDIFFERS"),
                      flush=True)
                continue
            traj = json.loads((game.game_file.parent / "traj_data.json").read_text())
            expert = sum(1 for a in traj["plan"]["high_pddl"] if a["discrete_action"]["action"] != "NoOp")
            table[key] = plan
            same += len(plan) == expert
            print(f"{split}/{game.task_id}\tplanner {len(plan)} steps in {planned:.1f} s\texpert {expert}", flush=True)
            TABLE.write_text(json.dumps(table, sort_keys=True, indent=0) + "\n")
    if check:
        print(f"{total} games; prag's plan as long as textworld's on {same}; CPU seconds planning: "
              f"textworld {seconds['textworld']:.1f} (games not in the table), prag {seconds['prag']:.1f}")
        return 0 if same == total else 1
    print(f"{total} games; ALFRED's expert count equals the planner's on {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
