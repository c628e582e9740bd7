"""ALFWorld with the given PDDL domain switched off: the action model learned (SAM) from a `valid_train`
run's episodes, then `valid_seen` played with it, against the given model on the same footing.

    ALFWORLD_DATA=/tmp/alfdata/alfworld python benchmarks/action_models.py TRAIN.db --run train \\
        --episodes 1 2 6 12 24 60 200 --workers 1 --cpus 1

TRAIN.db holds a finished run `--run` of `alfworld-valid-train` (any sources; prag's defaults win
every game with search), or several runs that together played it (`--run train train-b`). For each
count N of `--episodes`, a copy of the store keeps N of those runs' episodes, taken in turn from each task type (so that a small N still shows every type, as a
round-robin over the six), and `prag run alfworld-valid-seen --include RUN --action-model learned`
plays the 140 games with the model learned from those N episodes. `--sources search,llm`: no plans
from retrieved experience, so that every plan is the search's; find-X orders places by the store's
memory and the placement rules (the default `--places`), the same in every variant. `given` is the
same run with `--action-model given` on the full store. Where search has no plan the LLM source
plays: `--llm random` by default (a uniform choice among the admissible actions), so that the
figures measure the model rather than an LLM's play. Prints per variant: SR, steps and LLM calls
per game (from the results card), the model's episodes and transitions, the wall time, the command.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from itertools import zip_longest
from pathlib import Path

from prag.store import Store
from prag_runs import played


def keep(path: Path, run_ids: list[str], count: int) -> int:
    """Delete all but `count` of the runs' episodes, chosen in turn from each task type; returns how many stay."""
    with Store(path, create=False) as store:
        by_type: dict[str, list[int]] = {}
        for episode in store.outcomes(run_ids):
            by_type.setdefault(episode.task_type, []).append(int(episode.id or 0))
        order = [i for row in zip_longest(*by_type.values()) for i in row if i is not None]
        for episode_id in order[count:]:
            store.delete_episode(episode_id)
        return min(count, len(order))


def play(code: Path, store: Path, name: str, model: str, args: argparse.Namespace) -> tuple[list[str], float, dict, dict]:
    """One variant's run: its command, wall seconds, results card and the stored learned model's sizes."""
    prag = ["taskset", "-c", args.cpus, sys.executable, str(code / "cli.py")]
    command = [*prag, "run", "alfworld-valid-seen", "--store", str(store), "--name", name, "--rounds", "1",
               "--workers", str(args.workers), *[f"--include={run}" for run in args.run], "--sources", "search,llm",
               "--action-model", model, "--llm", args.llm]
    if args.limit is not None:
        command += ["--limit", str(args.limit)]
    if args.llm.startswith("random"):
        command.append("--no-answer-cache")  # a random pick is no answer to keep
    wall, card = played(prag, command, store, name, code)
    with Store(store, create=False) as opened:
        learned = [r for r in opened.action_models.list() if r.run_id == name]
    sizes = {"episodes": learned[-1].episodes, "transitions": learned[-1].transitions} if learned else {}
    return command, wall, card, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("train", type=Path, help="the store holding the valid_train run")
    parser.add_argument("--run", nargs="+", default=["train"], help="the valid_train run's name in it (or runs')")
    parser.add_argument("--episodes", nargs="+", type=int, default=[1, 2, 6, 12, 24, 60, 200])
    parser.add_argument("--no-given", action="store_true", help="skip the given model's run")
    parser.add_argument("--code", default=".", help="the checkout whose prag is measured")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--limit", type=int, help="the first N valid_seen games only (default: all 140)")
    parser.add_argument("--cpus", default="1", help="taskset's CPU list")
    parser.add_argument("--llm", default="random", help="prag run's --llm, called only where search has no plan "
                        "(default random: a uniform choice among the admissible actions, so that what is measured "
                        "is the model, not the LLM's play; local for the 1.5B)")
    args = parser.parse_args()
    code = Path(args.code).resolve()
    work = Path(tempfile.mkdtemp(prefix="prag-models-"))
    variants = [("given", None)] * (not args.no_given) + [(f"learned-{n}", n) for n in args.episodes]
    rows = []
    for name, count in variants:
        store = work / f"{name}.db"
        shutil.copy(args.train, store)
        kept = keep(store, args.run, count) if count is not None else None
        command, wall, card, sizes = play(code, store, name, "given" if count is None else "learned", args)
        print("$", " ".join(command), flush=True)
        (r,) = card["rounds"]
        rows.append((name, kept, sizes, r, wall))
        print(f"  {name}: SR {r['total_sr']:.1%} ({r['wins']}/{r['episodes']}), {r['steps_per_game']:.2f} steps/game, "
              f"{r['llm_calls_per_episode']:.2f} LLM calls/game, model {sizes}; wall {wall:.0f} s", flush=True)
    print("\n| action model | train episodes | transitions learned from | SR | steps/game | LLM calls/game | wall |")
    print("|---|---|---|---|---|---|---|")
    for name, kept, sizes, r, wall in rows:
        print(f"| {name} | {'-' if kept is None else kept} | {sizes.get('transitions', '-')} | {r['total_sr']:.1%} "
              f"({r['wins']}/{r['episodes']}) | {r['steps_per_game']:.2f} | {r['llm_calls_per_episode']:.2f} | {wall:.0f} s |")
    print(f"\nstores in {work}")


if __name__ == "__main__":
    main()
