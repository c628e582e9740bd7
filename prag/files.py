"""Files a user names to prag (specs, commands files, JSON Lines imports, model files): each is
checked to be what it claims before it is used, with an error that names the file, what is wrong
with it and what to give instead, never a UnicodeDecodeError or IsADirectoryError traceback."""
from __future__ import annotations

import stat
from pathlib import Path

from prag.errors import PragError

# A spec, a transcript or a commands file is a few KB to a few MB (Revisiting ALFRED's largest
# commands file: 9 MB); a file far past that is not one of them, and is not read whole.
TEXT_LIMIT = 64 * 2**20


def checked_file(path: str | Path, what: str, error: type[PragError] = PragError) -> Path:
    """`path`, once it is a readable file with something in it; `what` says what it should be
    ("a task-set spec (TOML)") and `error` is the error class to raise."""
    path = Path(path)
    if path.is_dir():
        raise error(f"{path} is a directory: give {what}")
    try:
        found = path.stat()
        if stat.S_ISREG(found.st_mode):  # only a file is opened: opening a pipe waits for a writer, forever
            with path.open("rb"):
                pass
    except FileNotFoundError:
        raise error(f"no file at {path}: give {what}") from None
    except OSError as exc:
        raise error(f"{path} cannot be read ({exc.strerror}): give {what} that you may read") from None
    if not stat.S_ISREG(found.st_mode):  # a device or a pipe has no size to check: /dev/urandom has no end
        raise error(f"{path} is {_kind(found.st_mode)}, not a file: give {what}")
    if found.st_size == 0:
        raise error(f"{path} is empty: give {what}")
    return path


def read_text(path: str | Path, what: str, error: type[PragError] = PragError, limit: int = TEXT_LIMIT) -> str:
    """The UTF-8 text of a file the user named (a byte-order mark is dropped), checked as
    `checked_file` does and to be at most `limit` bytes."""
    path = checked_file(path, what, error)
    size = path.stat().st_size
    if size > limit:
        raise error(f"{path} is {_megabytes(size)}, too big for {what} (at most {_megabytes(limit)}): "
                    "is it the right file?")
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path} is not UTF-8 text ({not_utf8(data, exc)}): give {what}, "
                    "saved as UTF-8") from None


def check_magic(path: str | Path, what: str, magic: bytes, error: type[PragError] = PragError) -> Path:
    """`path`, once it is a file that starts with `magic` (a binary format's signature)."""
    path = checked_file(path, what, error)
    with path.open("rb") as handle:
        if handle.read(len(magic)) != magic:
            raise error(f"{path} is not {what} (it does not start with {magic!r})")
    return path


def not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    """Where UTF-8 decoding failed, for a message: the line and the byte."""
    line = data.count(b"\n", 0, exc.start) + 1
    return f"line {line}: byte 0x{data[exc.start]:02x} is not UTF-8"


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a pipe"),
             (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.0f} MB" if size >= 2**20 else f"{size} bytes"
