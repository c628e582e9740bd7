"""The shortest plan of a real ALFWorld game (SPL's reference) is found once per game file, never
at every reset, and without textworld's planner on the whole game: planned on the part of the
game its goal can use, it is as long as textworld's plan."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from textworld.envs.pddl.logic import PddlState

from prag.envs.alfworld import env as alfworld_env
from prag.envs.alfworld import plans
from prag.envs.alfworld.env import TASK_TYPES, AlfworldGame, AlfworldTaskSource, find_games
from prag.envs.alfworld.shortest import goal_problem


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, int]:
    """Counts textworld's planner runs and prag's goal plans, with an empty user cache and no
    shipped plans."""
    monkeypatch.setenv("PRAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(plans, "shipped_plans", lambda: {})
    calls = {"textworld": 0, "goal": 0}
    replan, goal_operators = PddlState.replan, alfworld_env.goal_operators

    def counted_replan(self, infos):  # type: ignore[no-untyped-def]
        calls["textworld"] += 1
        return replan(self, infos)

    def counted_goal(domain: str, problem: str) -> tuple[str, ...] | None:
        calls["goal"] += 1
        return goal_operators(domain, problem)

    monkeypatch.setattr(PddlState, "replan", counted_replan)
    monkeypatch.setattr(alfworld_env, "goal_operators", counted_goal)
    return calls


def textworlds_plans() -> dict[str, list[str]]:
    """The table prag ships (textworld's planner's plans, benchmarks/alfworld_plans.py), which the
    fixture hides from the games."""
    table: dict[str, list[str]] = json.loads((Path(plans.__file__).parents[2] / "data" / plans.SHIPPED).read_text())
    return table


def one_of_each_type(split: Path) -> list[AlfworldGame]:
    games = find_games(split)
    return [next(g for g in games if g.task_type == task_type) for task_type in TASK_TYPES]


def test_the_plan_is_planned_once_for_a_game_played_again(alfworld_data: Path, planned: dict[str, int]) -> None:
    game = next(g for g in find_games(alfworld_data / "json_2.1.1" / "valid_seen") if g.task_type == "pick_heat_then_place_in_recep")
    source = AlfworldTaskSource([game.task()])
    lengths = []
    for _ in range(2):  # two rounds, each a new env as the runner makes them
        env = source.make(game.task())
        obs = env.reset()
        env.reset()  # and a second reset of the same env
        plan = env.oracle_plan()
        lengths.append(env.shortest_path_length)
        env.close()
    assert planned == {"textworld": 0, "goal": 1}
    assert lengths[0] == lengths[1] == len(plan) > 0
    assert plan[0] in obs.admissible


def test_the_goal_plan_wins_as_short_as_textworlds_planner(alfworld_data: Path, planned: dict[str, int]) -> None:
    """One real game of each type, with nothing shipped or cached: the plan made without
    textworld's planner is as long as the one it made (the table prag ships), and wins."""
    shipped = textworlds_plans()
    for game in one_of_each_type(alfworld_data / "json_2.1.1" / "valid_seen"):
        env = AlfworldTaskSource([game.task()]).make(game.task())
        obs = env.reset()
        plan = env.oracle_plan()
        assert len(plan) == len(shipped[plans.game_key(game.game_file.read_bytes())]), game.task_id
        assert env.plan_source == plans.GOAL
        for action in plan:
            assert action in obs.admissible, (game.task_id, action)
            obs = env.step(action)
        assert obs.won, game.task_id
        env.close()
    assert planned == {"textworld": 0, "goal": len(TASK_TYPES)}


