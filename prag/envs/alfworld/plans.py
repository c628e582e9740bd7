"""The shortest known plan of an ALFWorld game: a fixed property of the game file, found once.

SPL needs each game's shortest plan. textworld computes it with its planner (`replan`, asked for
through the `walkthrough` extra): seconds per game, 52 s on one kitchen game, and it used to be
paid at every reset of every round. The plan is looked up here instead, by the game file's
sha256, in this order:

1. the plan the game file stores (`walkthrough`: the generated games of `alfworld_gen`);
2. the plans shipped with prag (`prag/data/alfworld_plans.json`: the games of the real splits
   we test with, computed by `benchmarks/alfworld_plans.py`);
3. the user's cache (`<cache_dir>/alfworld-plans/<sha256>.json`);
4. else the planner, once: its plan goes to the user's cache, and no later reset of that game
   file (in any run, store or round) asks for it again.

ALFRED's expert plan (`traj_data.json`'s `plan.high_pddl`) is not used: it is a plan in ALFRED's
3-D domain, not a count of ALFWorld text actions (no `open` before taking from a closed
receptacle; a heat or slice step that ALFWorld plays as one action spans several there).
"""
from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from prag.errors import PragError
from prag.paths import cache_dir, write_whole

SHIPPED = "alfworld_plans.json"


def game_key(data: bytes) -> str:
    """The key of a game: the sha256 of its file's bytes."""
    return hashlib.sha256(data).hexdigest()


def known_plan(game_file: Path) -> list[str] | None:
    """The game's plan from the file itself, the shipped plans or the user's cache; None if the
    planner has never been run on this game file."""
    data = _read_bytes(game_file)
    stored = json.loads(data).get("walkthrough")
    if stored:
        return list(stored)
    key = game_key(data)
    shipped = shipped_plans().get(key)
    if shipped is not None:
        return list(shipped)
    return _cached(key)


def shortest_plan(game_file: Path) -> list[str]:
    """The game's plan: known, or computed once by the planner and cached."""
    plan = known_plan(game_file)
    if plan is None:
        plan = planner_plan(game_file)
        _write_cache(game_key(_read_bytes(game_file)), plan)
    return plan


def planner_plan(game_file: Path) -> list[str]:
    """textworld's planner on the game from its start (slow: seconds, up to about a minute)."""
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

    from prag.envs.alfworld.env import argv_kept, close_engine

    infos = textworld.EnvInfos(extras=["walkthrough"])
    with argv_kept():
        engine = textworld.start(str(game_file), request_infos=infos, wrappers=[AlfredDemangler(), AlfredInfos])
        try:
            return list(engine.reset()["extra.walkthrough"] or [])
        finally:
            close_engine(engine)


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


def _cached(key: str) -> list[str] | None:
    path = user_cache() / f"{key}.json"
    try:
        entry: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # a damaged entry is computed again and replaced
    plan = entry.get("plan") if isinstance(entry, dict) else None
    return list(plan) if isinstance(plan, list) and all(isinstance(a, str) for a in plan) else None


def _write_cache(key: str, plan: list[str]) -> None:
    """Write the entry whole (a temp file renamed), so that parallel workers never read half of one."""
    write_whole(user_cache() / f"{key}.json", json.dumps({"plan": plan}).encode("utf-8"))


def _read_bytes(game_file: Path) -> bytes:
    try:
        return Path(game_file).read_bytes()
    except OSError as exc:
        raise PragError(f"no ALFWorld game at {game_file} ({exc}): check the task's ref and the data folder") from None
