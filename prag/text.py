"""Text helpers shared by every layer."""
from __future__ import annotations

import re
import shlex
import unicodedata

from rich.markup import escape

# Characters a terminal acts on rather than shows, or that hide or reorder what follows: C0 and C1
# controls (ESC, newline, BEL, ...), format characters (bidi overrides, zero-width ones), line and
# paragraph separators, lone surrogates.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NOT_PLAIN = re.compile(r"[^ -~]")  # what is not printable ASCII: only these are looked up
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def clip(text: str, limit: int) -> str:
    """The text on one line, cut to `limit` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def without_article(phrase: str) -> str:
    """The phrase without a leading "the", "a" or "an", written in lower case as goals are read
    ("the red box": "red box")."""
    return _ARTICLE.sub("", phrase)


def command(*words: object) -> str:
    """A command line for a message, to be pasted into a shell: each word quoted as the shell
    needs (a store path or a run name with spaces, quotes or non-ASCII letters stays one word).
    Placeholders the user fills in (RUN, ID) are given as they are and stay bare."""
    return " ".join(shlex.quote(str(word)) for word in words)


def hidden(char: str) -> bool:
    """Whether a terminal would act on `char` (or hide it) rather than show it."""
    return not char.isprintable() and unicodedata.category(char) in _HIDDEN


def first_control(text: str) -> str | None:
    """The first character of `text` that `hidden` finds, or None."""
    if text.isprintable():
        return None
    return next((char for char in text if hidden(char)), None)


def shown(value: object, *, lines: bool = False, markup: bool = True) -> str:
    """`value` as text to print with rich: every character a terminal would act on made visible
    as its escape (`\\x1b`, `\\n`, `\\u202e`), and rich's markup escaped (`[red]` stays `[red]`).
    Whatever came from a store, a spec, a transcript, a game or an LLM is printed through this;
    `lines` keeps newlines and tabs, for text shown as the lines it has (an observation, a message);
    `markup=False` leaves the markup as it is, for text printed without rich (click's prompts)."""
    text = str(value)
    if not text.isprintable():
        keep = "\n\t" if lines else ""
        text = _NOT_PLAIN.sub(lambda found: _escaped(found.group(), keep), text)
    return escape(text) if markup else text


def _escaped(char: str, keep: str) -> str:
    if char in keep or not hidden(char):
        return char
    return char.encode("unicode_escape").decode("ascii")