def test_a_shipped_plan_needs_no_planner(alfworld_data: Path, planned: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    game = find_games(alfworld_data / "json_2.1.1" / "valid_seen")[0]
    key = plans.game_key(game.game_file.read_bytes())
    monkeypatch.setattr(plans, "shipped_plans", lambda: {key: ["go to desk 1", "use desklamp 1"]})
    env = AlfworldTaskSource([game.task()]).make(game.task())
    env.reset()
    env.close()
    assert planned == {"textworld": 0, "goal": 0}
    assert env.shortest_path_length == 2 and env.plan_source == plans.TEXTWORLD


def test_a_cached_plan_says_which_planner_made_it(alfworld_data: Path, planned: dict[str, int]) -> None:
    """Entries cached before plans were made on the goal's part were textworld's planner's."""
    game = find_games(alfworld_data / "json_2.1.1" / "valid_seen")[0]
    entry = plans.user_cache() / f"{plans.game_key(game.game_file.read_bytes())}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(json.dumps({"plan": ["go to desk 1"]}))
    assert plans.known_plan(game.game_file) == plans.ShortestPlan(("go to desk 1",), plans.TEXTWORLD)
    entry.write_text(json.dumps({"plan": ["go to desk 1"], "by": "goal"}))
    assert plans.known_plan(game.game_file) == plans.ShortestPlan(("go to desk 1",), plans.GOAL)
    entry.write_text(json.dumps({"plan": ["go to desk 1"], "by": "someone else"}))
    assert plans.known_plan(game.game_file) is None  # planned again


def test_every_shipped_valid_seen_plan_is_known(alfworld_data: Path) -> None:
    """The table prag ships covers the whole valid_seen split, so that its episodes never plan."""
    games = find_games(alfworld_data / "json_2.1.1" / "valid_seen")
    shipped = plans.shipped_plans()
    assert all(plans.game_key(g.game_file.read_bytes()) in shipped for g in games)


# --- the part of a game its goal can use ------------------------------------------------------------

DOMAIN = """(define (domain d) (:requirements :typing) (:types agent location receptacle object rtype otype)
  (:constants SinkBasinType - rtype)
  (:predicates (objectType ?o - object ?t - otype) (receptacleType ?r - receptacle ?t - rtype)
               (inReceptacle ?o - object ?r - receptacle))
  ; (:action slice ... KnifeType) is a comment: no kind it names is kept
  (:action clean :parameters (?r - receptacle) :precondition (receptacleType ?r SinkBasinType) :effect ()))"""

PROBLEM = """(define (problem p) (:domain d)
(:objects agent1 - agent loc_1 loc_2 - location
  Apple_1 Apple_2 Knife_1 Book_1 - object
  Fridge_1 Sink_1 Desk_1 Shelf_1 - receptacle
  AppleType KnifeType BookType - otype FridgeType SinkBasinType DeskType ShelfType - rtype)
(:init (objectType Apple_1 AppleType) (objectType Apple_2 AppleType) (objectType Knife_1 KnifeType)
  (objectType Book_1 BookType) (receptacleType Fridge_1 FridgeType) (receptacleType Sink_1 SinkBasinType)
  (receptacleType Desk_1 DeskType) (receptacleType Shelf_1 ShelfType)
  (inReceptacle Apple_1 Shelf_1) (inReceptacle Book_1 Desk_1) (inReceptacle Apple_2 Fridge_1))
(:goal (exists (?o - object ?r - receptacle) (and (objectType ?o AppleType) (receptacleType ?r FridgeType)
  (inReceptacle ?o ?r)))))"""


def test_the_goal_problem_keeps_the_goals_kinds_and_where_they_are() -> None:
    smaller = goal_problem(DOMAIN, PROBLEM)
    words = smaller.split("(:objects")[1].split(")")[0].split()
    declared = {words[i - 1]: words[i + 1] for i, word in enumerate(words) if word == "-"}
    # apples (the goal's kind) and the shelf holding one, the fridge (the goal's), the sink (the
    # domain's clean names its kind); not the knife (named in a comment only), the book or its desk
    assert {name for name, kind in declared.items() if kind in ("object", "receptacle")} == {
        "apple_1", "apple_2", "shelf_1", "fridge_1", "sink_1"}
    assert {"agent1", "loc_1", "loc_2"} <= set(declared)
    assert "book_1" not in smaller and "(inreceptacle apple_1 shelf_1)" in smaller
    assert "booktype - otype" in smaller  # the kinds themselves stay declared
