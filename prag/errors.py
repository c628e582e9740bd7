"""Errors a user can act on: the CLI prints their message, without a traceback."""
from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class PragError(Exception):
    """An error whose message says what went wrong and what to do about it."""


class SpecError(PragError):
    """A task-set spec (TOML) is invalid or names data that is missing."""


class StoreError(PragError):
    """An experience store cannot be opened or written."""


class DamagedStore(StoreError):
    """A store's file, or a value prag wrote into it, is damaged: prag writes nothing into it."""


class LLMError(PragError):
    """An LLM backend is missing, unreachable or answered unusably."""


class ConfigError(PragError):
    """A run's recorded settings cannot be read by this prag."""


class DiskFull(PragError):
    """A file prag writes beside the store (a run's log, the retrieval index) found the disk full."""


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Name `path` in an OSError raised while it is written that names no file (a write or a
    close on a full disk), so that `disk_full` can say which disk to free."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None


def disk_full(exc: BaseException) -> DiskFull | None:
    """A full disk (or quota) met outside the store's SQLite file, as a user error; None for any
    other error. (SQLite's own full disk is the store's to say: prag.store.access.)"""
    if not isinstance(exc, OSError) or exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    where = f" for {exc.filename}" if exc.filename else ""
    return DiskFull(f"the disk has no room{where} ({exc.strerror}): free some space on it and go on; "
                    "nothing stored was lost")
