"""textworld's parses and PDDL translations kept per process (translations also in the user cache),
its planner library reused from a closed game, and no translation made for its planner
(prag.envs.alfworld.memo), play a real ALFWorld game exactly as textworld alone does, the first
time and again from what was kept."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# Plays a game's shortest plan and a few more actions; prints every observation as JSON.
PLAY = """
import json, sys
from pathlib import Path
from prag.envs.alfworld import env as alfworld
from prag.envs.alfworld.env import AlfworldTaskSource, find_games
if sys.argv[2] == "textworld-alone":
    alfworld.memoize_engine = lambda: None
if sys.argv[2] == "translations-cached":
    import fast_downward

    def refuse(*args, **kwargs):
        raise AssertionError("translated again, although the user cache holds the translation")

    fast_downward.pddl2sas = refuse
game = next(g for g in find_games(Path(sys.argv[1])) if g.task_type == "pick_heat_then_place_in_recep")
plays = []
for _ in range(int(sys.argv[3])):
    env = AlfworldTaskSource([game.task()]).make(game.task())
    obs = env.reset()
    seen = [[obs.text, obs.admissible, obs.scene_text]]
    for action in ["look", "inventory"] + env.oracle_plan():
        obs = env.step(action)
        seen.append([action, obs.text, obs.admissible, obs.scene_text, obs.won])
    env.close()
    plays.append(seen)
print(json.dumps(plays))
"""


def played(split: Path, how: str, times: int, cache: Path) -> list[Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PRAG_CACHE": str(cache)}
    out = subprocess.run([sys.executable, "-c", PLAY, str(split), how, str(times)], env=env, cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    plays: list[Any] = json.loads(out.splitlines()[-1])
    return plays


def test_kept_parses_play_a_game_as_textworld_alone(alfworld_data: Path, tmp_path: Path) -> None:
    split = alfworld_data / "json_2.1.1" / "valid_seen"
    [alone] = played(split, "textworld-alone", 1, tmp_path / "alone")
    first, again = played(split, "memoized", 2, tmp_path / "kept")
    assert alone[-1][-1] is True  # the plan wins: the whole game was played
    assert first == alone and again == alone
    # A new process plays it from the user cache's translations, without translating.
    [cached] = played(split, "translations-cached", 1, tmp_path / "kept")
    assert cached == alone
    # the game's own translation only: none optimised for textworld's planner, which never plans on it
    assert len(list((tmp_path / "kept" / "alfworld-sas").iterdir())) == 1


def test_a_damaged_cached_translation_is_translated_again(alfworld_data: Path, tmp_path: Path) -> None:
    split = alfworld_data / "json_2.1.1" / "valid_seen"
    [alone] = played(split, "memoized", 1, tmp_path)
    entries = sorted((tmp_path / "alfworld-sas").iterdir())
    for entry in entries:
        entry.write_bytes(b"not zlib")
    [again] = played(split, "memoized", 1, tmp_path)
    assert again == alone
    assert all(entry.read_bytes() != b"not zlib" for entry in entries)  # replaced by the new translations

