"""The CLI reference (docs/cli.md), generated from the commands themselves.

    python -m prag.cli.reference --write     # rewrite docs/cli.md
    python -m prag.cli.reference             # print it

Every command and sub-command gets a section: its help text, its usage line, its arguments and
options with their types, defaults and help, read from the click commands typer builds.
`tests/test_cli_help.py` fails when docs/cli.md is not what this prints, so a command or an option
added without regenerating it is caught, as sqlite-utils' cog check does for its CLI reference.
"""
from __future__ import annotations

import sys
import types
import typing
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import typer.main
from typer.core import TyperGroup

HEADER = """# CLI reference

Every `prag` command, with its arguments and options. This page is generated from the commands
(`python -m prag.cli.reference --write`); a test fails when it is out of date. What the options do
together is in the guide, starting with [running rounds](guide/run.md).
"""

DOCS_CLI = Path(__file__).resolve().parents[2] / "docs" / "cli.md"

# Typer builds click-style commands (typer >= 0.26 on its own copy of click), so they are read here
# by the attributes both have: name, help, params; a parameter's opts, secondary_opts, default,
# help, multiple, is_flag, hidden; the annotation typer took its type from.


def root() -> TyperGroup:
    """The `prag` command as typer builds it, every command module registered."""
    from prag.cli import _register, app

    _register()
    command = typer.main.get_command(app)
    assert isinstance(command, TyperGroup)
    return command


def walk(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command under `group` (sub-commands of groups too), sorted, with its words on the command line."""
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        yield (*path, name), command
        if isinstance(command, TyperGroup):
            yield from walk(command, (*path, name))


def _cell(text: str) -> str:
    """Text fit for one cell of a Markdown table: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _annotation(annotation: Any) -> str:
    """A parameter's type in words, as click names them: integer, float, text, path; a|b|c for choices."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        given = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(_annotation(a) for a in given)
    if typing.get_origin(annotation) in (list, tuple, set, frozenset):
        return _annotation(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) is typing.Literal:
        return "|".join(str(a) for a in typing.get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "|".join(str(member.value) for member in annotation)
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return "path"
    return {str: "text", int: "integer", float: "float"}.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _type(param: Any) -> str:
    if getattr(param, "is_flag", False):
        return ""
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    name = _annotation(annotation) if annotation is not None else getattr(getattr(param, "type", None), "name", "")
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is not None and high is not None:
        return f"{name}, {low} to {high}"
    if low is not None:
        return f"{name}, at least {low}"
    if high is not None:
        return f"{name}, at most {high}"
    return name


def _default(param: Any) -> str:
    default = param.default
    if callable(default) or default is None or default == () or default == []:
        return ""
    if getattr(param, "is_flag", False) and param.secondary_opts:
        return f"`{param.opts[0] if default else param.secondary_opts[0]}`"
    if isinstance(default, bool):
        return "yes" if default else "no"
    if isinstance(default, Enum):
        default = default.value
    return f"`{default}`" if str(default) else "`''`"


def argument_name(param: Any) -> str:
    """An argument as its usage line shows it: its metavar, else its name."""
    return str(param.metavar or param.name)


def _is_argument(param: Any) -> bool:
    return param.param_type_name == "argument"


def _names(param: Any) -> str:
    if _is_argument(param):
        return f"`{argument_name(param)}`"
    return " / ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])


def _usage(path: tuple[str, ...], command: Any) -> str:
    ctx = command.context_class(command, info_name=" ".join(("prag", *path)))
    return "`" + " ".join(("prag", *path, *command.collect_usage_pieces(ctx))) + "`"


def section(path: tuple[str, ...], command: Any) -> str:
    """One command's section of the reference."""
    lines = [f"## `prag {' '.join(path)}`", ""]
    help_text = (command.help or "").strip()
    if help_text:
        lines += [*(line.rstrip() for line in help_text.splitlines()), ""]
    lines += [f"Usage: {_usage(path, command)}", ""]
    if isinstance(command, TyperGroup):
        subs = [name for name in sorted(command.commands) if not command.commands[name].hidden]
        lines += ["Commands: " + ", ".join(f"[`{name}`](#prag-{'-'.join((*path, name))})" for name in subs), ""]
    arguments = [p for p in command.params if _is_argument(p)]
    options = [p for p in command.params if not _is_argument(p) and not p.hidden and p.name != "help"]
    if arguments:
        lines += ["| argument | type | default | what |", "|---|---|---|---|"]
        lines += [f"| {_names(p)} | {_cell(_type(p))} | {_cell(_default(p))} | {_cell(getattr(p, 'help', None) or '')} |"
                  for p in arguments]
        lines.append("")
    if options:
        lines += ["| option | type | default | what |", "|---|---|---|---|"]
        lines += [f"| {_names(p)} | {_cell(_type(p))} | {_cell(_default(p))} | {_cell(p.help or '')}"
                  f"{' (repeatable)' if p.multiple else ''} |" for p in options]
        lines.append("")
    return "\n".join(lines)


def reference() -> str:
    """The whole of docs/cli.md."""
    group = root()
    parts = [HEADER, section((), group).replace("## `prag `", "## `prag`", 1)]
    parts += [section(path, command) for path, command in walk(group)]
    return "\n".join(parts).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = reference()
    if argv == ["--write"]:
        DOCS_CLI.write_text(text, encoding="utf-8")
        print(f"wrote {DOCS_CLI}")
        return 0
    if argv:
        print("usage: python -m prag.cli.reference [--write]", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
