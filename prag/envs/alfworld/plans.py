"""The shortest known plan of an ALFWorld game: a fixed property of the game file, found once.

SPL needs each game's shortest plan. textworld computes it with its planner (`replan`, asked for
through the `walkthrough` extra): seconds per game, 52 s on one kitchen game, and it used to be
paid at every reset of every round. The plan is looked up here instead, by the game file's
sha256, in this order:

1. the plan the game file stores (`walkthrough`: the generated games of `alfworld_gen`);
2. the plans shipped with prag (`prag/data/alfworld_plans.json`: textworld's planner's plans of
   the games of the real splits we test with, computed by `benchmarks/alfworld_plans.py`);
3. the user's cache (`<cache_dir>/alfworld-plans/<sha256>.json`);
4. else planned, once, by the caller (textworld's search on the part of the game its goal can
   use, `prag.envs.alfworld.shortest`: as short as textworld's plan, in a fraction of its time):
   the plan goes to the user's cache, and no later reset of that game file (in any run, store or
   round) plans again.

Each plan comes with how it was found (`ShortestPlan.source`), which episodes record for the card.

ALFRED's expert plan (`traj_data.json`'s `plan.high_pddl`) is not used: it is a plan in ALFRED's
3-D domain, not a count of ALFWorld text actions (no `open` before taking from a closed
receptacle; a heat or slice step that ALFWorld plays as one action spans several there).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from prag.errors import PragError
from prag.paths import cache_dir, write_whole

SHIPPED = "alfworld_plans.json"

# How a plan was found, as episodes record it (prag.run.card shows it).
STORED = "stored in the game file"
TEXTWORLD = "textworld's planner on the whole game"
GOAL = "textworld's search on the part of the game its goal can use (prag.envs.alfworld.shortest)"
_SOURCES = {"textworld": TEXTWORLD, "goal": GOAL}  # a cache entry's `by` -> source


@dataclass(frozen=True)
class ShortestPlan:
    actions: tuple[str, ...]
    source: str  # how it was found: STORED, TEXTWORLD or GOAL


def game_key(data: bytes) -> str:
    """The key of a game: the sha256 of its file's bytes."""
    return hashlib.sha256(data).hexdigest()


def known_plan(game_file: Path) -> ShortestPlan | None:
    """The game's plan from the file itself, the shipped plans or the user's cache; None if it
    was never planned here."""
    data = _read_bytes(game_file)
    stored = json.loads(data).get("walkthrough")
    if stored:
        return ShortestPlan(tuple(stored), STORED)
    key = game_key(data)
    shipped = shipped_plans().get(key)
    if shipped is not None:
        return ShortestPlan(tuple(shipped), TEXTWORLD)
    return _cached(key)


def shortest_plan(game_file: Path, plan: Callable[[], list[str]]) -> ShortestPlan:
    """The game's plan: known, or `plan()` (the goal's search, `prag.envs.alfworld.shortest`)
    once, and cached."""
    known = known_plan(game_file)
    if known is not None:
        return known
    actions = tuple(plan())
    _write_cache(game_key(_read_bytes(game_file)), actions)
    return ShortestPlan(actions, GOAL)


@cache
def shipped_plans() -> dict[str, list[str]]:
    path = Path(str(resources.files("prag"))) / "data" / SHIPPED
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    plans: dict[str, list[str]] = json.loads(text)
    return plans


def user_cache() -> Path:
    return cache_dir() / "alfworld-plans"


def _cached(key: str) -> ShortestPlan | None:
    path = user_cache() / f"{key}.json"
    try:
        entry: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # a damaged entry is planned again and replaced
    if not isinstance(entry, dict):
        return None
    plan, source = entry.get("plan"), _SOURCES.get(entry.get("by", "textworld"))  # entries without `by` are textworld's
    if not isinstance(plan, list) or not all(isinstance(a, str) for a in plan) or source is None:
        return None
    return ShortestPlan(tuple(plan), source)


def _write_cache(key: str, actions: tuple[str, ...]) -> None:
    """Write the entry whole (a temp file renamed), so that parallel workers never read half of one."""
    write_whole(user_cache() / f"{key}.json", json.dumps({"plan": list(actions), "by": "goal"}).encode("utf-8"))


def _read_bytes(game_file: Path) -> bytes:
    try:
        return Path(game_file).read_bytes()
    except OSError as exc:
        raise PragError(f"no ALFWorld game at {game_file} ({exc}): check the task's ref and the data folder") from None
