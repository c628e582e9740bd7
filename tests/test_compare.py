"""`prag compare` on a known store: tables, JSON figures, the PNG plot, unknown runs."""
from __future__ import annotations

import dataclasses
import json

import matplotlib.image
import pytest
from support import episode, run
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.run.config import ExperimentConfig, RunConfig
from prag.run.plot import success_figure
from prag.run.report import compare
from prag.store import Store

_register()
runner = CliRunner()

# Run "p" (mode prag): three rounds of five tasks; t5 is missing from round 2 (interrupted).
# Values: (won, actions taken, shortest path or None).
P_ROUNDS = {
    0: {"t1": (True, 4, 4), "t2": (True, 8, 4), "t3": (False, 6, 3), "t4": (False, 5, None), "t5": (False, 6, 2)},
    1: {"t1": (True, 4, 4), "t2": (False, 9, 4), "t3": (True, 3, 3), "t4": (False, 5, None), "t5": (True, 4, 2)},
    2: {"t1": (True, 5, 4), "t2": (True, 4, 4), "t3": (True, 6, 3), "t4": (False, 6, None)},
}
TYPES = {"t1": "heat", "t2": "heat", "t3": "heat", "t4": "clean", "t5": "clean"}
# Run "q" (mode none): two rounds, no progress.
Q_ROUNDS = {r: {"t1": (True, 4, 4), "t2": (False, 6, 4)} for r in (0, 1)}


