"""Does the LLM budget lose a game that playing without it wins? (issue 31, section 2)

    ALFWORLD_DATA=... python benchmarks/budget_check.py --store B6.db --run b6 --spec envs/alfworld-valid-seen-turk.toml \
        [--llm local] [--cpus 1] [--code CHECKOUT] [--work DIR]

Decoding is greedy and the random draws are seeded, so a game that needs no more LLM calls than
the budget plays the same with or without it: only a game the budgeted run lost after spending
its whole budget could have been won without one. Each such game of the run is played again
alone, with no budget (`--llm-budget none`), on an empty store, as `prag run` would (a spec of
that one game: a data folder linking only its game, the wording chosen as in the run, which is
seeded by the game's id). Prints, per game, the calls and steps of both plays and whether the
unbudgeted one won, then how many it won. A game played before is read, not played again
(re-running the script goes on where it stopped); with --reverse a second instance on other
cores takes the games from the last, leaving those the first is playing.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def spent_and_lost(store: Path, run: str) -> list[tuple[str, int, int]]:
    """(task id, LLM calls, steps) of the run's games lost after spending the run's whole budget."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    config = json.loads(db.execute("select config from runs where id = ?", (run,)).fetchone()[0])
    budget = config["agent"]["llm_budget"]
    if budget is None:
        sys.exit(f"run {run} had no LLM budget: nothing to check")
    rows = db.execute(
        "select task_id, llm_calls, n_steps from episodes where run_id = ? and not won and llm_calls >= ? order by id",
        (run, budget),
    ).fetchall()
    return [(str(task), int(calls), int(steps)) for task, calls, steps in rows]


def one_game_spec(spec: Path, task_id: str, work: Path) -> Path:
    """A spec of the one game `task_id` of `spec`'s split, in a data folder that links only it."""
    params = tomllib.loads(spec.read_text())
    split = params["params"]["split"]
    source = Path(os.environ["ALFWORLD_DATA"]) / "json_2.1.1" / split / task_id
    folder = work / task_id.replace("/", "__")
    game = folder / "data" / "json_2.1.1" / split / task_id
    game.mkdir(parents=True, exist_ok=True)
    for file in source.iterdir():  # files, not the folder: the game search does not follow linked folders
        if not (game / file.name).exists():
            (game / file.name).symlink_to(file)
    lines = [f'name = "{params["name"]}-one"', f'env = "{params["env"]}"', f'max_steps = {params["max_steps"]}', "[params]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in params["params"].items()]
    lines.append(f'data_dir = "{folder / "data"}"')
    path = folder / "spec.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def replay(spec: Path, llm: str, cpus: str, code: Path) -> tuple[bool, int, int, float] | None:
    """Plays the one game with no budget; (won, LLM calls, steps, seconds), or None while another
    instance of this script plays it."""
    store = spec.parent / "unbudgeted.db"
    if store.exists() and _episode(store) is None:
        return None
    if not store.exists():
        env = {**os.environ, "PYTHONPATH": str(code), "OMP_WAIT_POLICY": "PASSIVE"}
        command = ["taskset", "-c", cpus, sys.executable, str(code / "cli.py"), "run", str(spec), "--llm", llm,
                   "--llm-budget", "none", "--rounds", "1", "--store", str(store), "--name", "unbudgeted"]
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    played = _episode(store)
    if played is None:
        sys.exit(f"{store}: the game was played but no episode was stored")
    won, calls, steps, seconds = played
    return bool(won), int(calls), int(steps), float(seconds)


def _episode(store: Path) -> tuple[int, int, int, float] | None:
    """The replay's episode, once stored (a run stores it when the game ends)."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return db.execute("select won, llm_calls, n_steps, seconds from episodes").fetchone()
    except sqlite3.OperationalError:  # the run has not made its tables yet
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--spec", type=Path, required=True, help="the TOML spec the run played")
    parser.add_argument("--llm", default="local")
    parser.add_argument("--cpus", default="0")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout of prag to play with")
    parser.add_argument("--work", type=Path, default=Path("budget-check"))
    parser.add_argument("--reverse", action="store_true", help="last game first: a second instance on other cores")
    args = parser.parse_args()
    games = spent_and_lost(args.store, args.run)
    print(f"{len(games)} games of run {args.run} lost after spending the whole LLM budget")
    wins = 0
    for task_id, calls, steps in reversed(games) if args.reverse else games:
        started = time.monotonic()
        played = replay(one_game_spec(args.spec, task_id, args.work.resolve()), args.llm, args.cpus, args.code.resolve())
        if played is None:
            print(f"{task_id}: being played by another instance", flush=True)
            continue
        won, free_calls, free_steps, seconds = played
        wins += won
        print(f"{task_id}: budgeted lost ({calls} calls, {steps} steps); unbudgeted {'WON' if won else 'lost'} "
              f"({free_calls} calls, {free_steps} steps, {seconds:.0f} s; {time.monotonic() - started:.0f} s here)",
              flush=True)
    print(f"unbudgeted wins among them: {wins} of {len(games)}")


if __name__ == "__main__":
    main()
