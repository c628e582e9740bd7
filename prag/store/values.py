"""Values prag reads back from its own tables, checked as they are read.

A store edited by hand, written by another program or half restored may hold a value prag never
wrote: `prag_meta.schema_version = 'abc'`, a JSON column that is not JSON, a count that is not a
number. Each reader here turns that into a `DamagedStore` error that names the store, the value
and what to do, instead of a ValueError traceback; and since it is raised as the value is read,
before whatever the value decides, nothing is written into the store after it.
"""
from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from prag.errors import DamagedStore
from prag.text import clip, command

Where = Path | sqlite3.Connection  # the store: its path, or a connection to it


def damaged_value(store: Where, what: str, value: object, expected: str, fix: str | None = None) -> DamagedStore:
    """The error for a stored value that is not what prag writes there."""
    path = _path(store)
    fix = fix or (
        f"restore {path} from a backup, or save the runs that still read with "
        f"`{command('prag', 'export', path, '--run', 'RUN')} > RUN.jsonl` and `prag import NEW.db RUN.jsonl`"
    )
    return DamagedStore(
        f"{path} is damaged: {what} is {clip(repr(value), 80)}, not {expected} (the file was changed by hand "
        f"or by another program); prag writes nothing into it. To go on: {fix}"
    )


def stored_json(store: Where, what: str, text: Any, kind: type, empty: str | None = None) -> Any:
    """A JSON column's value, of type `kind` (dict, list); `empty` stands for NULL or ''."""
    if text in (None, "") and empty is not None:
        text = empty
    try:
        value = orjson.loads(text)  # a third of json's time on the extras `prag compare` reads
    except (TypeError, ValueError):
        try:  # orjson refuses what json reads and json.dumps may write (NaN, a lone surrogate)
            value = json.loads(text)
        except (TypeError, ValueError, RecursionError):
            raise damaged_value(store, what, text, "JSON text") from None
    if not isinstance(value, kind):
        raise damaged_value(store, what, text, f"a JSON {'object' if kind is dict else kind.__name__}")
    return value


def stored_int(store: Where, what: str, value: Any, empty: int | None = None, fix: str | None = None) -> int:
    """A whole number column's value (SQLite keeps whatever text is put in one); `empty` stands
    for NULL; `fix` says what to do when it is not one, if not the usual."""
    if type(value) is int:  # what prag writes, and the most read value of a store: checked at once
        return value
    if value is None and empty is not None:
        return empty
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().lstrip("-").isdigit():
        raise damaged_value(store, what, value, "a whole number", fix)
    return int(value)


def stored_float(store: Where, what: str, value: Any, empty: float | None = None) -> float:
    """A number column's value; `empty` stands for NULL."""
    if value is None and empty is not None:
        return empty
    try:
        return float(value)
    except (TypeError, ValueError):
        raise damaged_value(store, what, value, "a number") from None


def stored_time(store: Where, what: str, value: Any) -> str | None:
    """A time column's value (ISO 8601 text, or NULL)."""
    if value is None:
        return None
    try:
        datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise damaged_value(store, what, value, "a time (ISO 8601)") from None
    return str(value)


def _path(store: Where) -> Path | str:
    if isinstance(store, sqlite3.Connection):
        rows = store.execute("pragma database_list").fetchall()
        return next((row[2] for row in rows if row[1] == "main" and row[2]), "the store")
    return store
