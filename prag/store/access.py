"""What the machine allows of a store file: a place prag may not write to, a lock another process
holds, a full disk. Each becomes a `StoreError` that says what happened and what to do, never an
`sqlite3.OperationalError` traceback.

Nothing stored is lost in any of these: a write that fails is undone whole (one transaction), and
what earlier commits wrote is in the store file or, until SQLite's next checkpoint, in its `-wal`
file beside it. So whoever moves or copies the store must take the `-wal` with it; the messages
say so.

A store prag may not write to (a read-only directory, file or file system) is opened read-only:
the commands that only read (`stats`, `export`, `query`, `compare`) work on it, and the first
write is refused with a message saying why. SQLite reads a WAL store read-only only through its
`-shm` file; where there is no `-wal` to read there is nothing in it, and the file is opened as
immutable (without the `-shm`, which could not be created).
"""
from __future__ import annotations

import errno
import os
import sqlite3
import urllib.parse
from pathlib import Path

from prag.errors import StoreError
from prag.text import clip

# How long a write waits for another process's lock before giving up: a run, an import or a
# query of another process holds it for a transaction at a time, a fraction of a second.
BUSY_SECONDS = 60.0


def companions(path: Path) -> tuple[Path, Path]:
    """The store's `-wal` and `-shm` files (either may be missing)."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def read_only_reason(path: Path) -> str | None:
    """Why prag may not write to the store at `path` (an existing file), or None when it may."""
    if not os.access(path, os.W_OK):
        return "on a read-only file system" if _read_only_fs(path) else "the file is read-only"
    if not os.access(path.parent, os.W_OK):  # SQLite creates its -wal and -shm files beside the store
        return "on a read-only file system" if _read_only_fs(path) else f"its directory {path.parent} is read-only"
    return None


def _no_room(path: Path) -> bool:
    """Whether the disk holding the store has (all but) no room left: less than a few pages."""
    try:
        found = os.statvfs(path.parent if not path.exists() else path)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < 64 << 10


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def connect(path: Path, read_only: str | None) -> sqlite3.Connection:
    """A connection to the store, shared by threads (the store serialises every use); one that
    only reads when prag may not write to it (`read_only` says why), see the module's docstring."""
    if not read_only:
        return sqlite3.connect(path, timeout=BUSY_SECONDS, check_same_thread=False)
    wal, shm = companions(path)
    has_wal = wal.exists() and wal.stat().st_size > 0
    if has_wal and not shm.exists():
        raise StoreError(
            f"{path} has changes in {wal.name} that SQLite can only read with a {shm.name} file, which "
            f"cannot be created where the store is ({read_only}): copy {path} with {wal.name} "
            "to a writable place and use the copy"
        )
    mode = "mode=ro" if has_wal else "immutable=1"
    uri = f"file:{urllib.parse.quote(str(path.absolute()))}?{mode}"
    return sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, check_same_thread=False)


def read_only(path: Path, reason: str) -> StoreError:
    """The error for a write into a store prag may not write to."""
    return StoreError(
        f"{path} is read-only for prag ({reason}): this command writes into the store. The commands "
        f"that only read (stats, export, query, compare) work on it as it is; to write, make it writable, "
        f"or copy {path} (with {path.name}-wal, if there is one) to a writable place and use the copy"
    )


def trouble(path: Path, exc: BaseException) -> StoreError | None:
    """The user error an SQLite or OS error stands for when it is the machine's doing (a lock held
    too long, a full disk, a file that may not be written), or None when it is not one of those."""
    name = getattr(exc, "sqlite_errorname", "")
    number = getattr(exc, "errno", None)
    text = str(exc)
    wal = f"{path.name}-wal"
    if name.startswith("SQLITE_BUSY") or "database is locked" in text:
        return StoreError(
            f"{path} is locked by {holders(path)}, which held its write lock for more than {BUSY_SECONDS:g} s; "
            f"prag stopped waiting. Nothing stored was lost, and what this command had under way was undone. Let "
            f"that process finish (or stop it), then try again. To copy or move the store meanwhile, take {wal} "
            "with it: it holds what was written since SQLite last merged it into the store"
        )
    # A full disk may also show as an I/O error: the -shm file SQLite maps cannot grow on it.
    full = name.startswith("SQLITE_IOERR") and _no_room(path)
    if full or name == "SQLITE_FULL" or number in (errno.ENOSPC, errno.EDQUOT) or "disk is full" in text:
        return StoreError(
            f"the disk holding {path} is full ({clip(text, 80)}): what this command had under way was undone, and "
            f"nothing stored before was lost. Free some space there, or move {path} together with {wal} "
            "(it holds what was written since SQLite last merged it into the store) to a disk with room, and go on"
        )
    if name.startswith("SQLITE_READONLY") or number == errno.EROFS:
        return read_only(path, read_only_reason(path) or clip(text, 80))
    if name.startswith("SQLITE_CANTOPEN") and not path.exists() and not os.access(path.parent, os.W_OK):
        return StoreError(f"{path} cannot be created: its directory {path.parent} is read-only; "
                          "give a store path in a directory you may write to")
    return None


def holders(path: Path) -> str:
    """The processes holding a write lock on the store, as a message names them (Linux: from
    /proc/locks; SQLite's write lock in WAL mode is on the `-shm` file), or "another process"."""
    inodes = set()
    for file in (path, *companions(path)):
        try:
            found = file.stat()
        except OSError:
            continue
        inodes.add(f"{os.major(found.st_dev):02x}:{os.minor(found.st_dev):02x}:{found.st_ino}")
    try:
        locks = Path("/proc/locks").read_text().splitlines()
    except OSError:
        locks = []
    pids = sorted({
        int(fields[4]) for fields in (line.split() for line in locks)
        if len(fields) > 5 and fields[3] == "WRITE" and fields[5] in inodes and fields[4].isdigit()
        and int(fields[4]) not in (0, os.getpid())
    })
    if not pids:
        return "another process"
    return ", ".join(f"process {pid} ({_command_line(pid)})" for pid in pids)


def _command_line(pid: int) -> str:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "gone since"
    return clip(" ".join(w.decode(errors="replace") for w in words if w), 100) or "no command line"
