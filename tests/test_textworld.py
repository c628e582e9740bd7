"""The TextWorld family on the real engine: games made by TextWorld's generators, compiled by the
Inform7 compiler in the textworld wheel, played through Jericho."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import textworld
from textworld.logic import Proposition, Variable

from support import fresh_cache
from prag.envs.base import Environment
from prag.envs.spec import load_spec
from prag.envs.textworld import games as textworld_games
from prag.envs.textworld.env import (
    TextworldEnv,
    TextworldTasks,
    from_params,
    visible_scene,
)
from prag.envs.textworld.games import GameSpec, build_game
from prag.envs.wrappers import StepLimit
from prag.errors import SpecError

REPO = Path(__file__).resolve().parents[1]

# One small game per challenge. Cooking seed 1 starts in the bedroom, two rooms from the kitchen,
# with the milk in the closed fridge: the plan is go north, go west, open fridge, take milk ...
KINDS: dict[str, dict] = {
    "tw-cooking": {"recipe": 1, "take": 1, "go": 6, "open": True, "seeds": [1]},
    "tw-treasure_hunter": {"level": 12, "seeds": [3]},
    "tw-coin_collector": {"level": 5, "seeds": [2]},
    "custom": {"world_size": 4, "nb_objects": 8, "quest_length": 3, "seeds": [5]},
}


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from fresh_cache(tmp_path_factory)


def source(kind: str) -> TextworldTasks:
    return from_params({"challenge": kind, **KINDS[kind]}, REPO / "envs")


def play(env: TextworldEnv, commands: list[str]) -> list[bool]:
    return [env.step(command).won for command in commands]


@pytest.mark.parametrize("kind", KINDS)
def test_generated_game_is_won_by_its_plan_and_not_by_a_wrong_one(kind: str) -> None:
    tasks = source(kind)
    (task,) = tasks.tasks()
    assert task.task_type == kind and task.task_id == f"{kind}-{task.seed}"
    env = tasks.make(task)
    assert isinstance(env, Environment)
    try:
        first = env.reset()
        assert first.goal and not first.won and not first.done
        assert "$$" not in first.text and first.admissible
        plan = env.oracle_plan()
        assert env.shortest_path_length == len(plan) > 0
        assert play(env, plan) == [False] * (len(plan) - 1) + [True]

        again = env.reset()  # a second episode starts from the same state
        assert again.scene_triples == first.scene_triples and env.oracle_plan() == plan
        assert not any(play(env, plan[1:])), "the plan without its first step must not win"
    finally:
        env.close()


def test_step_cap_ends_the_episode_without_a_win() -> None:
    tasks = source("tw-coin_collector")
    (task,) = tasks.tasks()
    env = StepLimit(TextworldEnv(task, textworld_games.ensure_game(tasks.games[task.task_id])), 2)
    try:
        env.reset()
        assert not env.step("look").done
        capped = env.step("look")
        assert capped.done and not capped.won
    finally:
        env.close()


def test_closed_container_and_other_rooms_stay_out_of_the_scene() -> None:
    tasks = source("tw-cooking")
    env = tasks.make(tasks.tasks()[0])
    try:
        start = env.reset()
        assert env.oracle_plan()[:4] == ["go north", "go west", "open fridge", "take milk from fridge"]
        things = {s for s, _, _ in start.scene_triples}
        assert start.infos["location"] == "bedroom" and "fridge" not in things and "milk" not in things
        env.step("go north")
        kitchen = env.step("go west")
        assert kitchen.scene_text.startswith("at: kitchen\n")
        assert {("fridge", "at", "kitchen"), ("fridge", "is", "closed")} <= set(kitchen.scene_triples)
        assert "milk" not in {s for s, _, _ in kitchen.scene_triples}
        opened = env.step("open fridge")
        assert {("fridge", "is", "open"), ("milk", "in", "fridge")} <= set(opened.scene_triples)
        assert ("milk", "in", "inventory") in env.step("take milk from fridge").scene_triples
    finally:
        env.close()


def _fact(name: str, *args: tuple[str, str]) -> Proposition:
    return Proposition(name, [Variable(n, t) for n, t in args])


def test_facts_become_triples_of_what_the_player_sees() -> None:
    you, inv = ("P", "P"), ("I", "I")
    kitchen, hall, cellar = ("kitchen", "r"), ("hall", "r"), ("cellar", "r")
    fridge, chest, box, table = ("fridge", "c"), ("chest", "c"), ("box", "c"), ("table", "s")
    door = ("oak door", "d")
    facts = [
        _fact("at", you, kitchen),
        _fact("at", fridge, kitchen), _fact("open", fridge), _fact("in", ("milk", "f"), fridge),
        _fact("at", chest, kitchen), _fact("closed", chest), _fact("in", ("coin", "o"), chest),
        _fact("at", table, kitchen), _fact("on", box, table), _fact("open", box),
        _fact("in", ("ring", "o"), box),  # nested: in an open box on a table, so visible
        _fact("in", ("knife", "o"), inv), _fact("sharp", ("knife", "o")),
        _fact("at", ("apple", "f"), hall),  # another room
        _fact("north_of", hall, kitchen), _fact("west_of", kitchen, cellar),
        _fact("link", kitchen, door, cellar), _fact("closed", door),
        _fact("free", kitchen, hall), _fact("match", ("key", "k"), chest),
        _fact("needs_cooking", ("milk", "f")), _fact("ingredient_1", ("milk", "f")),
    ]
    location, triples = visible_scene(facts)
    assert location == "kitchen"
    assert triples == sorted([
        ("fridge", "at", "kitchen"), ("fridge", "is", "open"), ("milk", "in", "fridge"),
        ("milk", "needs", "cooking"),
        ("chest", "at", "kitchen"), ("chest", "is", "closed"),
        ("table", "at", "kitchen"), ("box", "on", "table"), ("box", "is", "open"), ("ring", "in", "box"),
        ("knife", "in", "inventory"), ("knife", "is", "sharp"),
        ("exit", "north of", "kitchen"), ("oak door", "east of", "kitchen"), ("oak door", "is", "closed"),
    ])


def _fingerprint(game: textworld.Game) -> tuple:
    # What makes a game that game; the saved JSON drops some generator options, so not Game.__eq__.
    return (game.objective, sorted(map(str, game.world.facts)),
            sorted((key, info.name) for key, info in game.infos.items()), game.metadata.get("walkthrough"))


def test_same_seed_same_game_other_seed_other_game() -> None:
    for kind in KINDS:
        tasks = source(kind)
        (task,) = tasks.tasks()
        spec = tasks.games[task.task_id]
        saved = textworld.Game.load(str(textworld_games.ensure_game(spec).with_suffix(".json")))
        assert _fingerprint(build_game(spec)) == _fingerprint(saved), kind
    custom = source("custom").games["custom-5"]
    assert _fingerprint(build_game(GameSpec(custom.challenge, custom.settings, 6))) != _fingerprint(build_game(custom))


def test_a_cached_game_is_reused_not_regenerated(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (task,) = source("custom").tasks()
    game = Path(task.ref)
    first = textworld_games.ensure_game(source("custom").games[task.task_id])
    assert first == game and game.parent.parent == cache / "textworld"
    stamp = game.stat().st_mtime_ns

    def regenerate(spec: GameSpec) -> None:
        raise AssertionError(f"regenerated {spec}")

    monkeypatch.setattr(textworld_games, "build_game", regenerate)
    env = source("custom").make(task)  # a fresh task source finds the game in the cache
    try:
        assert env.reset().goal
    finally:
        env.close()
    assert game.stat().st_mtime_ns == stamp
    assert not [p for p in (cache / "textworld").iterdir() if p.name.startswith(".")], "a work dir was left"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"seeds": [1]}, "'challenge' must be one of"),
        ({"challenge": "tw-zork", "seeds": [1]}, "'challenge' must be one of"),
        ({"challenge": "tw-cooking", "recipes": 2, "seeds": [1]}, "unknown keys ['recipes']; allowed: challenge"),
        ({"challenge": "tw-treasure_hunter", "seeds": [1]}, "needs 'level'"),
        ({"challenge": "tw-treasure_hunter", "level": 31, "seeds": [1]}, "'level' must be difficulty level, 1 to 30"),
        ({"challenge": "tw-coin_collector", "level": "5", "seeds": [1]}, "'level' must be"),
        ({"challenge": "tw-cooking", "go": 5, "seeds": [1]}, "one of 1, 6, 9, 12"),
        ({"challenge": "tw-cooking", "open": "yes", "seeds": [1]}, "'open' must be"),
        ({"challenge": "tw-cooking", "recipe": 1, "take": 2, "seeds": [1]}, "'take' (2) must not exceed"),
        ({"challenge": "tw-cooking", "recipe_seed": 3, "seeds": [1]}, "needs 'take' >= 1"),
        ({"challenge": "custom"}, "give 'seeds = [...]' or 'num_tasks = N'"),
        ({"challenge": "custom", "seeds": [1], "num_tasks": 2}, "either 'seeds' or 'num_tasks'"),
        ({"challenge": "custom", "seeds": [-1]}, "'seeds' must be a non-empty list"),
        ({"challenge": "custom", "seeds": [1, 1]}, "repeats"),
        ({"challenge": "custom", "num_tasks": 0}, "'num_tasks' must be a positive integer"),
        ({"challenge": "custom", "world_size": 0, "num_tasks": 1}, "'world_size' must be number of rooms"),
    ],
)
def test_bad_params_say_what_to_fix(params: dict, message: str) -> None:
    with pytest.raises(SpecError) as error:
        from_params(params, REPO / "envs")
    assert message in str(error.value)


def test_shipped_specs_list_their_tasks_without_generating(cache: Path) -> None:
    before = set((cache / "textworld").glob("*")) if (cache / "textworld").exists() else set()
    for name, kind in [("textworld-cooking", "tw-cooking"), ("textworld-treasure", "tw-treasure_hunter"),
                       ("textworld-coin", "tw-coin_collector"), ("textworld-custom", "custom")]:
        spec = load_spec(str(REPO / "envs" / f"{name}.toml"))
        tasks = spec.open().tasks()
        assert len(tasks) == 8 and len({t.task_id for t in tasks}) == 8
        assert {t.task_type for t in tasks} == {kind}
        assert all(Path(t.ref).parent.parent == cache / "textworld" for t in tasks)
    after = set((cache / "textworld").glob("*")) if (cache / "textworld").exists() else set()
    assert after == before
    num = from_params({"challenge": "custom", "num_tasks": 3, "seed": 10}, REPO / "envs")
    assert [t.seed for t in num.tasks()] == [10, 11, 12]
