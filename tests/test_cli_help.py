"""Every command and sub-command of `prag` has help (a docstring, and `--help` that works) and docs:
a section with every option in the generated CLI reference (docs/cli.md), a row in the README's
Commands table."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.core import TyperGroup
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.cli.reference import argument_name

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


# The docs: every command and option in the generated CLI reference, every command in the README.
ROOT_DIR = Path(__file__).resolve().parents[1]
README = (ROOT_DIR / "README.md").read_text(encoding="utf-8")


def test_the_cli_reference_is_what_the_commands_say():
    """docs/cli.md is generated from the commands; a command or option added, renamed or re-worded
    without regenerating it fails here."""
    from prag.cli import reference

    written = reference.DOCS_CLI.read_text(encoding="utf-8") if reference.DOCS_CLI.exists() else ""
    assert written == reference.reference(), (
        "docs/cli.md is out of date with the commands: run `python -m prag.cli.reference --write` and commit it")


def _reference_section(path: tuple[str, ...]) -> str:
    text = (ROOT_DIR / "docs" / "cli.md").read_text(encoding="utf-8")
    heading = f"## `prag {' '.join(path)}`\n"
    assert heading in text, f"prag {' '.join(path)} is not in docs/cli.md"
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(path) for path, _ in ALL])
def test_every_command_and_option_is_in_the_cli_reference(path, command):
    section = _reference_section(path)
    for param in command.params:
        if param.name == "help" or getattr(param, "hidden", False):
            continue
        names = [argument_name(param)] if param.param_type_name == "argument" else [*param.opts, *param.secondary_opts]
        for name in names:
            assert f"`{name}`" in section, f"prag {' '.join(path)}: {name} is not in its section of docs/cli.md"


def _readme_commands_table() -> list[str]:
    section = README.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| `prag ")]


@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(path) for path, _ in ALL])
def test_every_command_is_in_the_readme_commands_table(path, command):
    """A row names the command (`prag NAME …`); a sub-command's row names its group and it."""
    first, *rest = path
    rows = [row for row in _readme_commands_table() if re.search(rf"`prag {re.escape(first)}\b", row)]
    assert rows, f"the README's Commands table has no row for prag {first}"
    if rest:
        cell = " ".join(row.split("|")[1] for row in rows)
        assert re.search(rf"\b{re.escape(rest[-1])}\b", cell), f"the README's Commands table does not name prag {' '.join(path)}"


def test_each_readme_command_row_links_a_guide_page_that_shows_the_command():
    for row in _readme_commands_table():
        command = re.search(r"`prag ([a-z-]+)", row)
        link = re.search(r"\]\((docs/[^)#]+)", row)
        assert command and link, f"a Commands row without a command or a guide link: {row}"
        page = (ROOT_DIR / link.group(1)).read_text(encoding="utf-8")
        assert f"prag {command.group(1)}" in page, f"{link.group(1)} never shows prag {command.group(1)}"


def test_the_readme_is_a_page_a_user_reads_in_one_sitting():
    assert len(README.splitlines()) <= 260, "the README is the user's page: move long sections into docs/ (mkdocs.yml's nav)"
    for command in ('pip install -e ".[local]" && prag run', 'pip install -e ".[test,ray]" && python -m pytest'):
        assert command in README
