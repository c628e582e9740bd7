"""Names that come from a user, a spec or an import: checked once, where they enter.

A run's id names its folder (`runs/<run id>/`), so it must be a folder name there and nothing
more: no `/` or `\\`, not `.` or `..`, short enough for the file system. Every other name (a task
id, a task type, a spec's or a correction's name) is printed and compared, never a path: it only
has to be a line of text of a bounded length. Neither may hold a control character (ESC, a
newline): a name is shown on one line of a table, and a terminal acts on ESC. Spaces and letters
of any script are fine (`my run é`).

The checks run where a name enters: the command line (`--name`), a spec's `name`, each line of an
import (the bad line is refused by its number), and the store's `add_run`, which every run passes
through. A store written before these rules, or by another program, may still hold a run id that
breaks them: `run_folder` maps such an id to a folder of its own, never to the id itself.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from prag.errors import PragError
from prag.text import first_control

RUN_ID_CHARS = 128
# A folder name holds 255 bytes on Linux's and macOS's file systems; a run's folder also gets files
# and temporary names inside it, never a longer name beside it.
RUN_ID_BYTES = 240
# A spec's name begins the default run id (`<spec>-<mode>-<time>`), which must fit the run id's bound.
SPEC_NAME_CHARS = 64
LABEL_CHARS = 256  # a task id, a task type, a model's name: an ALFWorld trial's path is about 80


class BadName(PragError):
    """A name that breaks the rules of its kind; the message says which and what to give."""


def name_problem(name: str, *, path: bool, limit: int | None = None) -> str | None:
    """What is wrong with `name` (None: nothing): a run id (`path`, it names a folder) or another
    name (a line of text), at most `limit` characters (default: its kind's)."""
    limit = limit or (RUN_ID_CHARS if path else LABEL_CHARS)
    if path and not name.strip():
        return "empty"
    if len(name) > limit:
        return f"{len(name)} characters long, over the {limit} a name may have"
    found = first_control(name)
    if found is not None:
        return f"it holds the control character {found!r} (a newline, ESC, ...), which a terminal acts on"
    if not path:
        return None
    if len(name.encode("utf-8")) > RUN_ID_BYTES:
        return f"{len(name.encode('utf-8'))} bytes of UTF-8, over the {RUN_ID_BYTES} a folder's name may have"
    if "/" in name or "\\" in name or name in (".", ".."):
        return "it would name a folder outside runs/ (it holds / or \\, or is . or ..)"
    if name != name.strip():
        return "it begins or ends with a space"
    if name.startswith("-"):
        return "it begins with -, which a command line reads as an option"
    return None


def check_run_id(name: str) -> str:
    """`name`, once it is a good run id; a BadName saying what is wrong and what to give."""
    problem = name_problem(name, path=True)
    if problem is not None:
        raise BadName(f"{_quoted(name)} cannot be a run's id: {problem}. Give a name of at most "
                      f"{RUN_ID_CHARS} letters, digits, spaces and punctuation other than / and \\")
    return name


def check_label(name: str, what: str) -> str:
    """`name`, once it is a good name of another kind (an ask policy's); a BadName otherwise."""
    problem = name_problem(name, path=False)
    if problem is not None:
        raise BadName(f"{what} {_quoted(name)} cannot be used: {problem}; give one line of at most {LABEL_CHARS} characters")
    return name


def run_folder(root: Path, run_id: str) -> Path:
    """The folder of a run's log under `root` (`runs/`): named by the run id when it is a good one,
    else (a store from before the rules, or from another program) by a name made of its safe
    characters and a digest, so that no run id leads out of `root`."""
    if name_problem(run_id, path=True) is None:
        return root / run_id
    slug = re.sub(r"[^\w.-]+", "-", run_id).strip("-.")[:40]
    return root / f"{slug or 'run'}-{hashlib.sha256(run_id.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def _quoted(name: str) -> str:
    """The name in a message: quoted, its control characters escaped, a long one cut."""
    text = repr(name)
    return text if len(text) <= 80 else text[:77] + "..."
