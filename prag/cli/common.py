"""What every command shares: error reporting without tracebacks, and the console."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

import typer
from rich.console import Console

from prag.errors import PragError
from prag.llm import LLM

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


# Test-only hook: tests play the real commands with a scripted stand-in LLM by setting this to a
# function of the --llm spec (with monkeypatch in process, or in a script that then calls
# `prag.cli.main()`). Nothing sets it in production: the runner builds the LLM the config names.
test_llm: Callable[[str], LLM] | None = None


def injected_llm(spec: str) -> LLM | None:
    """The test hook's LLM for `spec`, or None when no test set one."""
    return test_llm(spec) if test_llm is not None else None
