"""Where things are: ALFWorld valid_seen played with each source of the find-X order (`--places`).

    ALFWORLD_DATA=/tmp/alfdata/alfworld python benchmarks/places.py --workers 2 --cpus 1 \\
        --variants rules memory memory,rules none memory,llm,rules llm

Each variant is `prag run alfworld-valid-seen` (140 games, the spec's 50 steps, template goals, the
run's default sources experience,search,llm and ask policy) for `--rounds` rounds on a new, empty
store, from the checkout at `--code`, pinned with taskset to `--cpus`. `none` is `--places ''`
(places searched as listed); on an empty store `memory` alone is the same in round 0, since it has
seen nothing yet. Prints, per variant and round, the success rate, steps and LLM calls per game
from the run's results card (`prag compare --card --json`), the wall time and the command.

    ALFWORLD_DATA=/tmp/alfdata/alfworld python benchmarks/places.py --after TRAIN.db --include train \
        --variants memory memory,rules

plays each variant after training: on a copy of TRAIN.db, whose runs `--include` (a finished
`alfworld-valid-train` run, or runs that together played it) the new run includes, so that the semantic memory starts from what
that run saw (`prag run ... --include RUN`).

    python benchmarks/places.py --stores A.db B.db ...

compares runs already played (one run a store, finished or stopped) over the games all of them
played: a run with the llm source on a busy machine may be stopped before its 140th game.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from prag.store import Store
from prag_runs import played


def play(code: Path, work: Path, places: str, args: argparse.Namespace) -> tuple[list[str], float, dict]:
    """One variant's run on a new store: its command, wall seconds and results card."""
    name = f"places-{places.replace(',', '-') or 'none'}"
    store = work / f"{name}.db"
    if args.after is not None:
        shutil.copy(args.after, store)
    prag = ["taskset", "-c", args.cpus, sys.executable, str(code / "cli.py")]
    command = [*prag, "run", "alfworld-valid-seen", "--store", str(store), "--name", name, "--rounds", str(args.rounds),
               "--workers", str(args.workers), "--llm", args.llm, "--places", places]
    if args.limit is not None:
        command += ["--limit", str(args.limit)]
    if args.after is not None:
        command += [f"--include={run}" for run in args.include]
    wall, card = played(prag, command, store, name, code)
    return command, wall, card


def common_games(paths: list[Path]) -> None:
    """Round 0 of each store's run, over all its games and over the games every run played."""
    played = {}
    for path in paths:
        with Store(path, create=False) as store:
            (run,) = store.runs()
            played[path.stem] = {e.task_id: e for e in store.episodes(run.id) if e.source == "agent" and e.round == 0}
    common = set.intersection(*(set(games) for games in played.values()))
    print(f"| run | games | SR | steps/game | LLM calls/game | on the {len(common)} games all played: SR | steps/game |")
    print("|---|---|---|---|---|---|---|")
    for name, games in played.items():
        every, shared = list(games.values()), [games[t] for t in sorted(common)]
        print(f"| {name} | {len(every)} | {_sr(every)} | {_mean(every, 'n_actions'):.2f} | {_mean(every, 'llm_calls'):.2f} "
              f"| {_sr(shared)} | {_mean(shared, 'n_actions'):.2f} |")


def _sr(episodes: list) -> str:
    wins = sum(e.won for e in episodes)
    return f"{wins / len(episodes):.1%} ({wins}/{len(episodes)})"


def _mean(episodes: list, field: str) -> float:
    return sum(getattr(e, field) for e in episodes) / len(episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", default=".", help="the checkout whose prag is measured")
    parser.add_argument("--variants", nargs="+", default=["rules", "memory", "memory,rules", "memory,llm,rules"],
                        help="--places values to play, one run each; none for ''")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--limit", type=int, help="the first N games only (default: all 140)")
    parser.add_argument("--cpus", default="1", help="taskset's CPU list")
    parser.add_argument("--llm", default="local", help="prag run's --llm (a run without the llm places source "
                        "makes no call: any installed model gives the same figures)")
    parser.add_argument("--after", type=Path, help="play on a copy of this store, including its run --include")
    parser.add_argument("--include", nargs="+", default=["train"], help="with --after: the training runs to include")
    parser.add_argument("--stores", nargs="+", type=Path, help="compare these stores' runs instead of playing")
    args = parser.parse_args()
    if args.stores:
        common_games(args.stores)
        return
    code = Path(args.code).resolve()
    work = Path(tempfile.mkdtemp(prefix="prag-places-"))
    rows = []
    for variant in args.variants:
        places = "" if variant == "none" else variant
        command, wall, card = play(code, work, places, args)
        print("$", " ".join(command) if places else " ".join(command[:-1] + ["''"]), flush=True)
        for r in card["rounds"]:
            row = (variant, r["round"], r["total_sr"], r["wins"], r["episodes"], r["steps_per_game"],
                   r["llm_calls_per_episode"], wall)
            rows.append(row)
            print(f"  round {r['round']}: SR {r['total_sr']:.1%} ({r['wins']}/{r['episodes']}), "
                  f"{r['steps_per_game']:.2f} steps/game, {row[6]:.2f} LLM calls/game; wall {wall:.0f} s", flush=True)
    print("\n| --places | round | SR | steps/game | LLM calls/game | wall |\n|---|---|---|---|---|---|")
    for variant, round_, sr, wins, games, steps, calls, wall in rows:
        print(f"| {variant} | {round_} | {sr:.1%} ({wins}/{games}) | {steps:.2f} | {calls:.2f} | {wall:.0f} s |")
    print(f"\nstores in {work}")


if __name__ == "__main__":
    main()
