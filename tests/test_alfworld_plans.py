"""The shortest plan of a real ALFWorld game is found once per game file, never at every reset."""
from __future__ import annotations

from pathlib import Path

import pytest
from textworld.envs.pddl.logic import PddlState

from prag.envs.alfworld import plans
from prag.envs.alfworld.env import AlfworldTaskSource, find_games


@pytest.fixture
def replans(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """Counts textworld's planner runs, with an empty user cache and no shipped plans."""
    monkeypatch.setenv("PRAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(plans, "shipped_plans", lambda: {})
    calls: list[int] = []
    real = PddlState.replan

    def counted(self, infos):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(self, infos)

    monkeypatch.setattr(PddlState, "replan", counted)
    return calls


def test_the_planner_runs_once_for_a_game_played_again(alfworld_data: Path, replans: list[int]) -> None:
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
    assert len(replans) == 1
    assert lengths[0] == lengths[1] == len(plan) > 0
    assert plan[0] in obs.admissible


def test_a_shipped_plan_needs_no_planner(alfworld_data: Path, replans: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    game = find_games(alfworld_data / "json_2.1.1" / "valid_seen")[0]
    key = plans.game_key(game.game_file.read_bytes())
    monkeypatch.setattr(plans, "shipped_plans", lambda: {key: ["go to desk 1", "use desklamp 1"]})
    env = AlfworldTaskSource([game.task()]).make(game.task())
    env.reset()
    env.close()
    assert replans == [] and env.shortest_path_length == 2


def test_every_shipped_valid_seen_plan_is_known(alfworld_data: Path) -> None:
    """The table prag ships covers the whole valid_seen split, so that its episodes never plan."""
    games = find_games(alfworld_data / "json_2.1.1" / "valid_seen")
    shipped = plans.shipped_plans()
    assert all(plans.game_key(g.game_file.read_bytes()) in shipped for g in games)
