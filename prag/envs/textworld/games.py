"""TextWorld games made offline by TextWorld's own generators, seeded, and cached on first use.

The challenges are the ones `tw-make` offers (tw-cooking, tw-treasure_hunter, tw-coin_collector,
and `custom` with world size / nb objects / quest length), called through the Python API. Games are
compiled to Inform7 `.z8` story files (the compiler ships inside the textworld wheel and runs
offline) and played through Jericho; the `.json` beside each `.z8` carries the game's logic, which
gives the engine's facts, admissible commands and the winning plan.

A game lives in `cache_dir()/textworld/<hash of challenge, settings, seed, textworld version>/`
and is kept only after its own plan has won it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import textworld
import textworld.challenges
from jericho.jericho import UnsupportedGameWarning
from textworld import GameOptions
from textworld.generator import (
    CouldNotCompileGameError,
    QuestGenerationError,
    compile_game,
    make_game,
)

from prag.errors import PragError, SpecError
from prag.paths import cache_dir

GAME_FILE = "game.z8"

Setting = tuple[type, Any, Callable[[Any], bool], str]  # kind, default (None: required), check, rule


@contextmanager
def quiet_jericho() -> Iterator[None]:
    """Jericho calls every TextWorld game "not fully supported" (it cannot read their score);
    TextWorld's own state tracking reads score and win, so the warning tells us nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsupportedGameWarning)
        yield


def _one_of(*values: Any) -> Callable[[Any], bool]:
    return lambda value: value in values


def _between(low: int, high: int | None = None) -> Callable[[int], bool]:
    return lambda value: value >= low and (high is None or value <= high)


# Each challenge's settings: name -> (type, default, check, what is allowed). Defaults are tw-make's,
# except custom's quest length/breadth, which tw-make leaves as ranges; a task set wants them fixed.
SETTINGS: dict[str, dict[str, Setting]] = {
    "tw-cooking": {
        "recipe": (int, 1, _between(1, 5), "ingredients in the recipe, 1 to 5"),
        "take": (int, 0, _between(0, 5), "ingredients to find, 0 to `recipe`"),
        "go": (int, 1, _one_of(1, 6, 9, 12), "number of rooms, one of 1, 6, 9, 12"),
        "open": (bool, False, _one_of(True, False), "containers and doors need opening"),
        "cook": (bool, False, _one_of(True, False), "ingredients need cooking"),
        "cut": (bool, False, _one_of(True, False), "ingredients need cutting"),
        "drop": (bool, False, _one_of(True, False), "the inventory has limited capacity"),
        "recipe_seed": (int, 0, _between(0), "0 or a positive seed that reshuffles the recipe (needs take >= 1)"),
        "split": (str, "", _one_of("", "train", "valid", "test"), "food split: train, valid or test"),
    },
    "tw-treasure_hunter": {
        "level": (int, None, _between(1, 30), "difficulty level, 1 to 30"),
    },
    "tw-coin_collector": {
        "level": (int, None, _between(1, 300), "difficulty level, 1 to 300 (at most 100 rooms)"),
    },
    "custom": {
        "world_size": (int, 5, _between(1, 100), "number of rooms, 1 to 100"),
        # Bounded so that a spec cannot ask TextWorld's generator for a world no memory holds.
        "nb_objects": (int, 10, _between(0, 1000), "least number of objects, 0 to 1000"),
        "quest_length": (int, 5, _between(1, 100), "actions the quest needs, 1 to 100"),
        "quest_breadth": (int, 1, _between(1, 20), "subquests of the quest, 1 to 20"),
    },
}


