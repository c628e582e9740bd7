"""Family `alfworld`: real ALFWorld games in the standard layout, played on the alfworld engine.

Games live where `alfworld-download` puts them, `$ALFWORLD_DATA/json_2.1.1/<split>/<task>/<trial>/`
(`game.tw-pddl` + `traj_data.json`). The games kept are those ALFWorld itself keeps
(`AlfredTWEnv.collect_game_files`): a `traj_data.json` beside a `game.tw-pddl` marked solvable,
no movable receptacles, no sliced objects. They are played with textworld's PDDL engine and
ALFWorld's wrappers, as ALFWorld does.

    [params]
    split = "valid_seen"          # a folder under json_2.1.1/
    data_dir = "/data/alfworld"   # default: $ALFWORLD_DATA; relative paths are from the spec's folder
    task_types = ["pick_and_place_simple"]  # default: all six
    per_type = 5                  # at most this many games of each type
    num_tasks = 20                # at most this many games in all
    seed = 0                      # which games the caps keep (a seeded shuffle), which annotation "turk" takes
    goals = "template"            # the goal's wording: see prag.envs.alfworld.wording

`AlfworldTaskSource`/`AlfworldEnv` also play the generated games of `alfworld_gen`.
"""
from __future__ import annotations

import json
import os
import random
import re
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prag.envs.alfworld.graph import Fact, scene_graph
from prag.envs.alfworld.memo import for_play, give_back, memoize_engine
from prag.envs.alfworld.plans import shortest_plan
from prag.envs.alfworld.shortest import goal_operators
from prag.envs.alfworld.wording import instructions, parse_wording
from prag.envs.base import KnowsItsPlan, Observation, Task, scene_text_from_triples
from prag.errors import PragError, SpecError

TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)

GET_DATA = (
    "set ALFWORLD_DATA (or [params] data_dir) to a folder holding json_2.1.1/<split>/: "
    "run `alfworld-download` where there is internet, or unpack a tarball of that layout "
    "(e.g. ../shared/data/alfworld/alfworld-valid_seen.tar.gz) and point at its alfworld/ folder; "
    "the spec `alfworld-mini` needs no data"
)

_BANNER = re.compile(r"^-= .* =-\s*")
_GOAL = re.compile(r"\s*Your task is to: (.+?)\s*$", re.DOTALL)


# --- finding games ------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlfworldGame:
    task_id: str  # the trial's path under the split, e.g. "pick_and_place_simple-Mug-None-Desk-308/trial_T2019..."
    task_type: str
    game_file: Path

    def task(self) -> Task:
        # A stable number per game (real games have no seed of their own; runners may seed with it).
        return Task(self.task_id, self.task_type, zlib.crc32(self.task_id.encode()), str(self.game_file))


def find_games(split_dir: Path) -> list[AlfworldGame]:
    """The games of a split that ALFWorld's own filter keeps, sorted by task id.

    The movable/Sliced test looks at the path below the split only (ALFWorld tests the whole
    path, which would drop every game of a data folder whose name happens to contain "Sliced").
    """
    games = []
    for traj_path in sorted(split_dir.rglob("traj_data.json")):
        trial = traj_path.parent
        task_id = trial.relative_to(split_dir).as_posix()
        game_file = trial / "game.tw-pddl"
        if "movable" in task_id or "Sliced" in task_id or not game_file.is_file():
            continue
        task_type = _read_json(traj_path).get("task_type")
        if task_type not in TASK_TYPES or not _read_json(game_file).get("solvable"):
            continue
        games.append(AlfworldGame(task_id, task_type, game_file))
    return games


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PragError(f"{path}: not a readable JSON file ({exc}); re-download or re-unpack the data") from None
    if not isinstance(data, dict):
        raise PragError(f"{path}: expected a JSON object; re-download or re-unpack the data")
    return data


@dataclass(frozen=True)
class Selection:
    """Which games of a split a spec asks for."""

    split_dir: Path
    task_types: tuple[str, ...] = TASK_TYPES
    per_type: int | None = None
    num_tasks: int | None = None
    seed: int = 0


def select_games(games: list[AlfworldGame], selection: Selection) -> list[AlfworldGame]:
    """The games of the asked types, capped per type and in all; which ones a cap keeps is
    decided by a shuffle with the selection's seed. Returned sorted by task id."""
    order = sorted(games, key=lambda g: g.task_id)
    random.Random(selection.seed).shuffle(order)
    kept: list[AlfworldGame] = []
    per_type: dict[str, int] = {}
    for game in order:
        if game.task_type not in selection.task_types:
            continue
        if selection.per_type is not None and per_type.get(game.task_type, 0) >= selection.per_type:
            continue
        per_type[game.task_type] = per_type.get(game.task_type, 0) + 1
        kept.append(game)
    return sorted(kept[: selection.num_tasks], key=lambda g: g.task_id)


