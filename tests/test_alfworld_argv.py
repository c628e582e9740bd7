"""Playing an ALFWorld game leaves `sys.argv` alone.

textworld loads a PDDL game (and resets it) through fast_downward's translator, which sets
`sys.argv = ["translate.py", "domain", "task"]` for the whole process; the adapter puts it back.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from prag.envs.alfworld.env import AlfworldTaskSource
from prag.envs.alfworld.gen import generate_game
from prag.envs.base import Task


def test_generating_and_playing_a_game_keeps_sys_argv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["prag", "run", "alfworld-mini"]
    monkeypatch.setattr(sys, "argv", argv)

    game_file = generate_game("pick_and_place_simple", 3, tmp_path)  # loads and plays the game to verify it
    assert sys.argv is argv and sys.argv == ["prag", "run", "alfworld-mini"]

    task = Task("argv", "pick_and_place_simple", 3, str(game_file))
    env = AlfworldTaskSource([task]).make(task)
    try:
        env.reset()
        plan = env.oracle_plan()
        assert sys.argv is argv, "loading the game replaced sys.argv"
        env.step(plan[0])
        env.reset()  # a reset translates the PDDL problem again
        assert sys.argv is argv and sys.argv == ["prag", "run", "alfworld-mini"]
    finally:
        env.close()
