"""Real ALFWorld games: ALFWorld's filter, play through our adapter, and the scene graph's no-leak rule."""
from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from prag.envs.alfworld.env import (
    TASK_TYPES,
    AlfworldEnv,
    AlfworldTaskSource,
    Selection,
    find_games,
    select_games,
)
from prag.envs.alfworld.graph import (
    START,
    current_location,
    named_entities,
    scene_graph,
)
from prag.envs.base import Environment
from prag.envs.wrappers import StepLimit
from prag.errors import PragError

# Per-type counts of the games ALFWorld's filter keeps, from the shared data's README.
README_COUNTS = {
    "valid_seen": dict(zip(TASK_TYPES, (35, 13, 27, 16, 25, 24))),
    "valid_train": dict(zip(TASK_TYPES, (46, 19, 37, 25, 28, 45))),
}


@pytest.fixture(scope="module")
def seen_games(alfworld_data: Path):
    return find_games(alfworld_data / "json_2.1.1" / "valid_seen")


@pytest.fixture(scope="module")
def heat_env(seen_games):
    """One real game (heat an apple, put it on a dining table), on the real engine."""
    game = next(g for g in seen_games if g.task_type == "pick_heat_then_place_in_recep")
    env = AlfworldTaskSource([game.task()]).make(game.task())
    yield env
    env.close()


# --- ALFWorld's filter on real data --------------------------------------------------------------


@pytest.mark.parametrize("split,total", [("valid_seen", 140), ("valid_train", 200)])
def test_filter_keeps_the_games_alfworld_keeps(alfworld_data: Path, split: str, total: int) -> None:
    games = find_games(alfworld_data / "json_2.1.1" / split)
    assert len(games) == total
    assert Counter(g.task_type for g in games) == README_COUNTS[split]
    assert not [g for g in games if "movable" in g.task_id or "Sliced" in g.task_id]
    assert len({g.task_id for g in games}) == total


def test_filter_drops_unsolvable_sliced_and_movable_games(seen_games, tmp_path: Path) -> None:
    """Copies of one kept game, altered as ALFWorld's filter looks at them."""
    source = seen_games[0].game_file.parent
    split = tmp_path / "Sliced-data" / "json_2.1.1" / "some_split"  # a parent folder's name does not count

    def copy(task_dir: str, solvable: bool = True, game: bool = True) -> None:
        trial = split / task_dir / "trial_1"
        trial.mkdir(parents=True)
        shutil.copy(source / "traj_data.json", trial)
        if game:
            data = json.loads((source / "game.tw-pddl").read_text())
            (trial / "game.tw-pddl").write_text(json.dumps({**data, "solvable": solvable}))

    copy("kept")
    copy("unsolvable", solvable=False)
    copy("no_game", game=False)
    copy("pick_and_place_simple-Apple-None-Sliced-1")
    copy("pick_and_place_simple-Pen-Mug-movable-1")
    assert [g.task_id for g in find_games(split)] == ["kept/trial_1"]


def test_selection_is_seeded_and_capped(seen_games) -> None:
    base = Selection(split_dir=Path("unused"))
    per_type = select_games(seen_games, Selection(base.split_dir, per_type=2, seed=1))
    assert Counter(g.task_type for g in per_type) == {t: 2 for t in TASK_TYPES}
    assert per_type == select_games(seen_games, Selection(base.split_dir, per_type=2, seed=1))
    assert per_type != select_games(seen_games, Selection(base.split_dir, per_type=2, seed=2))
    only = select_games(seen_games, Selection(base.split_dir, task_types=("look_at_obj_in_light",), num_tasks=5))
    assert len(only) == 5 and {g.task_type for g in only} == {"look_at_obj_in_light"}
    assert [g.task_id for g in only] == sorted(g.task_id for g in only)


# --- playing a real game --------------------------------------------------------------------------


def test_real_game_is_won_by_its_planner_plan(heat_env: AlfworldEnv) -> None:
    assert isinstance(heat_env, Environment)
    obs = heat_env.reset()
    plan = heat_env.oracle_plan()
    assert obs.goal == "heat some apple and put it in diningtable."
    assert "Your task is to" not in obs.text and obs.text.startswith("You are in the middle of a room.")
    assert heat_env.shortest_path_length == len(plan) > 0
    assert not obs.won and not obs.done
    for action in plan:
        assert action in obs.admissible
        assert not obs.won
        obs = heat_env.step(action)
    assert obs.won and obs.done
    with pytest.raises(PragError, match="reset"):
        heat_env.step("look")


def test_wrong_action_does_not_win(heat_env: AlfworldEnv) -> None:
    obs = heat_env.reset()
    plan = heat_env.oracle_plan()
    for action in plan[:-1]:
        obs = heat_env.step(action)
    wrong = next(a for a in obs.admissible if a != plan[-1] and a.startswith("go to"))
    obs = heat_env.step(wrong)
    assert not obs.won and not obs.done
    assert heat_env.step("dance wildly").text == "Nothing happens."


def test_step_cap_ends_the_episode_without_a_win(seen_games) -> None:
    game = seen_games[0]
    env = StepLimit(AlfworldTaskSource([game.task()]).make(game.task()), 2)
    try:
        env.reset()
        assert not env.step("look").done
        last = env.step("look")
        assert last.done and not last.won
    finally:
        env.close()


