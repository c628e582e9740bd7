"""The success-by-round plot of `prag compare`: one line per run, written as a PNG.

Built on `matplotlib.figure.Figure` directly, not pyplot: no GUI backend, no global figure state.
"""
from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from prag.errors import PragError
from prag.run.report import Comparison


def _label_below(y: float, others: list[float], tie_before: bool) -> bool:
    """Put a point's label on the side away from the nearest other run's point at the same round;
    of equal values, the first run's label goes above and the later ones' below."""
    if not others:
        return False
    nearest = min(others, key=lambda other: abs(other - y))
    return nearest > y or (nearest == y and tie_before)


def success_figure(comparison: Comparison) -> Figure:
    """Total SR by round, one labelled line per run that has episodes, values written at the points
    (a train-then-test run's test round is labelled `test`)."""
    figure = Figure(figsize=(7, 4.5), dpi=120, layout="constrained")
    axes = figure.add_subplot()
    runs = [run for run in comparison.runs if comparison.rounds_of(run.id)]
    series = [{r.round: 100 * r.total_sr for r in comparison.rounds_of(run.id)} for run in runs]
    for n, (run, points) in enumerate(zip(runs, series)):
        (line,) = axes.plot(list(points), list(points.values()), marker="o", label=f"{run.id} ({run.mode})")
        for x, y in points.items():
            others = [p[x] for p in series[:n] + series[n + 1 :] if x in p]
            below = _label_below(y, others, tie_before=any(p.get(x) == y for p in series[:n]))
            text = f"{y:.0f}%"
            axes.annotate(
                f"test {text}" if comparison.is_test_round(run.id, x) else text,
                (x, y),
                textcoords="offset points",
                xytext=(0, -14 if below else 7),
                ha="center",
                fontsize=8,
                color=line.get_color(),
            )
    axes.set_title("Success rate by round")
    axes.set_xlabel("round")
    axes.set_ylabel("Total SR (episodes won)")
    axes.set_ylim(0, 105)
    axes.yaxis.set_major_formatter(PercentFormatter(100))
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(alpha=0.3)
    if axes.lines:
        axes.legend(title="run (retrieval mode)", loc="best")
    return figure


def write_success_plot(comparison: Comparison, path: Path) -> None:
    if not comparison.rounds:
        raise PragError("the runs compared have no episodes yet: nothing to plot")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        success_figure(comparison).savefig(path, format="png")
    except OSError as exc:
        raise PragError(f"cannot write the plot to {path} ({exc}): give a writable path") from None
