"""`prag compare`: success round over round, per task type and between rounds, for runs of a store."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from prag.cli import app
from prag.cli.common import console, guarded
from prag.cli.layout import show
from prag.errors import PragError
from prag.run.report import compare as compare_runs
from prag.run.report import tables
from prag.store import Store
from prag.text import shown


@app.command()
@guarded
def compare(
    store_path: Annotated[Path, typer.Argument(metavar="STORE", help="Path of the experience store (SQLite file).")],
    runs: Annotated[Optional[list[str]], typer.Argument(metavar="RUN", help="Runs to compare (default: all runs in the store).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="Also write a PNG of success rate by round here.")] = None,
    card: Annotated[bool, typer.Option("--card", help="Print one run's results card (Markdown; JSON with --json): the protocol and the figures papers report.")] = False,
) -> None:
    """Total SR, Task SR, SPL and cost per round, per task type, and the round-to-round transitions."""
    if card:
        if not runs or len(runs) != 1 or plot is not None:
            raise PragError("--card describes one run: give STORE and one RUN, without --plot")
        from prag.run.card import results_card  # the card reads the run's whole config: the agent's modules load

        with Store(store_path, create=False) as store:
            results = results_card(store, runs[0])
        if as_json:
            console.print_json(json.dumps(results.to_dict()))
        else:
            console.print(shown(results.markdown(), lines=True), highlight=False, soft_wrap=True)
        return
    with Store(store_path, create=False) as store:
        comparison = compare_runs(store, runs or [])
    if plot is not None:
        from prag.run.plot import (
            write_success_plot,  # matplotlib loads only when a plot is asked for
        )

        write_success_plot(comparison, plot)
    if as_json:
        console.print_json(json.dumps(comparison.to_dict()))
    else:
        for table in tables(comparison):
            show(console, table)
    if plot is not None and not as_json:
        console.print(shown(f"plot written to {plot}"), highlight=False, soft_wrap=True)
