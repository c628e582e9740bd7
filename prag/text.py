"""Text helpers shared by every layer."""
from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """The text on one line, cut to `limit` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
