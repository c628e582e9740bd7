"""The command line: a thin layer over the library (one module per command group)."""
from __future__ import annotations

import importlib
import logging
import sys

import typer

from prag.signals import exit_status, stop_on_signals, stopped_by
from prag.text import shown

app = typer.Typer(
    help="prag: a progressive retrieval planner for embodied everyday tasks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


# The module of each top-level command. A command imports its own module alone: `prag stats`
# read 3 s of imports (the runner, the console, PPO's trainer, the env families) before it printed.
COMMAND_MODULES = {
    "run": "run_cmd",
    "compare": "compare_cmd",
    "query": "query_cmd",
    "stats": "store_cmd",
    "export": "store_cmd",
    "import": "store_cmd",
    "delete": "store_cmd",
    "envs": "envs_cmd",
    "correct": "correct_cmd",
    "corrections": "correct_cmd",
    "console": "console_cmd",
    "model": "model_cmd",
    "train-asker": "asker_cmd",
}


@app.callback()
def _group() -> None:
    """prag: a progressive retrieval planner for embodied everyday tasks."""
    # A group even when one command's module is registered: typer would run a lone command
    # directly and read its name as its first argument.


def _register(command: str | None = None) -> None:
    """Add `command`'s module's commands to `app`, or every module's (for `--help`, an unknown
    name, or tests); each module adds its commands when imported."""
    module = COMMAND_MODULES.get(command or "")
    for name in [module] if module else sorted(set(COMMAND_MODULES.values())):
        importlib.import_module(f"prag.cli.{name}")


class _ShownFormatter(logging.Formatter):
    """A log line with the control characters of what it quotes (a correction's transcript, a
    path) made visible, as everything prag prints (prag.text.shown)."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(super().format(record), lines=True, markup=False)


def _show_warnings() -> None:
    """The library's warnings (a correction left out of a run, an index rebuilt) on stderr, as
    Python would print them, but through `_ShownFormatter`."""
    handler = logging.StreamHandler()
    handler.setFormatter(_ShownFormatter("%(message)s"))
    handler.setLevel(logging.WARNING)
    logging.getLogger("prag").addHandler(handler)


def main() -> None:
    """The `prag` console script. SIGTERM and SIGHUP stop every command as Ctrl-C does
    (prag.signals); one while the commands load (they import torch and friends) exits as one in
    a command does: `interrupted`, the signal's exit code, no traceback. `prag run` plays in a
    child process that reports its crash (prag.cli.supervisor)."""
    try:
        stop_on_signals()
        _show_warnings()
        command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
        if command == "run":
            from prag.cli.supervisor import supervise

            supervise()  # from here on this is the run's process: its supervisor never returns
        _register(command)
        app()
    except KeyboardInterrupt as stop:
        # Plain stderr: the interrupt may have cut the import of rich or of prag.cli.common.
        sys.stderr.write(f"{stopped_by(stop)}\n")
        raise SystemExit(exit_status(stop)) from None
