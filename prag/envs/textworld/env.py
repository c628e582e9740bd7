"""The TextWorld family: generated TextWorld games behind `prag.envs.base.Environment`.

A spec's `[params]` names a challenge, its settings and the seeds:

    [params]
    challenge = "tw-cooking"      # tw-cooking | tw-treasure_hunter | tw-coin_collector | custom
    recipe = 2                    # the challenge's settings (see textworld_games.SETTINGS)
    seeds = [1, 2, 3]             # or: num_tasks = 8 and seed = 100 (seeds 100..107)

The scene graph comes from the engine's facts, cut down to what the player can see: the current
room (the key node), its exits, the things in it, on supporters and in open containers there
(recursively), and the inventory. Things in other rooms or in closed containers stay out.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import textworld
from textworld.logic import Proposition, Variable

from prag.envs.base import (
    check_task_count,
    KnowsItsPlan,
    Observation,
    Task,
    Triple,
    scene_text_from_triples,
)
from prag.envs.textworld.games import (
    GameSpec,
    check_settings,
    ensure_game,
    quiet_jericho,
)
from prag.errors import PragError, SpecError

_INFOS = textworld.EnvInfos(
    objective=True, facts=True, won=True, lost=True, admissible_commands=True,
    policy_commands=True, score=True, max_score=True,
)
_DIRECTIONS = {"north_of": ("north", "south"), "south_of": ("south", "north"),
               "east_of": ("east", "west"), "west_of": ("west", "east")}
# tw-cooking's recipe bookkeeping: facts about objects that nobody can see by looking at them.
_BOOKKEEPING = re.compile(r"ingredient_\d+|used")
_BANNER_LINE = re.compile(r"[ _|\\/$<>]*[_|\\/$][ _|\\/$<>]*")  # the ASCII-art TEXTWORLD title
_PROMPT_LINE = re.compile(r"\n>[^\n]*\Z")  # the prompt plus Jericho's status line


def _name(var: Variable) -> str:
    return {"P": "you", "I": "inventory"}.get(var.type, var.name)


def _state(predicate: str) -> tuple[str, str]:
    """A one-place fact as relation and object: open -> (is, open), needs_cooking -> (needs, cooking)."""
    verb, _, rest = predicate.partition("_")
    return (verb, rest.replace("_", " ")) if rest else ("is", predicate)


def visible_scene(facts: Iterable[Proposition]) -> tuple[str | None, list[Triple]]:
    """The player's room and the triples about what the player can see there."""
    facts = list(facts)
    room = next((f.arguments[1] for f in facts if f.name == "at" and f.arguments[0].type == "P"), None)
    if room is None:
        return None, []
    opened = {f.arguments[0] for f in facts if f.name == "open"}
    placed = [f for f in facts if f.name in ("at", "in", "on") and f.arguments[0].type != "P"]
    visible: set[Variable] = {room}
    grown = True
    while grown:  # until nothing new: a box on the table, then the ring in the open box, ...
        grown = False
        for fact in placed:
            thing, holder = fact.arguments
            seen = holder == room or holder.type == "I" or (
                holder in visible and (fact.name == "on" or holder in opened)
            )
            if seen and thing not in visible:
                visible.add(thing)
                grown = True
    triples: list[Triple] = [
        (_name(f.arguments[0]), f.name, _name(f.arguments[1])) for f in placed if f.arguments[0] in visible
    ]
    exits: dict[Variable, str] = {}
    doors: dict[Variable, Variable] = {}
    for fact in facts:
        args = fact.arguments
        if fact.name in _DIRECTIONS and len(args) == 2:
            towards, back = _DIRECTIONS[fact.name]
            if args[1] == room:
                exits[args[0]] = towards
            elif args[0] == room:
                exits[args[1]] = back
        elif fact.name == "link" and args[0] == room:
            doors[args[2]] = args[1]
            visible.add(args[1])
    for neighbour, direction in exits.items():
        door = doors.get(neighbour)
        triples.append((_name(door) if door else "exit", f"{direction} of", _name(room)))
    triples += [
        (_name(f.arguments[0]), *_state(f.name))
        for f in facts
        if len(f.arguments) == 1 and f.arguments[0] in visible and not _BOOKKEEPING.fullmatch(f.name)
    ]
    return _name(room), sorted(set(triples))


