"""Where prag keeps things on disk: the task-set specs, caches, stores and run outputs."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from prag.errors import writing

REPO_ROOT = Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """User cache for generated games and the assembled local model (`PRAG_CACHE` overrides)."""
    root = os.environ.get("PRAG_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "prag"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_whole(path: Path, data: bytes) -> None:
    """Write a cache entry whole (a temp file renamed): processes or runs starting at once may
    write the same entry, and none may read half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with writing(path), os.fdopen(handle, "wb") as out:
        out.write(data)
    os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is the user's to share
    os.replace(tmp, path)


def spec_dirs() -> list[Path]:
    """Where spec names are looked up: ./envs first, then the checkout's envs/."""
    return [Path.cwd() / "envs", REPO_ROOT / "envs"]
