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
from collections.abc import Iterator
from pathlib import Path

import click
import typer.main

HEADER = """# CLI reference

Every `prag` command, with its arguments and options. This page is generated from the commands
(`python -m prag.cli.reference --write`); a test fails when it is out of date. What the options do
together is in the guide, starting with [running rounds](guide/run.md).
"""

DOCS_CLI = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def root() -> click.Group:
    """The `prag` command as click sees it, every command module registered."""
    from prag.cli import _register, app

    _register()
    command = typer.main.get_command(app)
    assert isinstance(command, click.Group)
    return command


def walk(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command under `group` (sub-commands of groups too), sorted, with its words on the command line."""
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from walk(command, (*path, name))


def _cell(text: str) -> str:
    """Text fit for one cell of a Markdown table: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _type(param: click.Parameter) -> str:
    if isinstance(param, click.Option) and param.is_flag:
        return ""
    kind = param.type
    if isinstance(kind, click.Choice):
        return "|".join(str(c) for c in kind.choices)
    if isinstance(kind, click.types._NumberRangeBase):
        described = kind._describe_range()  # e.g. "x>=1", "0<=x<=1"
        return f"{kind.name} ({described})"
    return kind.name


def _default(param: click.Parameter) -> str:
    default = param.default
    if callable(default) or default is None or default == () or default == []:
        return ""
    if isinstance(param, click.Option) and param.is_flag and param.secondary_opts:
        return param.opts[0] if default else param.secondary_opts[0]
    if isinstance(default, bool):
        return "yes" if default else "no"
    return f"`{default}`" if str(default) else "`''`"


def _names(param: click.Parameter) -> str:
    if isinstance(param, click.Argument):
        return f"`{param.human_readable_name}`"
    names = [*param.opts, *param.secondary_opts]
    return " / ".join(f"`{n}`" for n in names)


def _usage(path: tuple[str, ...], command: click.Command) -> str:
    ctx = click.Context(command, info_name=" ".join(("prag", *path)))
    return "`" + " ".join(("prag", *path, *command.collect_usage_pieces(ctx))) + "`"


def section(path: tuple[str, ...], command: click.Command) -> str:
    """One command's section of the reference."""
    lines = [f"## `prag {' '.join(path)}`", ""]
    help_text = (command.help or "").strip()
    if help_text:
        lines += [*(line.rstrip() for line in help_text.splitlines()), ""]
    lines += [f"Usage: {_usage(path, command)}", ""]
    if isinstance(command, click.Group):
        subs = [name for name in sorted(command.commands) if not command.commands[name].hidden]
        lines += ["Commands: " + ", ".join(f"[`{name}`](#prag-{'-'.join((*path, name))})" for name in subs), ""]
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden and p.name != "help"]
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
