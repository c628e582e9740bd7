"""Every command and sub-command of `prag` has help: a docstring, and `--help` that works."""
from __future__ import annotations

from typing import Any

import pytest
import typer.main
from typer.core import TyperGroup
from typer.testing import CliRunner

from prag.cli import _register, app

_register()


def commands(group: TyperGroup, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command under `group`, sub-commands of groups included, with its words on the command line."""
    found: list[tuple[tuple[str, ...], Any]] = []
    for name, command in sorted(group.commands.items()):
        found.append(((*path, name), command))
        if isinstance(command, TyperGroup):
            found += commands(command, (*path, name))
    return found


ROOT = typer.main.get_command(app)
assert isinstance(ROOT, TyperGroup)
ALL = commands(ROOT)


def test_the_groups_and_their_commands_are_all_found():
    names = {" ".join(path) for path, _ in ALL}
    assert {"run", "envs", "envs list", "envs play", "corrections", "corrections list", "corrections show"} <= names


@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(path) for path, _ in ALL])
def test_every_command_has_help(path, command):
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="prag", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert f"Usage: prag {' '.join(path)}" in " ".join(result.output.split())
    assert (command.help or "").strip(), f"prag {' '.join(path)} has no help text"
    assert command.help.strip().splitlines()[0] in result.output
    undocumented = [p.name for p in command.params if p.param_type_name == "option" and not p.help and p.name != "help"]
    assert not undocumented, f"prag {' '.join(path)}: options without help: {undocumented}"
