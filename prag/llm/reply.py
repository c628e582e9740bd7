"""Reading a chat server's reply defensively: bounded in bytes and time, checked in shape.

A server may answer anything: HTML from a proxy, JSON without choices, megabytes of text that
ignore `max_tokens`. What is read stops at a bound derived from the request, and a reply that is
not a chat completion becomes a `BadReply` (a server error, retried by the caller), never text.
How long a reply may take is the caller's to bound, over the whole request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from prag.llm.base import Completion, Cost
from prag.text import clip

# Room for the JSON around the answer (ids, usage, logprobs) besides the answer itself, each
# character of which may take up to 6 bytes as a \\u escape.
_ENVELOPE_BYTES = 1 << 20
_BYTES_PER_CHAR = 6
_SAMPLE_CHARS = 200


class BadReply(Exception):
    """The server's reply is not a usable chat completion."""

    def __init__(self, problem: str, body: bytes) -> None:
        self.problem = problem
        self.sample = _sample(body)
        super().__init__(f"{problem}: {self.sample!r}" if self.sample else problem)


def body_limit(text_limit: int) -> int:
    """The most bytes worth reading for an answer of at most `text_limit` characters."""
    return _ENVELOPE_BYTES + _BYTES_PER_CHAR * text_limit


def read_body(chunks: Iterable[bytes], *, declared: str | None, limit: int) -> bytes:
    """The reply's bytes; `BadReply` past `limit` bytes."""
    if declared and declared.isdigit() and int(declared) > limit:
        raise BadReply(f"a body of {int(declared):,} bytes, over the {limit:,} an answer can need", b"")
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise BadReply(f"a body over the {limit:,} bytes an answer can need", bytes(body))
    return bytes(body)


def parse_reply(body: bytes, *, text_limit: int, constrained: bool) -> Completion:
    """The chat completion in `body`: its text cut to the bound, and the token counts the server
    gave (0 if none; the seconds are the caller's to count). `BadReply` says what the server sent
    instead of one.

    An empty answer is accepted only as a model's own: unconstrained and stopped by a stop
    sequence or the length (a first token "\\n" with stop=["\\n"] is a real empty answer).
    """
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadReply("not JSON", body) from None
    if not isinstance(data, dict):
        raise BadReply("JSON that is not an object", body)
    if "error" in data:
        raise BadReply("an error", body)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadReply("no choices", body)
    message = choices[0].get("message")
    text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str):
        raise BadReply("a choice without text", body)
    if not text and (constrained or choices[0].get("finish_reason") not in ("stop", "length")):
        raise BadReply("an empty answer", body)
    given = data.get("usage")
    usage = given if isinstance(given, dict) else {}
    details = usage.get("prompt_tokens_details")
    return Completion(text[:text_limit], Cost(
        calls=1,
        prompt_tokens=_count(usage.get("prompt_tokens")),
        cached_tokens=_count(details.get("cached_tokens") if isinstance(details, dict) else None),
        completion_tokens=_count(usage.get("completion_tokens")),
    ))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _sample(body: bytes) -> str:
    return clip(body[: _SAMPLE_CHARS * 4].decode("utf-8", errors="replace"), _SAMPLE_CHARS)
