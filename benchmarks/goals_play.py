"""Goals in people's words, played: real ALFWorld with each game's goal in one wording.

    ALFWORLD_DATA=/tmp/alfdata/alfworld python benchmarks/goals_play.py \\
        --wordings refined paraphras1_command paraphras2_command contextual_command korean_command turk

Each wording is `prag run` on a spec of the split (`--split`, default valid_seen: 140 games, 50
steps, ALFWorld's grammar with its action filter) whose `goals` is that wording, for `--rounds`
rounds from an empty store (or, with `--after STORE --include RUN...`, on a copy of a training
store whose runs the new run includes: prag's `--train`; or, with `--round0-from DIR`, on a copy
of an earlier benchmark's store of the wording, from its round 0: prag's `--round0-from`), with the run's defaults (readers
template,experience,words,llm; sources experience,search,llm), the local LLM unless `--llm` says
otherwise, at most `--llm-budget` LLM calls a game if given (past them, steps at random), from the checkout at `--code`, pinned with taskset to `--cpus`. Prints per wording and
round: success rate, steps, LLM calls and tokens per game (the results card), the readings acted on
first by source and how many hypotheses each won game needed (the episodes' `reading`), the wall
time and the command.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from prag.envs.alfworld.wording import FIELDS
from prag.store import Store
from prag_runs import played

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld"


def spec(work: Path, wording: str, args: argparse.Namespace) -> Path:
    goals = f'{{ file = "{args.commands}", field = "{wording}" }}' if wording in FIELDS else f'"{wording}"'
    path = work / f"{args.split}-{wording}.toml"
    path.write_text(f'name = "{args.split}-{wording}"\nenv = "alfworld"\nmax_steps = {args.max_steps}\n'
                    f'[params]\nsplit = "{args.split}"\ngoals = {goals}\n')
    return path


def play(code: Path, work: Path, wording: str, args: argparse.Namespace) -> tuple[list[str], float, dict, Path]:
    """One wording's run on a new store: its command, wall seconds, results card and store."""
    name = f"{args.split}-{wording}"
    store = work / f"{name}.db"
    if args.after is not None:
        shutil.copy(args.after, store)
    if args.round0_from is not None:  # its round 0 stands for this run's: rounds from 1 are played
        shutil.copy(args.round0_from / f"{name}.db", store)
    prag = ["taskset", "-c", args.cpus, sys.executable, str(code / "cli.py")]
    # the same spec file as the round 0 played: its path is one of the run's settings
    played_spec = args.round0_from / f"{name}.toml" if args.round0_from is not None else spec(work, wording, args)
    command = [*prag, "run", str(played_spec), "--store", str(store), "--rounds", str(args.rounds),
               "--workers", "1", "--llm", args.llm]
    if args.round0_from is not None:
        command += ["--round0-from", name]
        name += "-from-round0"
    command += ["--name", name]
    command += ["--limit", str(args.limit)] if args.limit is not None else []
    command += ["--llm-budget", str(args.llm_budget)] if args.llm_budget is not None else []
    command += [f"--include={run}" for run in args.include] if args.after is not None else []
    wall, card = played(prag, command, store, name, code)
    return command, wall, card, store


def readings(store_path: Path, run: str, round_: int) -> tuple[Counter, float]:
    """The first reading acted on, by source; hypotheses tried per won game."""
    by_source: Counter = Counter()
    tried = []
    with Store(store_path, create=False) as store:
        for episode in store.episodes(run):
            if episode.source != "agent" or episode.round != round_:
                continue
            reading = episode.extra.reading
            hypotheses = reading.hypotheses if reading is not None else []
            first = hypotheses[0] if hypotheses else reading
            by_source[(first.source if first is not None else None) or "none"] += 1
            if episode.won:
                tried.append(1 + sum(1 for h in hypotheses if h.dropped))
    return by_source, sum(tried) / max(len(tried), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", default=".", help="the checkout whose prag is measured")
    parser.add_argument("--wordings", nargs="+", default=["refined", "turk"],
                        choices=("template", "turk", "people", *FIELDS))
    parser.add_argument("--split", default="valid_seen")
    parser.add_argument("--commands", type=Path, default=SHARED / "refined_valid_seen_commands.json")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=50)
    parser.add_argument("--limit", type=int, help="the first N games only")
    parser.add_argument("--cpus", default="1", help="taskset's CPU list")
    parser.add_argument("--llm", default="local")
    parser.add_argument("--llm-budget", type=int, help="prag run's --llm-budget: the most LLM calls a game makes")
    parser.add_argument("--after", type=Path, help="play on a copy of this store, including its runs --include")
    parser.add_argument("--include", nargs="+", default=["train"])
    parser.add_argument("--round0-from", type=Path, metavar="DIR",
                        help="a folder of an earlier run's stores (same options): each wording goes on from its round 0")
    args = parser.parse_args()
    args.commands = args.commands.resolve()
    code = Path(args.code).resolve()
    work = Path(tempfile.mkdtemp(prefix="prag-goals-play-"))
    rows = []
    for wording in args.wordings:
        command, wall, card, store = play(code, work, wording, args)
        print("$", " ".join(command), flush=True)
        for r in card["rounds"]:
            sources, tried = readings(store, card["run"], r["round"])
            row = (wording, r["round"], r["total_sr"], r["wins"], r["episodes"], r["steps_per_game"],
                   r["llm_calls_per_episode"], r["tokens_per_game"], ", ".join(f"{k} {v}" for k, v in sources.most_common()),
                   tried, wall)
            rows.append(row)
            print(f"  round {r['round']}: SR {r['total_sr']:.1%} ({r['wins']}/{r['episodes']}), {row[5]:.2f} steps/game, "
                  f"{row[6]:.2f} LLM calls/game, {row[7]:.0f} tokens/game; read first by {row[8]}; "
                  f"{tried:.2f} hypotheses per won game; wall {wall:.0f} s", flush=True)
    print("\n| wording | round | SR | steps/game | LLM calls/game | tokens/game | read first by | hypotheses/won game |")
    print("|---|---|---|---|---|---|---|---|")
    for wording, round_, sr, wins, games, steps, calls, tokens, sources, tried, _ in rows:
        print(f"| {wording} | {round_} | {sr:.1%} ({wins}/{games}) | {steps:.2f} | {calls:.2f} | {tokens:.0f} | {sources} | {tried:.2f} |")
    print(f"\nstores in {work}")


if __name__ == "__main__":
    main()
