"""What every command shares: error reporting without tracebacks, Ctrl-C, the consoles, and the
LLM server options."""
from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, TypeVar

import typer
from rich.console import Console

from prag.errors import PragError, disk_full
from prag.llm import LLM, check_spec
from prag.llm.base import timeout_problem
from prag.names import BadName, check_label, check_run_id
from prag.signals import exit_status, stopped_by
from prag.text import shown

if TYPE_CHECKING:  # every command imports this module: the run's settings and the envs load where used
    from prag.envs.base import Task
    from prag.run.config import ExecutionConfig

# No emoji codes: `:smile:` in a goal or a run id is shown as it is (prag.text.shown does the markup).
console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)

F = TypeVar("F", bound=Callable[..., Any])


def guarded(fn: F) -> F:
    """Turn a PragError (or a full disk: prag.errors.disk_full) into `Error: …` on stderr and exit
    code 1, and Ctrl-C (or SIGTERM, SIGHUP: prag.signals) into `interrupted` and the signal's exit
    code (130, 143, 129), with no traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (PragError, OSError) as exc:
            found = exc if isinstance(exc, PragError) else disk_full(exc)
            if found is None:
                raise
            error(str(found))
            raise typer.Exit(1) from None
        except KeyboardInterrupt as stop:
            interrupted(stop)
            raise typer.Exit(exit_status(stop)) from None

    return wrapper  # type: ignore[return-value]


def error(message: str) -> None:
    """Print `Error: message` on stderr; the message is shown as it is (`[params]` stays), its
    lines as lines, and the control characters of what it quotes (a run id, a transcript) visible."""
    err_console.print(f"[bold red]Error:[/] {shown(message, lines=True)}", highlight=False, soft_wrap=True)


def interrupted(stop: KeyboardInterrupt, what: str | None = None) -> None:
    """Tell on stderr that a signal stopped the command (`interrupted`, or `interrupted by
    SIGTERM`), and what that left when it is known."""
    said = stopped_by(stop)
    err_console.print(f"{said}: {shown(what, lines=True)}" if what else said, highlight=False, soft_wrap=True)


def run_id_option(value: str | None) -> str | None:
    """A run's id given as an option (`prag run --name`), checked as it enters: it names a folder."""
    return _checked(check_run_id, value)


def label_option(value: str | None) -> str | None:
    """Another name given as an option (`prag train-asker --name`), checked as it enters."""
    return _checked(lambda name: check_label(name, "the name"), value)


def _checked(check: Callable[[str], str], value: str | None) -> str | None:
    try:
        return value if value is None else check(value)
    except BadName as exc:
        raise typer.BadParameter(str(exc)) from None


def _seconds(value: float) -> float:
    problem = timeout_problem(value)
    if problem is not None:
        raise typer.BadParameter(problem)
    return value


# The store argument of the commands that read or change one.
StoreArg = Annotated[Path, typer.Argument(help="Path of the experience store (SQLite file).")]

# The options of every command that talks to an LLM server (a local model ignores them).
LLMTimeoutOpt = Annotated[
    float,
    typer.Option("--llm-timeout", callback=_seconds, help="Seconds one call to an LLM server may take in all, its retries and their pauses included."),
]
LLMRetriesOpt = Annotated[
    int, typer.Option("--llm-retries", min=0, help="Further requests after one to an LLM server failed, while --llm-timeout allows.")
]


# Test-only hook: tests play the real commands with a scripted stand-in LLM by setting this to a
# function of the --llm spec (with monkeypatch in process, or in a script that then calls
# `prag.cli.main()`). Nothing sets it in production: the runner builds the LLM the config names.
test_llm: Callable[[str], LLM] | None = None


def injected_llm(spec: str) -> LLM | None:
    """The test hook's LLM for `spec`, or None when no test set one."""
    return test_llm(spec) if test_llm is not None else None


def check_llm(spec: str, execution: ExecutionConfig) -> None:
    """Refuse an `--llm` spec that cannot be built, before anything is created (no model is
    loaded); a test's stand-in LLM needs no check."""
    if test_llm is None:
        where = {"base_url": execution.llm_urls[0]} if execution.llm_urls else {}  # the key a server needs is its own
        check_spec(spec, timeout=execution.llm_timeout, retries=execution.llm_retries, **where)


def task_at(spec_name: str, tasks: list[Task], index: int) -> Task:
    """The task `--task INDEX` names; an index past the set's end is an error giving the range."""
    if not 0 <= index < len(tasks):
        raise PragError(f"{spec_name} has {len(tasks)} tasks: give --task from 0 to {len(tasks) - 1}")
    return tasks[index]


def sources_help(sources: Iterable[str]) -> str:
    """The knowledge sources, each with what it gives (prag.sources, prag.agent.sources.chain), as `--sources` help lists them."""
    from prag.agent.sources.chain import describe  # the agent's modules: not for `prag stats` and `compare`, which import this one

    return "; ".join(f"{source} ({describe(source)})" for source in sources)
