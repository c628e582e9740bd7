"""Comparing runs of a store: round-over-round figures, per task type, and transitions.

`compare(store, run_ids)` reads the agent episodes of the runs and computes their metrics
(`prag.run.metrics`); the result renders as rich tables or as a JSON-ready dict. Text from the
store (run ids, specs, task types, the names of sources and readers, the path) goes into the tables
through `prag.text.shown`: `[x]` stays `[x]`, and ESC or a newline shows as `\x1b` or `\n`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from prag.errors import PragError
from prag.run.metrics import RoundMetrics, Transition, round_metrics, transitions
from prag.sources import StepSource
from prag.store import Store
from prag.store.episode_extra import Effort
from prag.store.records import RunRecord
from prag.text import shown


@dataclass(frozen=True)
class Comparison:
    store: str
    runs: list[RunRecord]  # in the order asked for (all runs: oldest first)
    rounds: list[RoundMetrics]  # grouped by run in that order, then by round
    transitions: list[Transition]  # likewise
    states: dict[str, str]  # each run's status as shown: `running (stale)` when its process is gone

    def rounds_of(self, run_id: str) -> list[RoundMetrics]:
        return [r for r in self.rounds if r.run_id == run_id]

    def is_test_round(self, run_id: str, round_: int) -> bool:
        """Whether the round is the test evaluation of a train-then-test run: the runner plays it
        after the `rounds` train rounds, numbered `rounds`, with the store frozen."""
        run = next(run for run in self.runs if run.id == run_id)
        return bool(run.train_spec()) and round_ == run.rounds

    def round_label(self, run_id: str, round_: int) -> str:
        return f"{round_} (test)" if self.is_test_round(run_id, round_) else str(round_)

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "runs": [
                {
                    "id": run.id,
                    "spec": run.spec,
                    "llm": run.llm,
                    "mode": run.mode,
                    "k": run.k,
                    "rounds": run.rounds,
                    "train": run.train_spec(),
                    "status": self.states[run.id],
                }
                for run in self.runs
            ],
            "rounds": [{**r.to_dict(), "test": self.is_test_round(r.run_id, r.round)} for r in self.rounds],
            "transitions": [t.to_dict() for t in self.transitions],
        }


def compare(store: Store, run_ids: Sequence[str] = ()) -> Comparison:
    """Metrics of the named runs (all runs of the store when none are named)."""
    if run_ids:
        runs = [store.run(run_id) for run_id in dict.fromkeys(run_ids)]  # raises on an unknown run
    else:
        runs = store.runs()
        if not runs:
            raise PragError(f"{store.path} has no runs yet: fill it with `prag run`")
    order = {run.id: n for n, run in enumerate(runs)}
    outcomes = store.outcomes(list(order))  # the agent's episodes: corrections are not plays
    return Comparison(
        store=str(store.path),
        runs=runs,
        rounds=sorted(round_metrics(outcomes), key=lambda r: (order[r.run_id], r.round)),
        transitions=sorted(transitions(outcomes), key=lambda t: (order[t.run_id], t.from_round, t.to_round)),
        states=store.run_states(),
    )


# --- rich tables ---------------------------------------------------------------------------


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share:.1%}"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(part: int, whole: int) -> str:
    return f"{_pct(part / whole if whole else None)} ({part}/{whole})"


def runs_table(comparison: Comparison) -> Table:
    table = Table(title=f"runs compared from {shown(comparison.store)}")
    for column in ("run", "mode", "k", "spec", "llm", "rounds played", "status"):
        table.add_column(column)
    for run in comparison.runs:
        played = len(comparison.rounds_of(run.id))
        train = run.train_spec()
        planned = run.rounds + 1 if train else run.rounds  # the test round follows the train rounds
        spec = f"{train} → {run.spec}" if train else run.spec
        table.add_row(
            shown(run.id), shown(run.mode), str(run.k), shown(spec), shown(run.llm), f"{played}/{planned}",
            comparison.states[run.id],
        )
    return table


def rounds_table(comparison: Comparison) -> Table:
    table = Table(
        title="round over round",
        caption="SPL averages over the episodes with a known shortest path; (n) when that is not all of them",
    )
    columns = (
        "run", "mode", "round", "episodes", "Total SR", "Task SR", "SPL", "calls/episode",
        "reuse share", "re-asks/step", "s/step", "LLM s/step",
    )
    for column in columns:
        table.add_column(column, justify="left" if column in ("run", "mode") else "right")
    for run in comparison.runs:
        rounds = comparison.rounds_of(run.id)
        if not rounds:
            table.add_row(shown(run.id), shown(run.mode), "-", "0", *["-"] * (len(columns) - 4), end_section=True)
        for n, r in enumerate(rounds):
            spl = _num(r.spl) if r.success.spl_episodes == r.episodes else f"{_num(r.spl)} ({r.success.spl_episodes})"
            table.add_row(
                shown(run.id),
                shown(run.mode),
                comparison.round_label(run.id, r.round),
                str(r.episodes),
                _ratio(r.success.wins, r.episodes),
                _pct(r.task_sr),
                spl,
                _num(r.calls_per_episode, 1),
                _pct(r.reuse_share),
                _num(r.reasks_per_step),
                _num(r.seconds_per_step),
                _num(r.llm_seconds_per_step),
                end_section=n == len(rounds) - 1,
            )
    return table


def scores_table(comparison: Comparison) -> Table:
    """Families that keep a score (ScienceWorld): mean score per round, over the episodes and
    over the task types (the papers' figure), beside the success rate and LLM calls per step."""
    return _round_rows(
        comparison, "scores (0-100; a failed episode counts 0): mean over episodes, mean over task types",
        ["mean score", "task mean score", "Total SR", "calls/step"],
        lambda r: [_num(r.mean_score, 1), _num(r.task_mean_score, 1), _pct(r.total_sr), _num(r.calls_per_step)],
    )


def side_by_side_table(comparison: Comparison) -> Table:
    """Total SR by round, one column per run: the shape of the comparison at a glance."""
    table = Table(title="Total SR by round")
    table.add_column("round", justify="right")
    for run in comparison.runs:
        table.add_column(f"{shown(run.id)} ({shown(run.mode)})", justify="right")
    by_key = {(r.run_id, r.round): r for r in comparison.rounds}
    for round_ in sorted({r.round for r in comparison.rounds}):
        cells = []
        for run in comparison.runs:
            figures = by_key.get((run.id, round_))
            test = " (test)" if comparison.is_test_round(run.id, round_) else ""
            cells.append(f"{_pct(figures.total_sr)}{test}" if figures else "-")
        table.add_row(str(round_), *cells)
    return table


def types_table(comparison: Comparison) -> Table:
    """Success rate (wins/episodes), SPL and mean score (where kept) per task type, one column per round."""
    table = Table(title="per task type: success rate (wins/episodes), SPL, mean score where the family keeps one")
    rounds = sorted({r.round for r in comparison.rounds})
    table.add_column("run")
    table.add_column("task type")
    for round_ in rounds:
        table.add_column(f"round {round_}", justify="right")
    for run in comparison.runs:
        by_round = {r.round: {t.task_type: t.success for t in r.by_type} for r in comparison.rounds_of(run.id)}
        names = sorted({name for types in by_round.values() for name in types})
        for n, name in enumerate(names):
            cells = []
            for round_ in rounds:
                figures = by_round.get(round_, {}).get(name)
                score = f"\nscore {_num(figures.score, 1)}" if figures and figures.score is not None else ""
                cells.append(
                    f"{_ratio(figures.wins, figures.episodes)}\nSPL {_num(figures.spl)}{score}" if figures else "-"
                )
            table.add_row(shown(run.id), shown(name), *cells, end_section=n == len(names) - 1)
    return table


def _round_rows(comparison: Comparison, title: str, columns: Sequence[str], cells: Callable[[RoundMetrics], list[str]]) -> Table:
    """A table of one row per run and round: the run, the round, then `cells` of its figures."""
    table = Table(title=title)
    table.add_column("run")
    table.add_column("round", justify="right")
    for column in columns:  # names of step sources and readers, as the episodes recorded them
        table.add_column(shown(column), justify="right")
    for run in comparison.runs:
        rounds = comparison.rounds_of(run.id)
        for n, r in enumerate(rounds):
            table.add_row(shown(run.id), comparison.round_label(run.id, r.round), *cells(r),
                          end_section=n == len(rounds) - 1)
    return table


def sources_table(comparison: Comparison) -> Table:
    """Actions taken per round, by the step source that chose them (one column each), in the
    registry's order (prag.sources); names it does not know, from another prag, after them."""
    order: dict[str, int] = {source: n for n, source in enumerate(StepSource)}
    names = sorted({name for r in comparison.rounds for name, _ in r.sources}, key=lambda name: (order.get(name, len(order)), name))
    return _round_rows(comparison, "steps by source (who chose each action)", names,
                       lambda r: [_ratio(dict(r.sources).get(name, 0), r.steps) for name in names])


def readings_table(comparison: Comparison) -> Table:
    """How each round's goals were read: episodes by the reader whose reading they played under,
    the readings dropped as shown wrong (prag.agent.goals.readers), and, where the goal was worded
    other than the family's own sentence, how many first and last readings were right."""
    names = sorted({name for r in comparison.rounds for name, _ in r.readings})

    def cells(r: RoundMetrics) -> list[str]:
        worded, first, last = r.reading_scores
        return [*(_ratio(dict(r.readings).get(name, 0), r.episodes) for name in names), str(r.dropped_readings),
                *(_ratio(right, worded) if worded else "-" for right in (first, last))]

    return _round_rows(comparison, "goals read by (episodes), readings dropped",
                       [*names, "dropped", "first read right", "last read right"], cells)


def effort_table(comparison: Comparison) -> Table:
    """A person's effort per round (Soar ITL): instructions, words, yes/no answers, per episode."""
    return _round_rows(
        comparison, "a person's effort per episode", ["instructions", "words", "yes/no answers"],
        lambda r: [_num(count / r.episodes, 1) for count in (r.effort.instructions, r.effort.words, r.effort.answers)],
    )


def transitions_table(comparison: Comparison) -> Table:
    table = Table(title="transitions between rounds (tasks matched by id)")
    for column in ("run", "r", "r+m", "won in r, then won in r+m", "lost in r, then won in r+m"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for t in comparison.transitions:
        table.add_row(
            shown(t.run_id),
            str(t.from_round),
            comparison.round_label(t.run_id, t.to_round),
            _ratio(t.succeeded_then_won, t.succeeded),
            _ratio(t.failed_then_won, t.failed),
        )
    return table


def tables(comparison: Comparison) -> list[Table]:
    """Every table of `prag compare`, in the order it prints them."""
    shown = [runs_table(comparison), rounds_table(comparison)]
    if any(r.mean_score is not None for r in comparison.rounds):
        shown.append(scores_table(comparison))
    if len(comparison.runs) > 1:
        shown.append(side_by_side_table(comparison))
    shown += [types_table(comparison), sources_table(comparison)]
    if any(name != "template" for r in comparison.rounds for name, _ in r.readings):  # goals in people's words
        shown.append(readings_table(comparison))
    if any(r.effort != Effort() for r in comparison.rounds):  # only runs a person took part in
        shown.append(effort_table(comparison))
    return shown + [transitions_table(comparison)]
