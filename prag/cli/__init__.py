"""The command line: a thin layer over the library (one module per command group)."""
from __future__ import annotations

import sys

import typer

from prag.signals import exit_status, stop_on_signals, stopped_by

app = typer.Typer(
    help="prag: a progressive retrieval planner for embodied everyday tasks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # Each module adds its commands to `app`; imported here so `prag --help` lists them all.
    from prag.cli import (  # noqa: F401
        asker_cmd,
        compare_cmd,
        console_cmd,
        correct_cmd,
        envs_cmd,
        model_cmd,
        run_cmd,
        store_cmd,
    )


def main() -> None:
    """The `prag` console script. SIGTERM and SIGHUP stop every command as Ctrl-C does
    (prag.signals); one while the commands load (they import torch and friends) exits as one in
    a command does: `interrupted`, the signal's exit code, no traceback."""
    try:
        stop_on_signals()
        _register()
        app()
    except KeyboardInterrupt as stop:
        # Plain stderr: the interrupt may have cut the import of rich or of prag.cli.common.
        sys.stderr.write(f"{stopped_by(stop)}\n")
        raise SystemExit(exit_status(stop)) from None
