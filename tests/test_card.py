"""`prag compare STORE RUN --card`: a real ALFWorld run's protocol stated from its recorded config."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.run.config import recorded_config
from prag.store import Store

_register()
runner = CliRunner()


def invoke(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def real_run(alfworld_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """Two real valid_seen games, 10 steps each, default sources (they take no LLM call here)."""
    db = tmp_path_factory.mktemp("card") / "s.db"
    with pytest.MonkeyPatch.context() as patch:  # an earlier test module may have repointed it
        patch.setenv("ALFWORLD_DATA", str(alfworld_data))
        played = invoke("run", "alfworld-valid-seen", "--store", db, "--limit", 2, "--max-steps", 10,
                        "--rounds", 1, "--seed", 7, "--name", "card-run")
        assert played.exit_code == 0, played.output
        yield db, "card-run"


def test_card_states_the_protocol_the_run_recorded(real_run: tuple[Path, str]) -> None:
    db, run_id = real_run
    result = invoke("compare", db, run_id, "--card", "--json")
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
    assert protocol["sources"] == list(config.agent.sources)
    assert protocol["ask_policy"] == config.agent.ask
    assert protocol["model"] == config.experiment.llm and protocol["seeds"]["llm"] == 7
    assert [r["round"] for r in card["rounds"]] == [0] and card["rounds"][0]["episodes"] == 2
    assert "--max-steps 10" in card["command"] and "--limit 2" in card["command"] and "--seed 7" in card["command"]


def test_card_in_markdown_and_its_misuse(real_run: tuple[Path, str]) -> None:
    db, run_id = real_run
    text = invoke("compare", db, run_id, "--card").output
    assert "| step cap | 10 |" in text and "split `valid_seen`" in text and "prag run alfworld-valid-seen" in text
    both = invoke("compare", db, "--card")
    assert both.exit_code != 0 and "one RUN" in both.output and "Traceback" not in both.output
