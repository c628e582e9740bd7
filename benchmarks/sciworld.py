"""ScienceWorld's protocols, played by `prag run` and read back from the results card.

    # (a) zero-shot, TALES' protocol: round 0 on the test variations, empty store, 100 steps
    PYTHONPATH=. taskset -c 1 python benchmarks/sciworld.py --spec sciworld-test --rounds 1 --llm local
    # (c) CLIN's setting: rounds on the test variations themselves
    PYTHONPATH=. taskset -c 1 python benchmarks/sciworld.py --spec sciworld-test --rounds 3 --llm random
    # (b) train rounds on train variations, then the test variations once with the store frozen
    PYTHONPATH=. taskset -c 1 python benchmarks/sciworld.py --spec sciworld-test --train sciworld-train --rounds 2

Prints, per round: mean score (over episodes, and over task types as the papers do; a failed task
counts 0), success rate, LLM calls per step, seconds per step outside the LLM and per LLM call;
then per task type, the score of each round and which sources chose the steps of the last one.
`--from-store STORE --run RUN` reads a run already played (or still playing) instead.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from prag_runs import played

CODE = Path(__file__).resolve().parent.parent


def card_of(store: Path, run: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(CODE)}
    out = subprocess.run([sys.executable, str(CODE / "cli.py"), "compare", str(store), run, "--card", "--json"],
                         env=env, capture_output=True, text=True, check=True)
    card: dict = json.loads(out.stdout)
    return card


def sources_by_type(store: Path, run: str) -> dict[str, Counter[str]]:
    """Steps by source in the run's last round, per task type (read from the store)."""
    from prag.store import Store

    with Store(store, create=False) as opened:
        episodes = [e for e in opened.outcomes([run])]
    last = max(e.round for e in episodes)
    counts: dict[str, Counter[str]] = {}
    for episode in episodes:
        if episode.round == last:
            counts.setdefault(episode.task_type, Counter()).update(episode.sources)
    return counts


def report(card: dict, sources: dict[str, Counter[str]]) -> None:
    p = card["protocol"]
    print(f"{p['spec']}: {p['games']} games, step cap {p['step_cap']}, {p.get('variations')}; model {p['model']}")
    print(f"score: {p.get('score')}")
    if p.get("training"):
        print(f"training: {p['training']}")
    print("| round | games | mean score | task mean score | SR | LLM calls/step | s/step outside the LLM | s/LLM call |")
    print("|---|---|---|---|---|---|---|---|")
    for r in card["rounds"]:
        calls = r["llm_calls_per_episode"] * r["episodes"]
        llm_seconds = (r["llm_seconds_per_step"] or 0) * r["steps"]
        print(f"| {_label(r['round'], p.get('training_rounds', 0))} | {r['episodes']} | {_f(r['mean_score'])} | {_f(r['task_mean_score'])} "
              f"| {r['total_sr']:.1%} | {_f(r['llm_calls_per_step'], 2)} | {_f(r['other_seconds_per_step'], 2)} "
              f"| {_f(llm_seconds / calls if calls else None, 2)} |")
    types = sorted({name for r in card["rounds"] for name in r["by_type"]})
    print("\n| task type | " + " | ".join(_label(r["round"], p.get("training_rounds", 0)) for r in card["rounds"]) + " | steps of the last round by source |")
    print("|---|" + "---|" * (len(card["rounds"]) + 1))
    for name in types:
        cells = [_f(r["by_type"].get(name, {}).get("mean_score")) for r in card["rounds"]]
        chosen = ", ".join(f"{source} {count}" for source, count in sources.get(name, Counter()).most_common())
        print(f"| {name} | " + " | ".join(cells) + f" | {chosen} |")


def _label(round_: int, training_rounds: int) -> str:
    """A round named for protocol (b): the train set's rounds, then the test, the store frozen."""
    if not training_rounds:
        return f"round {round_}"
    return f"train round {round_}" if round_ < training_rounds else "test (frozen)"


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default="sciworld-test")
    parser.add_argument("--train", help="a spec of train variations to iterate on first (protocol b)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--llm", default="local")
    parser.add_argument("--name", default="sciworld")
    parser.add_argument("--store", type=Path, help="where to keep the store (default: a temporary one)")
    parser.add_argument("--from-store", type=Path, help="read a run already played in this store")
    parser.add_argument("--run", help="with --from-store: the run to read")
    parser.add_argument("extra", nargs="*", help="more `prag run` options, after --")
    args = parser.parse_args()
    if args.from_store:
        run = args.run or args.name
        report(card_of(args.from_store, run), sources_by_type(args.from_store, run))
        return
    store = args.store or Path(tempfile.mkdtemp()) / "sciworld.db"
    prag = [sys.executable, str(CODE / "cli.py")]
    command = [*prag, "run", args.spec, "--store", str(store), "--name", args.name, "--rounds", str(args.rounds),
               "--llm", args.llm, *(["--train", args.train] if args.train else []), *args.extra]
    print("$", " ".join(command), flush=True)
    wall, card = played(prag, command, store, args.name, CODE)
    print(f"wall: {wall:.0f} s; store {store}")
    report(card, sources_by_type(store, args.name))


if __name__ == "__main__":
    main()
