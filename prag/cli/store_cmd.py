"""`prag stats`, `prag export`, `prag import`, `prag delete`: what a store holds, moving and
removing experience. (`prag query` is prag.cli.query_cmd: its retrieval and encoder load for it alone.)"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.table import Table

from prag.cli import app
from prag.cli.common import StoreArg, console, err_console, guarded
from prag.cli.layout import show
from prag.errors import PragError
from prag.files import checked_file
from prag.store import Store
from prag.store.database import damaged
from prag.store.stats import StoreStats, store_stats
from prag.text import shown

if TYPE_CHECKING:
    from prag.store.exchange import ImportResult

# What only `export` and `import` need is imported by them (the pydantic line checks): `stats`
# answers sooner.


@app.command()
@guarded
def stats(
    store_path: StoreArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Runs (a running one whose process is gone: `running (stale)`), success per round, steps,
    text per episode, embedding cache, database size and integrity."""
    with Store(store_path, create=False) as store:
        figures = store_stats(store)
    if as_json:
        console.print_json(json.dumps(figures.to_dict()))
    else:
        _print_stats(figures, store_path)
    if figures.integrity != "ok":
        raise damaged(store_path, figures.integrity)


def _print_stats(figures: StoreStats, store_path: Path) -> None:
    runs = Table(title=f"runs in {shown(str(store_path))}")
    for column in ("run", "spec", "llm", "mode", "k", "status"):
        runs.add_column(column)
    for run in figures.runs:
        runs.add_row(*(shown(str(run[key])) for key in ("id", "spec", "llm", "mode", "k", "status")))
    show(console, runs)
    rounds = Table(title="success per round")
    for column in ("run", "round", "episodes", "won", "success", "steps"):
        rounds.add_column(column)
    for row in figures.rounds:
        rounds.add_row(shown(row.run_id), str(row.round), str(row.episodes), str(row.won), f"{row.success_rate:.1%}", str(row.steps))
    show(console, rounds)
    summary = Table(show_header=False, title="store")
    summary.add_row("episodes", str(figures.episodes))
    summary.add_row("steps", str(figures.steps))
    summary.add_row("corrections", str(figures.corrections))
    summary.add_row("trajectory text per episode", f"{figures.bytes_per_episode / 1024:.1f} KB")
    for name, count in figures.vectors.items():
        cache = figures.cache.get(name, {"encoded": 0, "hits": 0})
        summary.add_row(f"vectors ({shown(name)})", f"{count} stored, {cache['encoded']} encoded, {cache['hits']} cache hits")
    for name, answers in figures.answers.items():
        summary.add_row(
            f"LLM answers ({shown(name)})",
            f"{answers['rows']} stored, {answers['hits']} cache hits, {answers['misses']} misses, "
            f"{answers['saved_seconds']:.0f} s of model time saved",
        )
    summary.add_row("database size", f"{figures.db_bytes / 1024:.0f} KB")
    summary.add_row("schema version", str(figures.schema_version))
    summary.add_row("integrity", shown(figures.integrity))
    show(console, summary)
    if figures.places:
        places = Table(title="where things are found (episodes that saw them there)")
        for column in ("kind", "episodes", "best places"):
            places.add_column(column, overflow="fold", no_wrap=column != "best places")
        for seen in figures.places:
            best = ", ".join(f"{place} {n}" for place, n in seen["places"])
            places.add_row(shown(seen["kind"]), str(seen["episodes"]), shown(best))
        show(console, places)


@app.command("export")
@guarded
def export_(
    store_path: StoreArg,
    run: Annotated[Optional[str], typer.Option("--run", help="Export this run only (without corrections).")] = None,
) -> None:
    """Write the store as JSON Lines to standard output: runs, episodes (steps, vectors), corrections."""
    from prag.store.exchange import write_export

    with Store(store_path, create=False) as store:
        write_export(store, sys.stdout, run)


@app.command("import")
@guarded
def import_(
    store_path: Annotated[Path, typer.Argument(help="Store to import into (created if missing).")],
    source: Annotated[str, typer.Argument(help="JSON Lines file from `prag export`, or - for stdin.")],
    skip_bad: Annotated[bool, typer.Option("--skip-bad", help="Import the good lines of a file with bad ones, and list the bad.")] = False,
) -> None:
    """Read JSON Lines into a store, every line checked first; what is already there is skipped.

    A file with a bad line imports nothing (each bad line is listed as FILE:LINE: what is
    wrong), unless --skip-bad asks to import its good lines.
    """
    from prag.store.exchange import JSONL, import_file

    if source != "-":
        checked_file(source, f"{JSONL}, or - for standard input")
    new = not store_path.exists()
    try:
        with Store(store_path) as store:
            if source == "-":
                with tempfile.NamedTemporaryFile("w+b", suffix=".jsonl") as spool:
                    shutil.copyfileobj(sys.stdin.buffer, spool)  # read twice: checked first, then written
                    spool.flush()
                    if not spool.tell():
                        raise PragError(f"standard input is empty: give {JSONL} on it, or its path")
                    result = import_file(store, spool.name, skip_bad=skip_bad, name="standard input")
            else:
                result = import_file(store, source, skip_bad=skip_bad)
    except PragError:
        if new:  # a failed import into a new store leaves no store behind
            for left in (Path(f"{store_path}{suffix}") for suffix in ("", "-wal", "-shm")):
                if left.exists():  # not unlink(missing_ok): a read-only place refuses even that
                    left.unlink()
        raise
    console.print(_imported(result), highlight=False)
    if result.bad:
        err_console.print(f"skipped {len(result.bad)} bad lines:", highlight=False)
        for line in result.bad:
            err_console.print(f"  {shown(line)}", highlight=False)


def _imported(result: ImportResult) -> str:
    return (
        f"imported {result.episodes} episodes ({result.runs} new runs), {result.corrections} corrections, "
        f"{result.prior_loads} prior loads, {result.ask_policies} ask policies, {result.action_models} action models; skipped {result.skipped} already stored"
    )


@app.command()
@guarded
def delete(
    store_path: StoreArg,
    episode: Annotated[Optional[int], typer.Option("--episode", help="Delete this episode (with its steps).")] = None,
    run: Annotated[Optional[str], typer.Option("--run", help="Delete this run with all its episodes.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation (for scripts).")] = False,
) -> None:
    """Delete an episode or a whole run, in one transaction, with the vectors nothing else uses.

    A vector is kept while any episode, step or correction still has its text; the embedding
    cache's counts of texts encoded and cache hits are history and stay as they are.
    """
    if (episode is None) == (run is None):
        raise PragError("give --episode ID or --run RUN (one of them): see `prag stats` or `prag query` for both")
    with Store(store_path, create=False) as store:
        if episode is not None:
            found = store.episode(episode)
            what = (f"episode {episode} ({found.task_id}, run {found.run_id} round {found.round}, "
                    f"{found.n_actions} actions)")
        else:
            assert run is not None
            what = f"run {store.run(run).id} with its {len(store.outcomes([run]))} episodes"
        if not yes:
            try:
                agreed = typer.confirm(f"delete {shown(what, markup=False)} from {store_path}?", default=False)
            except typer.Abort:  # no answer at all (end of input)
                agreed = False
            if not agreed:
                raise PragError(f"nothing deleted: answer y to delete {what}, or pass --yes")
        gone = store.delete_episode(episode) if episode is not None else store.delete_run(run or "")
    console.print(shown(f"deleted {what}: {gone.episodes} episodes, {gone.steps} steps, "
                        f"{gone.vectors} vectors no other text uses"), highlight=False)
