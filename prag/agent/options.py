"""The agent's comma-separated options (`--sources`, `--readers`, `--places`), read one way."""
from __future__ import annotations

from collections.abc import Sequence

from prag.errors import PragError


def named(text: str, known: Sequence[str], option: str, what: str, how: str = "comma-separated") -> tuple[str, ...]:
    """The names `text` lists, in its order, without repeats; a PragError when one is not among
    `known`, saying which (`what` they are not), what may be named and `how`."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in known]
    if unknown:
        raise PragError(f"{option} {text!r}: {', '.join(unknown)} is no {what}; name some of {', '.join(known)}, {how}")
    return names