def clean_text(feedback: str) -> str:
    """The game's text without the title banner, the prompt and the status line."""
    text = _PROMPT_LINE.sub("", feedback)
    lines = [line.rstrip() for line in text.splitlines() if not _BANNER_LINE.fullmatch(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class TextworldEnv(KnowsItsPlan):
    """One generated TextWorld game, played through Jericho with TextWorld's state tracking."""

    goal_sentence: str | None = None  # its goals are told in its own words

    def __init__(self, task: Task, game_file: str | Path) -> None:
        self.task = task
        self.game_file = Path(game_file)
        self._env: Any = None
        self._plan: list[str] | None = None
        self._goal = ""
        self._steps = 0


    def reset(self) -> Observation:
        if self._env is None:
            with quiet_jericho():
                self._env = textworld.start(str(self.game_file), request_infos=_INFOS)
        state = self._env.reset()
        self._plan = list(state["policy_commands"])
        self._goal = state["objective"]
        self._steps = 0
        return self._observe(state)

    def step(self, action: str) -> Observation:
        if self._env is None:
            raise PragError("call reset() before step()")
        state, _, _ = self._env.step(action)
        self._steps += 1
        return self._observe(state)

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None

    def _observe(self, state: Any) -> Observation:
        location, triples = visible_scene(state["facts"])
        won, lost = bool(state["won"]), bool(state["lost"])
        return Observation(
            goal=self._goal,
            text=clean_text(state.feedback),
            admissible=list(state["admissible_commands"]),
            scene_triples=triples,
            scene_text=scene_text_from_triples(location, triples),
            won=won,
            done=won or lost,
            infos={"score": state["score"], "max_score": state["max_score"], "lost": lost,
                   "location": location, "steps": self._steps},
            location=location,
            # The game's points (tw-cooking gives one a recipe step): what the progress source
            # learns sub-goals from, where the goal text names no schema's goal (goals = "learned").
            score=float(state["score"]),
        )


@dataclass(frozen=True)
class TextworldTasks:
    """A task set of generated games; a game is generated (or taken from the cache) by `make`."""

    games: dict[str, GameSpec]  # task_id -> the game to generate

    def tasks(self) -> list[Task]:
        return [
            Task(task_id=task_id, task_type=spec.challenge, seed=spec.seed, ref=str(spec.path))
            for task_id, spec in self.games.items()
        ]

    def make(self, task: Task) -> TextworldEnv:
        spec = self.games.get(task.task_id)
        if spec is None:
            raise PragError(f"task {task.task_id!r} is not in this TextWorld task set")
        return TextworldEnv(task, ensure_game(spec))


_TASK_KEYS = ("challenge", "seeds", "num_tasks", "seed")


def _seeds(params: dict[str, Any]) -> list[int]:
    def is_seed(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**32

    if "seeds" in params:
        if "num_tasks" in params or "seed" in params:
            raise SpecError("[params]: give either 'seeds' or 'num_tasks' (+ 'seed'), not both")
        seeds = params["seeds"]
        if not isinstance(seeds, list) or not seeds or not all(map(is_seed, seeds)):
            raise SpecError(f"[params]: 'seeds' must be a non-empty list of integers 0 to 2**32-1, got {seeds!r}")
        check_task_count("[params]", len(seeds), "'seeds'")
        if len(set(seeds)) != len(seeds):
            raise SpecError(f"[params]: 'seeds' has repeats: {seeds}")
        return list(seeds)
    if "num_tasks" not in params:
        raise SpecError("[params]: give 'seeds = [...]' or 'num_tasks = N' (with an optional first 'seed')")
    count, first = params["num_tasks"], params.get("seed", 0)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise SpecError(f"[params]: 'num_tasks' must be a positive integer, got {count!r}")
    check_task_count("[params]", count, f"'num_tasks' {count}")
    if not is_seed(first) or not is_seed(first + count - 1):
        raise SpecError(f"[params]: 'seed' must be an integer from 0 with seed + num_tasks below 2**32, got {first!r}")
    return list(range(first, first + count))


def from_params(params: dict[str, Any], spec_dir: Path) -> TextworldTasks:
    """The family factory: validate `[params]` and list the games (generated on first `make`)."""
    challenge: Any = params.get("challenge")  # check_settings says what a valid one is
    settings = {k: v for k, v in params.items() if k not in _TASK_KEYS}
    checked = check_settings(challenge, settings, "[params]", also_allowed=_TASK_KEYS)
    return TextworldTasks(
        {f"{challenge}-{seed}": GameSpec(challenge, checked, seed) for seed in _seeds(params)}
    )
