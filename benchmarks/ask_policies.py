"""When to ask the LLM: the ask policies side by side, round over round (issue 12's table).

Runs are played with `prag run` (one per policy, all from one shared round 0), e.g.

    prag run alfworld-mini --rounds 1 --ask always --name r0
    prag run alfworld-mini --rounds 3 --ask hard-coded --round0-from r0 --name hard
    prag run alfworld-mini --rounds 3 --ask always --round0-from r0 --name always

then this script prints, per run and round: Total SR, M11 (of the tasks won in round r - 1,
the share won again in round r), LLM calls per episode and per success, seconds per step and
the round's wall time (the sum of its episodes' seconds: episodes run one after another):

    python benchmarks/ask_policies.py stores/default.db always hard [--json]
"""
from __future__ import annotations

import json
import sys

from prag.run.report import compare
from prag.store import Store


def rows(store_path: str, run_ids: list[str]) -> list[dict[str, object]]:
    """One row per (run, round) with the figures above."""
    with Store(store_path, create=False) as store:
        comparison = compare(store, run_ids)
    kept = {(t.run_id, t.to_round): t for t in comparison.transitions if t.to_round == t.from_round + 1}
    out = []
    for r in comparison.rounds:
        transition = kept.get((r.run_id, r.round))
        won = r.success.wins
        out.append({
            "run": r.run_id,
            "round": r.round,
            "episodes": r.episodes,
            "won": won,
            "total_sr": r.total_sr,
            "m11": transition.kept_share if transition else None,
            "calls_per_episode": r.calls_per_episode,
            "calls_per_success": r.cost.calls / won if won else None,
            "seconds_per_step": r.seconds_per_step,
            "round_minutes": r.seconds / 60,
        })
    return out


def _fmt(value: object, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "%":
        return f"{float(value):.0%}"  # type: ignore[arg-type]
    return f"{float(value):.1f}"  # type: ignore[arg-type]


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    if len(args) < 2:
        print(__doc__)
        return 2
    table = rows(args[0], args[1:])
    if as_json:
        print(json.dumps(table, indent=2))
        return 0
    print("run | round | won | Total SR | M11 | calls/episode | calls/success | s/step | round min")
    print("---|---|---|---|---|---|---|---|---")
    for row in table:
        print(
            f"{row['run']} | {row['round']} | {row['won']}/{row['episodes']} | {_fmt(row['total_sr'], '%')} | "
            f"{_fmt(row['m11'], '%')} | {_fmt(row['calls_per_episode'], '')} | {_fmt(row['calls_per_success'], '')} | "
            f"{_fmt(row['seconds_per_step'], '')} | {_fmt(row['round_minutes'], '')}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