def test_scene_graph_of_real_play_names_only_what_was_seen(heat_env: AlfworldEnv) -> None:
    obs = heat_env.reset()
    seen_text = obs.text
    assert obs.scene_text == "at: middle of room" and obs.scene_triples == []
    for action in heat_env.oracle_plan():
        obs = heat_env.step(action)
        seen_text += "\n" + obs.text
        assert obs.scene_text.splitlines()[0].startswith("at: ")
        for subject, _, target in obs.scene_triples:
            for entity in (subject, target):
                if re.fullmatch(r"\w+ \d+", entity):
                    assert re.search(rf"(?<!\w){entity}(?!\w)", seen_text), f"{entity} leaked"
        if action.startswith("heat "):
            obj = action.split(" with ")[0].removeprefix("heat ")
            assert ("agent", "holds", obj) in obs.scene_triples
            assert (obj, "is", "hot") in obs.scene_triples


# --- the scene graph as a pure function -----------------------------------------------------------

FACTS = [
    ("receptacleatlocation", ("fridge 1", "loc 1")),
    ("receptacleatlocation", ("countertop 1", "loc 2")),
    ("receptacleatlocation", ("countertop 2", "loc 2")),
    ("openable", ("fridge 1",)),
    ("inreceptacle", ("egg 1", "fridge 1")),
    ("inreceptacle", ("cup 1", "countertop 1")),
    ("inreceptacle", ("cup 10", "countertop 1")),
    ("inreceptacle", ("knife 1", "countertop 2")),
    ("iscool", ("egg 1",)),
    ("ishot", ("cup 10",)),
    ("atlocation", ("agent1", "loc 2")),
]
INTRO = ("", "You are in the middle of a room. Looking quickly around you, you see a countertop 2, a countertop 1, and a fridge 1.")


def test_location_is_the_key_node_and_starts_in_the_middle_of_the_room() -> None:
    assert scene_graph([INTRO], FACTS) == (START, [])
    history = [INTRO, ("go to countertop 1", "You arrive at loc 2. On the countertop 1, you see a cup 10.")]
    location, triples = scene_graph(history, FACTS)
    assert location == "countertop 1"
    assert set(triples) == {("cup 10", "on", "countertop 1"), ("cup 10", "is", "hot")}


def test_location_follows_actions_that_succeed_on_a_receptacle() -> None:
    receptacles = {"fridge 1", "countertop 1", "countertop 2"}
    went = [INTRO, ("go to countertop 1", "You arrive at loc 2. On the countertop 1, you see nothing.")]
    assert current_location(went + [("go to fridge 1", "Nothing happens.")], receptacles) == "countertop 1"
    # Receptacles sharing an engine location: the one just used is the one faced.
    assert current_location(went + [("put cup 1 in/on countertop 2", "You put ...")], receptacles) == "countertop 2"
    assert current_location(went + [("move cup 1 to countertop 2", "You move ...")], receptacles) == "countertop 2"
    assert current_location(went + [("examine cup 1", "This is a normal cup 1.")], receptacles) == "countertop 1"


def test_closed_receptacle_hides_its_contents_until_opened() -> None:
    arrived = [INTRO, ("go to fridge 1", "You arrive at loc 1. The fridge 1 is closed.")]
    location, triples = scene_graph(arrived, FACTS)
    assert location == "fridge 1" and triples == [("fridge 1", "is", "closed")]
    opened = arrived + [("open fridge 1", "You open the fridge 1. The fridge 1 is open. In it, you see a egg 1.")]
    _, triples = scene_graph(opened, FACTS + [("opened", ("fridge 1",))])
    assert set(triples) == {("fridge 1", "is", "open"), ("egg 1", "in", "fridge 1"), ("egg 1", "is", "cool")}


def test_objects_never_named_to_the_agent_stay_out() -> None:
    # cup 1 and knife 1 are where the agent stands, but no feedback named them: the engine knows, the agent not.
    history = [INTRO, ("go to countertop 1", "You arrive at loc 2. On the countertop 1, you see a cup 10.")]
    _, triples = scene_graph(history, FACTS + [("holds", ("agent1", "apple 3")), ("ishot", ("apple 3",))])
    names = {name for triple in triples for name in (triple[0], triple[2])}
    assert "cup 1" not in names and "knife 1" not in names and "apple 3" not in names
    # The agent's own words do not count as seeing: only feedback does.
    history.append(("take cup 1 from countertop 1", "Nothing happens."))
    assert "cup 1" not in {t[0] for t in scene_graph(history, FACTS)[1]}


def test_held_objects_and_their_states_are_in_the_graph() -> None:
    history = [
        INTRO,
        ("go to countertop 2", "You arrive at loc 2. On the countertop 2, you see a knife 1."),
        ("take knife 1 from countertop 2", "You pick up the knife 1 from the countertop 2."),
    ]
    facts = [f for f in FACTS if f[1][0] != "knife 1"] + [("holds", ("agent1", "knife 1")), ("isclean", ("knife 1",))]
    location, triples = scene_graph(history, facts)
    assert location == "countertop 2"
    assert set(triples) == {("agent", "holds", "knife 1"), ("knife 1", "is", "clean")}


def test_named_entities_match_whole_names_only() -> None:
    assert named_entities(["you see a cup 10, and a mug 1."], ["cup 1", "cup 10", "mug 1", "mug 11"]) == {"cup 10", "mug 1"}
