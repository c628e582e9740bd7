"""The registry of task families: a spec's `env` key names one of these.

Families are imported on first use because their engines (alfworld, textworld,
minigrid) are slow to import and a command that lists specs needs none of them.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Callable

from prag.envs.base import TaskSource
from prag.envs.domain import ALFWORLD, GRID, TEXTWORLD, Domain
from prag.errors import SpecError

# family name -> "module:factory"; a factory takes (params, spec_dir) and returns a TaskSource,
# raising SpecError with a message that says what to fix.
FAMILIES: dict[str, str] = {
    "alfworld": "prag.envs.alfworld.env:from_params",
    "alfworld-gen": "prag.envs.alfworld.gen:from_params",
    "textworld": "prag.envs.textworld.env:from_params",
    "grid": "prag.envs.grid:from_params",
}

# Each family's Domain (its grammar, names and rules), beside its factory. Families whose actions
# read alike share one, and with it their corrections; other families' corrections would mislead.
DOMAINS: dict[str, Domain] = {"alfworld": ALFWORLD, "alfworld-gen": ALFWORLD, "grid": GRID, "textworld": TEXTWORLD}

# Families whose engine cannot play two games at once in one process: textworld's tatsu grammar
# parser shares its state between threads. Their parallel episodes run in processes.
THREAD_UNSAFE: frozenset[str] = frozenset({"alfworld", "alfworld-gen", "textworld"})


def domain(family: str) -> Domain:
    """The Domain of a family: what its actions and names look like, and its rules text."""
    try:
        return DOMAINS[family]
    except KeyError:
        raise SpecError(f"unknown env {family!r}: use one of {', '.join(sorted(FAMILIES))}") from None


Factory = Callable[[dict[str, Any], Path], TaskSource]


def factory(family: str) -> Factory:
    """The family's task-source factory, imported on first use."""
    try:
        target = FAMILIES[family]
    except KeyError:
        raise SpecError(
            f"unknown env {family!r}: use one of {', '.join(sorted(FAMILIES))}"
        ) from None
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)
