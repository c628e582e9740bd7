"""The registry of task families: a spec's `env` key names one of these.

A family is its task-source factory and its `Domain`, kept together so that a new family is
added in one place: `register(name, factory, domain)` from Python (tests, scripts, threads of
one process), or, from a package of your own and without editing prag, an entry point in the
group `prag.families` naming a `Family` (read when a spec first names it, so `prag run` and
worker processes find it too):

    [project.entry-points."prag.families"]
    pantry = "mypackage.pantry:FAMILY"

Factories given as "module:factory" are imported on first use because the engines (alfworld,
textworld, minigrid, scienceworld) are slow to import and a command that lists specs needs none of them.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable

from prag.envs.base import TaskSource
from prag.envs.domain import ALFWORLD, GRID, TEXTWORLD, Domain
from prag.envs.sciworld.domain import SCIWORLD
from prag.errors import PragError, SpecError

# A factory takes (params, spec_dir) and returns a TaskSource, raising SpecError with a message
# that says what to fix.
Factory = Callable[[dict[str, Any], Path], TaskSource]

ENTRY_POINTS = "prag.families"
HOW_TO_ADD = "or add your own family (README, 'Add your own environment')"


@dataclass(frozen=True)
class Family:
    """A task family: how its task sets are built, and its Domain (grammar, names and rules).

    `thread_safe` False: the engine cannot play two games at once in one process (textworld's
    tatsu grammar parser shares its state between threads), so parallel episodes run in processes."""

    factory: str | Factory  # "module:factory", imported on first use, or the factory itself
    domain: Domain
    thread_safe: bool = True


# Families whose actions read alike share one Domain, and with it their corrections; other
# families' corrections would mislead.
FAMILIES: dict[str, Family] = {
    "alfworld": Family("prag.envs.alfworld.env:from_params", ALFWORLD, thread_safe=False),
    "alfworld-gen": Family("prag.envs.alfworld.gen:from_params", ALFWORLD, thread_safe=False),
    "textworld": Family("prag.envs.textworld.env:from_params", TEXTWORLD, thread_safe=False),
    "grid": Family("prag.envs.grid:from_params", GRID),
    # One simulator (a JVM) per process, playing one game at a time.
    "sciworld": Family("prag.envs.sciworld.env:from_params", SCIWORLD, thread_safe=False),
}


def register(name: str, factory: str | Factory, domain: Domain, *, thread_safe: bool = True) -> None:
    """Add a family under `name`, for this process (an entry point adds it for every process).
    Registering the same family again changes nothing; another family under a taken name is refused."""
    family = Family(factory, domain, thread_safe)
    if FAMILIES.get(name, family) != family:
        raise PragError(f"a family named {name!r} is registered already: register yours under another name")
    FAMILIES[name] = family


def family(name: str) -> Family:
    """The family `name`: registered, or from an installed package's `prag.families` entry point."""
    if name not in FAMILIES:
        found = entry_points(group=ENTRY_POINTS, name=name)
        if not found:
            raise SpecError(f"unknown env {name!r}: use one of {', '.join(names())}; {HOW_TO_ADD}")
        loaded = next(iter(found)).load()
        if not isinstance(loaded, Family):
            raise SpecError(f"the {ENTRY_POINTS} entry point {name!r} names {type(loaded).__name__}, not a "
                            "prag.envs.registry.Family: point it at one (README, 'Add your own environment')")
        FAMILIES[name] = loaded
    return FAMILIES[name]


def known(name: str) -> bool:
    """Whether `name` is a family (registered or installed), without saying why not."""
    try:
        family(name)
    except SpecError:
        return False
    return True


def names() -> list[str]:
    """The families registered and those installed packages offer, sorted."""
    return sorted({*FAMILIES, *(point.name for point in entry_points(group=ENTRY_POINTS))})


def domain(name: str) -> Domain:
    """The Domain of a family: what its actions and names look like, and its rules text."""
    return family(name).domain


def thread_safe(name: str) -> bool:
    """Whether the family's games may be played in threads of one process."""
    return family(name).thread_safe


def factory(name: str) -> Factory:
    """The family's task-source factory, imported on first use."""
    target = family(name).factory
    if callable(target):
        return target
    module_name, _, attr = target.partition(":")
    made: Factory = getattr(importlib.import_module(module_name), attr)
    return made
