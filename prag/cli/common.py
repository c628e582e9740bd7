"""What every command shares: error reporting without tracebacks, and the console."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

import typer
from rich.console import Console

from prag.errors import PragError

console = Console()
err_console = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def guarded(fn: F) -> F:
    """Turn a PragError into `Error: …` on stderr and exit code 1, with no traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except PragError as exc:
            err_console.print(f"[bold red]Error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]