@dataclass(frozen=True)
class GameSpec:
    """One game to generate: a challenge, its full settings (defaults filled in) and a seed."""

    challenge: str
    settings: tuple[tuple[str, Any], ...]
    seed: int

    @property
    def key(self) -> str:
        """The cache key: a hash of everything that decides the game, the generator's version too."""
        blob = json.dumps(
            {"challenge": self.challenge, "settings": dict(self.settings), "seed": self.seed,
             "textworld": textworld.__version__},
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def path(self) -> Path:
        return cache_dir() / "textworld" / self.key / GAME_FILE


def check_settings(
    challenge: Any, given: dict[str, Any], where: str, also_allowed: tuple[str, ...] = ()
) -> tuple[tuple[str, Any], ...]:
    """Validate one challenge's settings and fill in defaults; SpecError says what is allowed.

    `also_allowed` names the caller's own keys, so that the message about an unknown key is whole.
    """
    if not isinstance(challenge, str) or challenge not in SETTINGS:
        raise SpecError(f"{where}: 'challenge' must be one of {', '.join(SETTINGS)}, got {challenge!r}")
    schema = SETTINGS[challenge]
    unknown = sorted(set(given) - set(schema))
    if unknown:
        raise SpecError(
            f"{where}: unknown keys {unknown}; allowed: {', '.join(also_allowed + tuple(schema))}"
            f" (the {challenge} settings are {', '.join(schema)})"
        )
    settings: dict[str, Any] = {}
    for name, (kind, default, check, rule) in schema.items():
        if name not in given:
            if default is None:
                raise SpecError(f"{where}: {challenge} needs {name!r} ({rule})")
            settings[name] = default
            continue
        value = given[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)) or not check(value):
            raise SpecError(f"{where}: {name!r} must be {rule}, got {value!r}")
        settings[name] = value
    if challenge == "tw-cooking":
        if settings["take"] > settings["recipe"]:
            raise SpecError(f"{where}: 'take' ({settings['take']}) must not exceed 'recipe' ({settings['recipe']})")
        if settings["recipe_seed"] > 0 and settings["take"] == 0:
            raise SpecError(f"{where}: 'recipe_seed' > 0 needs 'take' >= 1 (TextWorld reshuffles among found food)")
    return tuple(sorted(settings.items()))


def build_game(spec: GameSpec) -> Any:
    """Generate the `textworld.Game` of a spec (deterministic in the seed), without compiling it."""
    options = GameOptions()
    options.seeds = spec.seed
    settings = dict(spec.settings)
    try:
        with quiet_jericho():  # tw-cooking plays a compiled copy of its game to record the walkthrough
            if spec.challenge == "custom":
                options.nb_rooms = settings["world_size"]
                options.nb_objects = settings["nb_objects"]
                chaining = options.chaining
                chaining.min_length = chaining.max_length = chaining.max_depth = settings["quest_length"]
                chaining.min_breadth = chaining.max_breadth = settings["quest_breadth"]
                return make_game(options)
            _, make, _ = textworld.challenges.CHALLENGES[spec.challenge]
            if spec.challenge == "tw-cooking":
                settings["split"] = settings["split"] or None  # TextWorld's "no split"
            return make(settings=settings, options=options)
    except QuestGenerationError:
        raise SpecError(
            f"TextWorld found no quest for {spec.challenge} {settings} with seed {spec.seed}: "
            "make quest_length smaller or world_size / nb_objects larger"
        ) from None


def _plan_wins(game_file: Path) -> bool:
    with quiet_jericho():
        env = textworld.start(str(game_file), request_infos=textworld.EnvInfos(policy_commands=True))
    try:
        state = env.reset()
        won = False
        for command in state["policy_commands"]:
            state, _, _ = env.step(command)
            won = bool(state["won"])
        return won
    finally:
        env.close()


def _complete(game_file: Path) -> bool:
    # Jericho plays the .z8; the .json beside it holds the logic (facts, admissible commands, plan).
    return game_file.is_file() and game_file.with_suffix(".json").is_file()


def ensure_game(spec: GameSpec) -> Path:
    """The path of the spec's compiled game, generating it on first use (later calls reuse it)."""
    final = spec.path
    if _complete(final):
        return final
    parent = final.parent.parent
    parent.mkdir(parents=True, exist_ok=True)
    # Build in a private directory and rename it into place, so a concurrent or interrupted
    # generation never leaves a half-written game where a reader would take it as done.
    work = Path(tempfile.mkdtemp(prefix=f".{spec.key}-", dir=parent))
    try:
        options = GameOptions()
        options.path = str(work / GAME_FILE)
        options.force_recompile = True
        try:
            compile_game(build_game(spec), options)
        except CouldNotCompileGameError as exc:
            raise PragError(f"the Inform7 compiler shipped with textworld failed on {spec}: {exc}") from None
        if not _plan_wins(work / GAME_FILE):
            raise PragError(f"generated TextWorld game {spec} is not won by its own plan; try another seed")
        (work / "params.json").write_text(
            json.dumps({"challenge": spec.challenge, "settings": dict(spec.settings), "seed": spec.seed}, indent=1)
        )
        if final.parent.exists() and not _complete(final):
            shutil.rmtree(final.parent)  # a game someone partly deleted
        try:
            os.rename(work, final.parent)
        except OSError:
            if not _complete(final):  # lost a race only if the winner left a game behind
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final
