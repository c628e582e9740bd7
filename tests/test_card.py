"""`prag compare STORE RUN --card`: a real ALFWorld run's protocol stated from its recorded config."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.envs.alfworld import plans
from prag.run.config import recorded_config
from prag.store import Store

_register()
runner = CliRunner()


def invoke(*args: object, data: Path):  # type: ignore[no-untyped-def]
    """The CLI with ALFWORLD_DATA at `data` (other tests' fixtures may have repointed it)."""
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "ALFWORLD_DATA": str(data)})


@pytest.fixture(scope="module")
def real_run(alfworld_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """Two real valid_seen games, 10 steps each, default sources (they take no LLM call here), two
    of the goal readers, a thought before each action and the rules alone for where things are
    (settings the card and its command must state)."""
    db = tmp_path_factory.mktemp("card") / "s.db"
    played = invoke("run", "alfworld-valid-seen", "--store", db, "--limit", 2, "--max-steps", 10,
                    "--rounds", 1, "--seed", 7, "--readers", "template,experience", "--think", "--places", "rules",
                    "--name", "card-run",
                    data=alfworld_data)
    assert played.exit_code == 0, played.output
    return db, "card-run", alfworld_data


def test_card_states_the_protocol_the_run_recorded(real_run: tuple[Path, str, Path]) -> None:
    db, run_id, data = real_run
    result = invoke("compare", db, run_id, "--card", "--json", data=data)
    assert result.exit_code == 0, result.output
    card = json.loads(result.output)
    with Store(db, create=False) as store:
        config = recorded_config(store.run(run_id))
    protocol = card["protocol"]
    assert protocol["family"] == "alfworld" and protocol["split"] == "valid_seen"
    assert set(protocol["engine"]) == {"alfworld", "textworld"}
    assert protocol["games"] == 2 and protocol["skipped"] == ["138 of 140 (--limit 2)"]
    assert protocol["step_cap"] == config.experiment.max_steps == 10
    assert protocol["goal_wording"] == "template"
    assert protocol["goal_readers"] == list(config.agent.readers) == ["template", "experience"]
    assert protocol["sources"] == list(config.agent.sources)
    assert protocol["places"] == list(config.agent.places) == ["rules"]
    assert protocol["ask_policy"] == config.agent.ask
    assert protocol["model"] == config.experiment.llm and protocol["seeds"]["llm"] == 7
    assert protocol["shortest_plans"] == {plans.TEXTWORLD: 2}  # valid_seen's are shipped
    assert [r["round"] for r in card["rounds"]] == [0] and card["rounds"][0]["episodes"] == 2
    for option in ("--max-steps 10", "--limit 2", "--seed 7", "--readers template,experience", "--think", "--places rules"):
        assert option in card["command"]


def test_card_in_markdown_and_its_misuse(real_run: tuple[Path, str, Path]) -> None:
    db, run_id, data = real_run
    text = invoke("compare", db, run_id, "--card", data=data).output
    assert "| step cap | 10 |" in text and "split `valid_seen`" in text and "prag run alfworld-valid-seen" in text
    assert "| where things are | rules |" in text
    assert "| goal wording | template; read by template, experience |" in text
    both = invoke("compare", db, "--card", data=data)
    assert both.exit_code != 0 and "one RUN" in both.output and "Traceback" not in both.output


def test_card_says_skipped_games_are_unknown_where_the_games_cannot_be_listed(
    real_run: tuple[Path, str, Path], tmp_path: Path
) -> None:
    db, run_id, _ = real_run
    card = json.loads(invoke("compare", db, run_id, "--card", "--json", data=tmp_path).output)  # no games there
    assert card["protocol"]["skipped"] is None and card["protocol"]["games"] == 2
    assert any("could not be listed" in note for note in card["notes"])
    assert "skipped: unknown" in invoke("compare", db, run_id, "--card", data=tmp_path).output


def test_card_says_the_shortest_plans_of_games_never_played_here_were_planned_by_prag(
    alfworld_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A valid_train game (no plan shipped) with an empty user cache: its shortest plan was
    planned on the part of the game its goal can use, and the card says so."""
    monkeypatch.setenv("PRAG_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "s.db"
    played = invoke("run", "alfworld-valid-train", "--store", db, "--limit", 1, "--max-steps", 3, "--rounds", 1,
                    "--llm", "random", "--name", "cold", data=alfworld_data)
    assert played.exit_code == 0, played.output
    card = json.loads(invoke("compare", db, "cold", "--card", "--json", data=alfworld_data).output)
    assert card["protocol"]["shortest_plans"] == {plans.GOAL: 1}
    assert f"| SPL's shortest plans | {plans.GOAL}: 1 episode |" in invoke("compare", db, "cold", "--card", data=alfworld_data).output


def test_card_of_a_run_with_training_rounds_says_which_rounds_played_which_set(alfworld_data: Path, tmp_path: Path) -> None:
    """Protocol (b): two rounds on valid_train games, then the valid_seen game once. The card counts
    the task set's games alone and names the training rounds, so a reader does not take round 0 for
    the task set's first try."""
    db = tmp_path / "s.db"
    played = invoke("run", "alfworld-valid-seen", "--train", "alfworld-valid-train", "--store", db, "--limit", 1,
                    "--max-steps", 2, "--rounds", 2, "--llm", "random", "--name", "b", data=alfworld_data)
    assert played.exit_code == 0, played.output
    card = json.loads(invoke("compare", db, "b", "--card", "--json", data=alfworld_data).output)
    protocol = card["protocol"]
    assert [r["round"] for r in card["rounds"]] == [0, 1, 2]
    assert protocol["games"] == 1 and protocol["training_rounds"] == 2
    assert protocol["training"] == "rounds 0-1 on alfworld-valid-train, split `valid_train`; round 2 on the task set"
    text = invoke("compare", db, "b", "--card", data=alfworld_data).output
    assert "| training | rounds 0-1 on alfworld-valid-train" in text and "retrieves the training rounds only" in text
