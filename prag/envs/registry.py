"""The registry of task families: a spec's `env` key names one of these.

Families are imported on first use because their engines (alfworld, textworld,
minigrid) are slow to import and a command that lists specs needs none of them.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Callable

from prag.envs.base import TaskSource
from prag.errors import SpecError

# family name -> "module:factory"; a factory takes (params, spec_dir) and returns a TaskSource,
# raising SpecError with a message that says what to fix.
FAMILIES: dict[str, str] = {
    "alfworld": "prag.envs.alfworld.env:from_params",
    "alfworld-gen": "prag.envs.alfworld.gen:from_params",
    "textworld": "prag.envs.textworld.env:from_params",
    "grid": "prag.envs.grid:from_params",
}

# Families whose actions read alike share examples; other families' corrections would mislead.
DOMAINS = {"alfworld": "alfworld", "alfworld-gen": "alfworld", "grid": "grid", "textworld": "textworld"}


def domain_of(family: str) -> str:
    """The action vocabulary a family shares with others: corrections are matched within it."""
    return DOMAINS.get(family, family)


Factory = Callable[[dict[str, Any], Path], TaskSource]


def factory(family: str) -> Factory:
    try:
        target = FAMILIES[family]
    except KeyError:
        raise SpecError(
            f"unknown env {family!r}: use one of {', '.join(sorted(FAMILIES))}"
        ) from None
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)
