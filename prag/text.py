"""Text helpers shared by every layer."""
from __future__ import annotations

import shlex


def clip(text: str, limit: int) -> str:
    """The text on one line, cut to `limit` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def command(*words: object) -> str:
    """A command line for a message, to be pasted into a shell: each word quoted as the shell
    needs (a store path or a run name with spaces, quotes or non-ASCII letters stays one word).
    Placeholders the user fills in (RUN, ID) are given as they are and stay bare."""
    return " ".join(shlex.quote(str(word)) for word in words)
