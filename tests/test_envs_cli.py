"""`prag envs list` and `prag envs play` through typer's test runner, on real ALFWorld games."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import prag.cli.envs_cmd  # noqa: F401  (adds `envs` to the app)
from prag.cli import app
from prag.envs.spec import load_spec

runner = CliRunner()


@pytest.fixture
def data(alfworld_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))
    return alfworld_data


@pytest.fixture(scope="module")
def plan_of_task_2(alfworld_data: Path) -> list[str]:
    """The planner's plan for task 2 of alfworld-valid-seen, read through the library."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALFWORLD_DATA", str(alfworld_data))
        source = load_spec("alfworld-valid-seen").open()
        env = source.make(source.tasks()[2])
        try:
            env.reset()
            return env.oracle_plan()
        finally:
            env.close()


def test_list_shows_the_specs() -> None:
    result = runner.invoke(app, ["envs", "list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") > 3}
    assert "alfworld" in rows["alfworld-valid-seen"] and " 50 " in rows["alfworld-valid-seen"]
    assert "valid_train" in rows["alfworld-valid-train"]


def test_list_shows_a_broken_spec_as_invalid_and_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "broken.toml").write_text('env = "nowhere"\nmax_steps = 3\n')
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["envs", "list"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    broken = next(line for line in result.output.splitlines() if "broken" in line)
    assert "invalid" in broken and "unknown env 'nowhere'" in broken
    assert "alfworld-valid-seen" in result.output


def test_play_wins_a_real_game_fed_its_plan(data: Path, plan_of_task_2: list[str]) -> None:
    # The first action by its number in the listed actions, the rest by their text.
    first = runner.invoke(app, ["envs", "play", "alfworld-valid-seen", "--task", "2"], input="quit\n")
    listed = [line.split(". ", 1) for line in first.output.splitlines() if line.strip()[:1].isdigit()]
    number = next(n.strip() for n, action in listed if action == plan_of_task_2[0])
    lines = [number] + plan_of_task_2[1:]
    result = runner.invoke(app, ["envs", "play", "alfworld-valid-seen", "--task", "2"], input="\n".join(lines) + "\n")
    assert result.exit_code == 0, result.output
    assert "Goal:" in result.output and "Scene graph:" in result.output and "at: middle of room" in result.output
    assert f"won after {len(plan_of_task_2)} steps" in result.output
    assert "not won" not in result.output


def test_play_quit_ends_without_a_win(data: Path) -> None:
    result = runner.invoke(app, ["envs", "play", "alfworld-valid-seen", "--task", "2"], input="look\n999\nquit\n")
    assert result.exit_code == 0, result.output
    assert "no action numbered 999" in result.output
    assert "not won after 1 steps" in result.output


def test_bad_spec_name_is_a_clean_error() -> None:
    result = runner.invoke(app, ["envs", "play", "no-such-spec"])
    assert result.exit_code == 1
    assert "no spec named 'no-such-spec'" in result.output and "prag envs list" in result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception)  # only the clean SystemExit of exit code 1


def test_task_out_of_range_is_a_clean_error(data: Path) -> None:
    result = runner.invoke(app, ["envs", "play", "alfworld-valid-seen", "--task", "140"])
    assert result.exit_code == 1
    assert "has 140 tasks: give --task from 0 to 139" in result.output


def test_missing_data_is_a_clean_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    result = runner.invoke(app, ["envs", "play", "alfworld-valid-seen"])
    assert result.exit_code == 1
    assert "set ALFWORLD_DATA" in result.output and "Traceback" not in result.output
