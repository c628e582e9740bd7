"""Task-set specs (TOML): the shipped ones parse, bad ones fail with a message that says what to fix."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from prag.envs.alfworld.env import TASK_TYPES
from prag.envs.registry import FAMILIES
from prag.envs.spec import list_specs, load_spec
from prag.errors import SpecError

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def alfworld_spec(tmp_path: Path, params: str, max_steps: str = "50") -> Path:
    return write(tmp_path, f'env = "alfworld"\nmax_steps = {max_steps}\n[params]\n{params}\n')


@pytest.mark.parametrize("path", sorted((REPO / "envs").glob("*.toml")), ids=lambda p: p.stem)
def test_every_shipped_spec_parses(path: Path) -> None:
    spec = load_spec(str(path))
    assert spec.env in FAMILIES and spec.max_steps >= 1 and spec.description


def test_specs_are_listed_by_name() -> None:
    names = {p.stem for p in list_specs()}
    assert {"alfworld-valid-seen", "alfworld-valid-train"} <= names


@pytest.mark.parametrize(
    "text,fix",
    [
        ('env = "alfred"\nmax_steps = 5\n', r"unknown env 'alfred': use one of .*alfworld.*add your own family"),
        ('env = "alfworld"\nmax_steps = "ten"\n', r"'max_steps' must be a int, got 'ten'"),
        ('env = "alfworld"\nmax_steps = 0\n', r"max_steps must be at least 1"),
        ('env = "alfworld"\nmax_steps = 5\nsteps = 3\n', r"unknown keys \['steps'\]; allowed: name, env"),
        ('max_steps = 5\n', r"missing key 'env'"),
        ('env = "alfworld"\nmax_steps = [5\n', r"not valid TOML"),
    ],
)
def test_bad_spec_says_what_to_fix(tmp_path: Path, text: str, fix: str) -> None:
    with pytest.raises(SpecError, match=fix):
        load_spec(str(write(tmp_path, text)))


def test_unknown_spec_name_points_to_the_list() -> None:
    with pytest.raises(SpecError, match="prag envs list"):
        load_spec("no-such-spec")


@pytest.mark.parametrize(
    "params,fix",
    [
        ('split = "valid_seen"\nsplits = 3', r"unknown params \['splits'\]; allowed: split, data_dir"),
        ("", r"split must be the name of a folder under json_2.1.1/"),
        ('split = "valid_seen"\nper_type = "3"', r"per_type must be an integer, got '3'"),
        ('split = "valid_seen"\nnum_tasks = 0', r"num_tasks must be at least 1"),
        ('split = "valid_seen"\nseed = true', r"seed must be an integer"),
        ('split = "valid_seen"\ntask_types = ["pick_and_place"]', r"task_types must list distinct names from pick_and_place_simple"),
        ('split = "valid_seen"\ndata_dir = 7', r"data_dir must be a path"),
    ],
)
def test_bad_alfworld_params_say_what_to_fix(tmp_path: Path, params: str, fix: str) -> None:
    with pytest.raises(SpecError, match=fix):
        load_spec(str(alfworld_spec(tmp_path, params))).open()


def test_missing_data_directory_says_how_to_get_the_data(tmp_path: Path) -> None:
    spec = load_spec(str(alfworld_spec(tmp_path, 'split = "valid_seen"\ndata_dir = "nowhere"')))
    with pytest.raises(SpecError) as info:
        spec.open()
    message = str(info.value)
    assert str(tmp_path / "nowhere") in message
    assert "ALFWORLD_DATA" in message and "data_dir" in message and "alfworld-download" in message


def test_unset_alfworld_data_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    with pytest.raises(SpecError, match="ALFWORLD_DATA is not set; set ALFWORLD_DATA"):
        load_spec(str(alfworld_spec(tmp_path, 'split = "valid_seen"'))).open()


def test_unknown_split_lists_the_splits_there(alfworld_data: Path, tmp_path: Path) -> None:
    spec = load_spec(str(alfworld_spec(tmp_path, f'split = "valid_unseen"\ndata_dir = "{alfworld_data}"')))
    with pytest.raises(SpecError, match="no split 'valid_unseen' .*the splits there: valid_seen, valid_train"):
        spec.open()


def test_shipped_alfworld_specs_give_the_filtered_splits(alfworld_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))
    seen = load_spec("alfworld-valid-seen").open().tasks()
    train = load_spec("alfworld-valid-train").open().tasks()
    assert (len(seen), len(train)) == (140, 200)
    assert all(Path(t.ref).name == "game.tw-pddl" and Path(t.ref).is_file() for t in seen + train)


def test_relative_data_dir_is_read_from_the_spec_folder(alfworld_data: Path, tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(alfworld_data)
    params = 'split = "valid_train"\ndata_dir = "data"\nper_type = 2\nseed = 4'
    tasks = load_spec(str(alfworld_spec(tmp_path, params))).open().tasks()
    assert Counter(t.task_type for t in tasks) == {t: 2 for t in TASK_TYPES}
    assert [t.task_id for t in tasks] == [t.task_id for t in load_spec(str(tmp_path / "spec.toml")).open().tasks()]
