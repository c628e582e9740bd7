"""Where prag keeps things on disk: the task-set specs, caches, stores and run outputs."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """User cache for generated games and the assembled local model (`PRAG_CACHE` overrides)."""
    root = os.environ.get("PRAG_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "prag"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def spec_dirs() -> list[Path]:
    """Where spec names are looked up: ./envs first, then the checkout's envs/."""
    return [Path.cwd() / "envs", REPO_ROOT / "envs"]
