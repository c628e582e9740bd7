"""`prag envs list` and `prag envs play`: the task-set specs, and playing one task by hand."""
from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table

from prag.cli import app
from prag.cli.common import console, guarded, task_at
from prag.cli.layout import show
from prag.envs.base import Environment, Observation
from prag.envs.spec import list_specs, load_spec
from prag.errors import PragError
from prag.text import shown

envs_app = typer.Typer(help="Task-set specs (envs/*.toml): list them, play a task by hand.", no_args_is_help=True)
app.add_typer(envs_app, name="envs")

QUIT = "quit"


@envs_app.command("list")
@guarded
def list_cmd() -> None:
    """Show the task-set specs found in ./envs and the checkout's envs/."""
    table = Table(title="task-set specs")
    for column in ("name", "env", "max steps", "description"):
        table.add_column(column)
    for path in list_specs():
        try:
            spec = load_spec(str(path))
        except PragError as exc:  # one broken spec should not hide the others
            table.add_row(shown(path.stem), "?", "?", f"[red]invalid: {shown(str(exc))}[/]")
            continue
        table.add_row(shown(spec.name), shown(spec.env), str(spec.max_steps), shown(spec.description))
    show(console, table)


@envs_app.command("play")
@guarded
def play(
    spec_name: Annotated[str, typer.Argument(metavar="SPEC", help="A spec name from `prag envs list`, or a .toml path.")],
    task: Annotated[int, typer.Option("--task", min=0, help="Index of the task in the spec's task list.")] = 0,
) -> None:
    """Play one task in the terminal: type an action's number or its text, `quit` to stop.

    Reads actions from standard input, one a line, so it can be scripted.
    """
    spec = load_spec(spec_name)
    source = spec.open()
    chosen = task_at(spec.name, source.tasks(), task)
    env = source.make(chosen)
    try:
        obs = env.reset()
        console.print(f"[bold]{shown(spec.name)}[/] task {task}: {shown(chosen.task_id)} ({shown(chosen.task_type)})")
        console.print(f"[bold]Goal:[/] {shown(obs.goal)}")
        won, steps = _play(env, obs)
        console.print(
            f"[bold]{'won' if won else 'not won'}[/] after {steps} steps "
            f"(shortest known plan: {env.shortest_path_length}, step cap: {spec.max_steps})"
        )
    finally:
        env.close()


def _play(env: Environment, obs: Observation) -> tuple[bool, int]:
    """Show, ask, step until won, done (the spec's step cap ends it too) or quit; returns (won, steps taken)."""
    count = 0
    while True:
        _show(obs)
        if obs.won or obs.done:
            return obs.won, count
        action = _ask(obs.admissible)
        if action is None:
            return False, count
        obs = env.step(action)
        count += 1
        console.print(f"[dim]> {shown(action)}[/]")


def _show(obs: Observation) -> None:
    console.print(shown(obs.text, lines=True))
    console.print(f"[bold]Scene graph:[/]\n{shown(obs.scene_text, lines=True)}")
    if not (obs.won or obs.done):
        for number, action in enumerate(obs.admissible, start=1):
            console.print(f"  {number:>3}. {shown(action)}")


def _ask(admissible: list[str]) -> str | None:
    """The next action: a number from the list, or free text; None on `quit` or end of input."""
    while True:
        console.print(f"action (1-{len(admissible)}, text, or {QUIT})> ", end="")
        line = sys.stdin.readline()
        if not line:
            return None
        answer = line.strip()
        if answer == QUIT:
            return None
        if not answer:
            continue
        if answer.isdigit():
            index = int(answer)
            if 1 <= index <= len(admissible):
                return admissible[index - 1]
            console.print(f"[red]no action numbered {index}[/]")
            continue
        return answer