# --- the family's factory -----------------------------------------------------------------------

_PARAMS = ("split", "data_dir", "task_types", "per_type", "num_tasks", "seed", "goals")


def from_params(params: dict[str, Any], spec_dir: Path) -> AlfworldTaskSource:
    """The registry's factory: validate `[params]`, find and select the split's games."""
    selection = parse_params(params, spec_dir)
    if not selection.split_dir.is_dir():
        splits = sorted(p.name for p in selection.split_dir.parent.iterdir() if p.is_dir())
        raise SpecError(
            f"alfworld: no split {selection.split_dir.name!r} in {selection.split_dir.parent}; "
            f"the splits there: {', '.join(splits) or 'none'}"
        )
    games = find_games(selection.split_dir)
    if not games:
        raise SpecError(f"alfworld: no playable game under {selection.split_dir}; {GET_DATA}")
    chosen = select_games(games, selection)
    if not chosen:
        raise SpecError(f"alfworld: no game of types {list(selection.task_types)} in {selection.split_dir}")
    wording = parse_wording(params.get("goals"), spec_dir, selection.seed)
    worded = instructions(wording, {g.task_id: g.game_file.parent for g in chosen})
    return AlfworldTaskSource([g.task() for g in chosen], worded)


def parse_params(params: dict[str, Any], spec_dir: Path) -> Selection:
    unknown = sorted(set(params) - set(_PARAMS))
    if unknown:
        raise SpecError(f"alfworld: unknown params {unknown}; allowed: {', '.join(_PARAMS)}")
    split = params.get("split")
    if not isinstance(split, str) or not split or "/" in split or split.startswith("."):
        raise SpecError(f"alfworld: split must be the name of a folder under json_2.1.1/ (e.g. \"valid_seen\"), got {split!r}")
    task_types = params.get("task_types", list(TASK_TYPES))
    if (
        not isinstance(task_types, list)
        or not task_types
        or any(t not in TASK_TYPES for t in task_types)
        or len(set(task_types)) != len(task_types)
    ):
        raise SpecError(f"alfworld: task_types must list distinct names from {', '.join(TASK_TYPES)}, got {task_types!r}")
    per_type, num_tasks, seed = _count(params, "per_type"), _count(params, "num_tasks"), _integer(params, "seed", 0)
    # The disk is looked at last, so that every mistake in the spec itself is reported first.
    split_dir = _data_root(params.get("data_dir"), spec_dir) / "json_2.1.1" / split
    return Selection(split_dir, tuple(task_types), per_type, num_tasks, seed)


def _data_root(data_dir: Any, spec_dir: Path) -> Path:
    if data_dir is None:
        env = os.environ.get("ALFWORLD_DATA")
        if not env:
            raise SpecError(f"alfworld: no ALFWorld data: ALFWORLD_DATA is not set; {GET_DATA}")
        root, origin = Path(env).expanduser(), "ALFWORLD_DATA"
    elif isinstance(data_dir, str) and data_dir:
        root, origin = spec_dir / Path(os.path.expandvars(data_dir)).expanduser(), "data_dir"
    else:
        raise SpecError(f"alfworld: data_dir must be a path (a string), got {data_dir!r}")
    if not (root / "json_2.1.1").is_dir():
        raise SpecError(f"alfworld: no ALFWorld data at {root} ({origin}): no json_2.1.1/ there; {GET_DATA}")
    return root


def _integer(params: dict[str, Any], key: str, default: int) -> int:
    value = params.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise SpecError(f"alfworld: {key} must be an integer, got {value!r}")
    return value


def _count(params: dict[str, Any], key: str) -> int | None:
    if key not in params:
        return None
    value = _integer(params, key, 0)
    if value < 1:
        raise SpecError(f"alfworld: {key} must be at least 1, got {value}")
    return value


# --- playing ------------------------------------------------------------------------------------


class AlfworldTaskSource:
    """A list of ALFWorld tasks whose `ref` is the path of a `game.tw-pddl`; `instructions` words
    the goal of some of them (task id -> sentence) instead of the game's own sentence."""

    def __init__(self, tasks: list[Task], instructions: dict[str, str] | None = None) -> None:
        self._tasks = list(tasks)
        self._instructions = dict(instructions or {})

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def make(self, task: Task) -> AlfworldEnv:
        return AlfworldEnv(task, Path(task.ref), self._instructions.get(task.task_id))


