"""Do two runs play the same? Compares the stored actions and outcomes of every episode.

Used to show that a refactoring changed no behaviour: record a run with the old code, the same
run with the new, then

    python benchmarks/behaviour.py BEFORE.db RUN_A AFTER.db RUN_B

prints one line per (round, task) that differs (first differing step, both actions) and a
summary; exits 1 when anything differs. The stores are opened read-only with plain SQLite, so
that a store written by an older prag is compared as it is, never migrated.
"""
from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

Episode = tuple[bool, list[str]]  # won, actions in order


def episodes(path: Path, run_id: str) -> dict[tuple[int, str], Episode]:
    """(round, task id) -> (won, actions) of the agent's episodes of one run."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "select e.round, e.task_id, e.won, s.action from episodes e join steps s on s.episode_id = e.id "
        "where e.run_id = ? and e.source = 'agent' and s.t > 0 order by e.round, e.task_id, s.t",
        [run_id],
    ).fetchall()
    out: dict[tuple[int, str], Episode] = {}
    for round_, task_id, won, action in rows:
        out.setdefault((round_, task_id), (bool(won), []))[1].append(action)
    return out


def differences(before: dict[tuple[int, str], Episode], after: dict[tuple[int, str], Episode]) -> list[str]:
    """One line per episode that is missing on one side or played differently."""
    lines = []
    for key in sorted(before.keys() | after.keys()):
        round_, task = key
        if key not in before or key not in after:
            lines.append(f"round {round_} {task}: only in {'after' if key not in before else 'before'}")
            continue
        (won_a, acts_a), (won_b, acts_b) = before[key], after[key]
        if acts_a != acts_b:
            t = next((i for i, (a, b) in enumerate(zip(acts_a, acts_b)) if a != b), min(len(acts_a), len(acts_b)))
            lines.append(
                f"round {round_} {task}: step {t + 1} differs: {acts_a[t] if t < len(acts_a) else '(end)'!r} "
                f"vs {acts_b[t] if t < len(acts_b) else '(end)'!r}"
            )
        elif won_a != won_b:
            lines.append(f"round {round_} {task}: same actions, won {won_a} vs {won_b}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__)
        return 2
    before = episodes(Path(argv[0]), argv[1])
    after = episodes(Path(argv[2]), argv[3])
    lines = differences(before, after)
    for line in lines:
        print(line)
    steps = sum(len(actions) for _, actions in before.values())
    won = (sum(w for w, _ in before.values()), sum(w for w, _ in after.values()))
    print(
        f"{len(before)} episodes before, {len(after)} after ({steps} actions before); "
        f"won {won[0]} before, {won[1]} after; {len(lines)} differ"
    )
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
