"""The retrieval index's arrays in files beside the store, so that a big store opens in seconds.

The files are a cache of the store's rows, never their only copy. `<store>.index/<model>/` holds
one file per column of the index (episode ids, goal vectors, step rows, scene vectors, PQ codes, ...),
appended as episodes land, and `meta.json`, replaced atomically after each append, which says how
many rows of each file are committed, a checksum of each file's head, and what the index knows of
the store (its own header: the last episode id, a digest of the episode rows, ...). Readers map
the committed rows only, so an append under way, or one cut short, is never seen; the next append
writes over its tail. Files that do not match their meta (missing, truncated, another head) are
refused here with the reason (`Unusable`); whether the header still matches the store is the
index's to decide. A rebuild writes a new generation of files and removes the old ones (a process
that still maps them keeps reading them: POSIX unlinks only the names).

Writers hold `locked(folder)`: two processes (a run and `prag query`) never append at once.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from prag.errors import PragError, writing

FORMAT = "prag-retrieval-index"
VERSION = 1
HEAD_BYTES = 1 << 16  # checked on every open: cheap, and catches a file rewritten or cut short


class Unusable(Exception):
    """The files of an index cannot be used as they are; the message says why."""


@dataclass
class Column:
    """One column file: its dtype, values per row (0: a single value), committed rows, head checksum."""

    dtype: str
    width: int
    rows: int
    head: int

    @property
    def row_bytes(self) -> int:
        return np.dtype(self.dtype).itemsize * max(self.width, 1)

    def shape(self, rows: int) -> tuple[int, ...]:
        return (rows, self.width) if self.width else (rows,)


def index_folder(store_path: Path, model: str) -> Path:
    """Where the index files of a store's vectors by `model` live: beside the store, one folder a model."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[-40:]
    digest = hashlib.sha256(model.encode()).hexdigest()[:8]
    return store_path.with_name(f"{store_path.name}.index") / f"{slug}-{digest}"


def lockable(folder: Path) -> None:
    """Make the folder and its lock file, or raise the OSError that says why they cannot be."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "a+b"):
        pass


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the folder's write lock (waits for another process's append or rebuild to end)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class IndexFiles:
    """One generation of an index's column files, with the meta that commits them.

    Picklable: it holds paths and row counts, never an open file, so a pickled index names the
    rows of its snapshot and a process that unpickles it maps those rows (see `arrays`).
    """

    def __init__(self, folder: Path, generation: int, columns: dict[str, Column], header: dict[str, Any]) -> None:
        self.folder = folder
        self.generation = generation
        self.columns = columns
        self.header = header
        self._unsynced: set[str] = set()  # columns appended to since the last commit

    @classmethod
    def load(cls, folder: Path) -> IndexFiles:
        """The committed files; `Unusable` when there are none, or they do not match their meta."""
        try:
            meta = json.loads((folder / "meta.json").read_text())
        except FileNotFoundError:
            raise Unusable("there are none") from None
        except (OSError, ValueError) as exc:
            raise Unusable(f"meta.json cannot be read: {exc}") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != VERSION:
            raise Unusable("meta.json is not of this prag's format")
        try:
            files = cls(folder, int(meta["generation"]), {n: Column(**c) for n, c in meta["columns"].items()},
                        dict(meta["header"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise Unusable(f"meta.json lacks {exc}") from None
        for name, column in files.columns.items():
            path = files.path(name)
            size = path.stat().st_size if path.exists() else -1
            if size < column.rows * column.row_bytes:
                raise Unusable(f"{path.name} is missing or shorter than its {column.rows} rows")
            if _head(path, column.rows * column.row_bytes) != column.head:
                raise Unusable(f"{path.name} does not begin as it did when written")
        return files

    @classmethod
    def create(cls, folder: Path) -> IndexFiles:
        """A new, empty generation (committed by `commit`, which then removes the older ones)."""
        folder.mkdir(parents=True, exist_ok=True)
        known = [int(m.group(1)) for p in folder.iterdir() if (m := re.match(r"g(\d+)\.", p.name))]
        return cls(folder, max(known, default=0) + 1, {}, {})

    def path(self, name: str) -> Path:
        return self.folder / f"g{self.generation}.{name}"

    def rows(self) -> dict[str, int]:
        return {name: column.rows for name, column in self.columns.items()}

    def arrays(self) -> dict[str, np.ndarray]:
        """Each column's rows (committed, or appended by this process), mapped read-only."""
        found = {}
        for name, column in self.columns.items():
            shape = column.shape(column.rows)
            if column.rows == 0:  # mmap refuses empty files
                found[name] = np.zeros(shape, dtype=column.dtype)
                continue
            try:
                found[name] = np.memmap(self.path(name), dtype=column.dtype, mode="r", shape=shape)
            except (OSError, ValueError) as exc:
                raise PragError(
                    f"the retrieval index files in {self.folder} cannot be read ({exc}): an index shipped to "
                    "another machine must be `index.in_memory()` unless that machine sees the same folder"
                ) from None
        return found

    def append(self, rows: dict[str, np.ndarray]) -> None:
        """Write rows after each column's rows (over any uncommitted tail); `commit` makes them count."""
        for name, values in rows.items():
            values = np.ascontiguousarray(values)
            column = self.columns.get(name)
            if column is None:
                column = self.columns[name] = Column(values.dtype.str, values.shape[1] if values.ndim > 1 else 0, 0, 0)
            if np.dtype(column.dtype) != values.dtype or column.shape(len(values)) != values.shape:
                raise ValueError(f"rows of {values.dtype}{values.shape} do not fit column {name} ({column})")
            end = column.rows * column.row_bytes
            path = self.path(name)
            with writing(path), open(path, "r+b" if path.exists() else "w+b") as handle:
                handle.seek(end)
                handle.write(values.tobytes())
                handle.truncate()
            self._unsynced.add(name)
            column.rows += len(values)
            if end < HEAD_BYTES:
                column.head = _head(path, column.rows * column.row_bytes)

    def commit(self, header: dict[str, Any]) -> None:
        """Make the rows written so far count, with the index's header; then remove older generations."""
        self.header = header
        for name in sorted(self._unsynced):  # the rows on disk before the meta that counts them
            with open(self.path(name), "rb") as handle:
                os.fsync(handle.fileno())
        self._unsynced.clear()
        meta = {"format": FORMAT, "version": VERSION, "generation": self.generation,
                "columns": {name: asdict(column) for name, column in self.columns.items()}, "header": header}
        temporary = self.folder / f"meta.json.{os.getpid()}"
        with writing(temporary):
            temporary.write_text(json.dumps(meta))
        os.replace(temporary, self.folder / "meta.json")
        for path in self.folder.iterdir():
            if (m := re.match(r"g(\d+)\.", path.name)) and int(m.group(1)) != self.generation:
                path.unlink(missing_ok=True)


def _head(path: Path, size: int) -> int:
    with open(path, "rb") as handle:
        return zlib.crc32(handle.read(min(size, HEAD_BYTES)))