class AlfworldEnv(KnowsItsPlan):
    """One ALFWorld game on the real engine (textworld's PDDL env with ALFWorld's wrappers).

    `infos` of each observation: `game_file`. `oracle_plan()` is a shortest plan from the start,
    `plan_source` how it was found (prag.envs.alfworld.plans), and `goal_sentence` the game's own
    goal sentence (for tests, oracle baselines, SPL and scoring a goal reading; no part of what an
    agent may see). `instruction`, when given, is the goal as the agent is told it instead of the
    game's own sentence.
    """

    def __init__(self, task: Task, game_file: Path, instruction: str | None = None) -> None:
        self.task = task
        self.game_file = Path(game_file)
        self.instruction = instruction
        self._engine: Any = None
        self._goal = ""
        self.goal_sentence: str | None = None
        self._history: list[tuple[str, str]] = []
        self._plan: list[str] | None = None
        self.plan_source: str | None = None
        self._done = True


    def reset(self) -> Observation:
        with argv_kept(), for_play():
            if self._engine is None:
                self._engine = _start_engine(self.game_file)
            state = self._engine.reset()
        intro = _BANNER.sub("", state.feedback)
        match = _GOAL.search(intro)
        if not match:
            raise PragError(f"{self.game_file}: the intro has no 'Your task is to: …' line; not an ALFWorld game")
        self.goal_sentence = match.group(1)
        self._goal = self.instruction or self.goal_sentence
        text = intro[: match.start()].strip()
        self._history = [("", text)]
        if self._plan is None:
            found = shortest_plan(self.game_file, self._goal_plan)
            self._plan, self.plan_source = list(found.actions), found.source
        self._done = bool(state.won)
        return self._observe(state, text)

    def step(self, action: str) -> Observation:
        if self._engine is None or self._done:
            raise PragError("the episode is over (or never began): call reset() first")
        action = action.strip()
        state, _score, _done = self._engine.step(action)
        text = state.feedback.strip()
        self._history.append((action, text))
        self._done = bool(state.won)
        return self._observe(state, text)

    def close(self) -> None:
        if self._engine is not None:
            close_engine(self._engine)
            self._engine = None

    def _goal_plan(self) -> list[str]:
        """A shortest plan planned on the part of the game its goal can use, as the game's
        commands (as textworld's planner writes its own); [] when the game has none."""
        game = self._engine.unwrapped
        operators = goal_operators(game._game_data["pddl_domain"], game._game_data["pddl_problem"])
        return game._pddl_state.plan_to_templated_actions(list(operators or []), game._entity_infos)

    def _observe(self, state: Any, text: str) -> Observation:
        location, triples = scene_graph(self._history, _facts(state))
        return Observation(
            goal=self._goal,
            text=text,
            admissible=list(state.admissible_commands or []),
            scene_triples=triples,
            scene_text=scene_text_from_triples(location, triples),
            won=bool(state.won),
            done=self._done,
            infos={"game_file": str(self.game_file)},
            location=location,
        )


@contextmanager
def argv_kept() -> Iterator[None]:
    """Keep `sys.argv` as it was: fast_downward's PDDL translator, which textworld runs when it loads
    a game and again at every reset, sets `sys.argv` for the whole process (its options module parses
    the command line), and the CLI and tests of the caller read theirs."""
    saved = sys.argv
    try:
        yield
    finally:
        sys.argv = saved


def _start_engine(game_file: Path) -> Any:
    """Load a game as ALFWorld does; alfworld and textworld are imported only when a game is played."""
    if not game_file.is_file():
        raise PragError(f"no ALFWorld game at {game_file}: check the task's ref and the data folder")
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

    # No planner here (neither `policy_commands` nor the `walkthrough` extra): the shortest plan,
    # which only SPL needs, is a property of the game file, found once (prag.envs.alfworld.plans)
    # on the part of the game its goal can use (prag.envs.alfworld.shortest).
    memoize_engine()
    infos = textworld.EnvInfos(admissible_commands=True, won=True, facts=True)
    return textworld.start(str(game_file), request_infos=infos, wrappers=[AlfredDemangler(), AlfredInfos])


def close_engine(engine: Any) -> None:
    """Close a game; its planner library goes back to be used by the next game (see memo.py)."""
    engine.close()
    pddl = engine.unwrapped
    library = getattr(pddl, "downward_lib", None)
    if library is not None:
        pddl.downward_lib = None
        give_back(library)


def _facts(state: Any) -> list[Fact]:
    # Demangled names keep a trailing space when they have no number ("agent1 ").
    return [(p.name, tuple(v.name.strip() for v in p.arguments)) for p in state.facts or []]