def add(store: Store, run_id: str, rounds: dict) -> None:
    for round_, tasks in rounds.items():
        for task_id, (won, taken, shortest) in tasks.items():
            record = episode(run_id, round_, task_id, won=won, task_type=TYPES[task_id],
                             scenes=tuple(f"scene {t}" for t in range(taken + 1)))
            store.add_episode(dataclasses.replace(
                record, shortest_path=shortest, llm_calls=taken, prompt_tokens=100 * taken,
                cached_tokens=50 * taken, reasks=1, seconds=2.0 * taken, llm_seconds=1.5 * taken,
            ))


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("compare") / "runs.db"
    with Store(path) as store:
        store.add_run(run("p", rounds=3))
        store.add_run(dataclasses.replace(run("q", rounds=2), mode="none"))
        store.add_run(dataclasses.replace(run("r", rounds=3), mode="goal"))  # started, nothing played yet
        add(store, "p", P_ROUNDS)
        add(store, "q", Q_ROUNDS)
        # A human correction is not a play: it must not count in round 0's figures.
        store.add_episode(dataclasses.replace(episode("p", 0, "t3", won=True), source="correction"))
    return path


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_json_figures_of_one_run(store_path):
    result = invoke("compare", store_path, "p", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [run["id"] for run in data["runs"]] == ["p"]
    r0, r1, r2 = data["rounds"]
    assert (r0["episodes"], r0["wins"], r1["wins"], r2["episodes"], r2["wins"]) == (5, 2, 3, 4, 3)
    assert r0["total_sr"] == pytest.approx(0.4)
    assert r0["task_sr"] == pytest.approx((2 / 3 + 0) / 2)  # heat 2/3, clean 0/2
    assert r1["task_sr"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    # SPL over the episodes with a known shortest path (t4's is unknown):
    assert r0["spl"] == pytest.approx((1 + 4 / 8 + 0 + 0) / 4) and r0["spl_episodes"] == 4
    assert r1["spl"] == pytest.approx((1 + 0 + 1 + 2 / 4) / 4)
    assert r2["spl"] == pytest.approx((4 / 5 + 1 + 3 / 6) / 3) and r2["spl_episodes"] == 3
    assert r0["llm_calls_per_episode"] == pytest.approx(29 / 5)
    assert r0["reuse_share"] == pytest.approx(0.5)
    assert r0["reasks_per_step"] == pytest.approx(5 / 29)
    assert (r0["seconds_per_step"], r0["llm_seconds_per_step"], r0["other_seconds_per_step"]) == pytest.approx((2.0, 1.5, 0.5))
    clean = next(t for t in r1["by_type"] if t["task_type"] == "clean")
    assert (clean["episodes"], clean["wins"], clean["spl"], clean["spl_episodes"]) == (2, 1, pytest.approx(0.5), 1)


def test_json_transition_table_of_three_rounds(store_path):
    data = json.loads(invoke("compare", store_path, "p", "--json").output)
    got = [(t["from_round"], t["to_round"], t["succeeded"], t["succeeded_then_won"], t["failed"], t["failed_then_won"])
           for t in data["transitions"]]
    assert got == [
        (0, 1, 2, 1, 3, 2),  # won {t1, t2}: t1 again; lost {t3, t4, t5}: t3, t5 won
        (0, 2, 2, 2, 2, 1),  # t5 was not played in round 2
        (1, 2, 2, 2, 2, 1),  # won {t1, t3} (t5 unplayed): both; lost {t2, t4}: t2 won
    ]
    assert data["transitions"][0]["kept_share"] == pytest.approx(0.5)
    assert data["transitions"][0]["recovered_share"] == pytest.approx(2 / 3)


def test_tables_show_every_run_side_by_side(store_path):
    result = invoke("compare", store_path)
    assert result.exit_code == 0, result.output
    out = result.output
    for title in ("round over round", "Total SR by round", "per task type", "transitions"):
        assert title in out
    assert "p (prag)" in out and "q (none)" in out and "r (goal)" in out
    assert "40.0% (2/5)" in out  # p round 0
    assert "50.0% (1/2)" in out  # q, and the kept share of p from round 0 to 1
    assert "66.7% (2/3)" in out  # p: of the tasks lost in round 0, won in round 1
    assert "0/3" in out  # r played nothing of its 3 rounds


def test_plot_has_one_line_per_run_with_episodes(store_path, tmp_path):
    out = tmp_path / "plots" / "sr.png"
    result = invoke("compare", store_path, "--plot", out)
    assert result.exit_code == 0, result.output
    image = matplotlib.image.imread(out)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 500
    assert image[..., :3].std() > 0.05  # not a blank canvas

    with Store(store_path, create=False) as store:
        figure = success_figure(compare(store))
    (axes,) = figure.axes
    lines = axes.get_lines()
    assert [line.get_label() for line in lines] == ["p (prag)", "q (none)"]  # r has no episodes yet
    assert list(lines[0].get_ydata()) == pytest.approx([40.0, 60.0, 75.0])
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ["p (prag)", "q (none)"]
    assert axes.get_title() and axes.get_xlabel() and axes.get_ylabel()


def test_unknown_run_is_a_clean_error(store_path):
    result = invoke("compare", store_path, "p", "nope")
    assert result.exit_code == 1
    assert "no run 'nope'" in result.output and "Traceback" not in result.output


def test_plot_of_runs_without_episodes_is_refused(store_path, tmp_path):
    result = invoke("compare", store_path, "r", "--plot", tmp_path / "empty.png")
    assert result.exit_code == 1 and "no episodes yet" in result.output
    assert not (tmp_path / "empty.png").exists()


def test_missing_store_is_a_clean_error(tmp_path):
    result = invoke("compare", tmp_path / "none.db")
    assert result.exit_code == 1 and "no store" in result.output


def test_plot_labels_of_equal_values_go_to_both_sides():
    store = Store.memory()
    for run_id in ("a", "b"):
        store.add_run(run(run_id, rounds=1))
        add(store, run_id, {0: {"t1": (True, 4, 4), "t2": (False, 6, 4)}})
    (axes,) = success_figure(compare(store)).axes
    assert sorted(label.xyann[1] for label in axes.texts) == [-14, 7]  # one below, one above 50%


def test_train_then_test_run_marks_its_test_round(tmp_path):
    path = tmp_path / "tt.db"
    with Store(path) as store:
        config = RunConfig(ExperimentConfig(spec="envs/test.toml", train="envs/train.toml", rounds=2))
        store.add_run(dataclasses.replace(run("tt", rounds=2), config=config.to_dict()))
        add(store, "tt", {0: {"t1": (False, 5, 4), "t2": (True, 4, 4)}, 1: {"t1": (True, 4, 4), "t2": (True, 4, 4)}})
        add(store, "tt", {2: {"t4": (True, 5, None), "t5": (False, 6, 2)}})  # the test set: other tasks
    data = json.loads(invoke("compare", path, "--json").output)
    assert [(r["round"], r["test"], r["total_sr"]) for r in data["rounds"]] == [(0, False, 0.5), (1, False, 1.0), (2, True, 0.5)]
    # train rounds and the test round share no task: no transition row for them
    assert [(t["from_round"], t["to_round"]) for t in data["transitions"]] == [(0, 1)]
    table = invoke("compare", path).output
    assert "2 (test)" in table and "envs/train.toml → test" in table
