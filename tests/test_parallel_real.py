"""`--workers 2` on real ALFWorld games: textworld's engine is not thread-safe, so the episodes run in
worker processes, and they are the same episodes one worker plays."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.store import Store

_register()
runner = CliRunner()


def played(db: Path, workers: int) -> dict[str, tuple[bool, list[str | None], int | None]]:
    result = runner.invoke(app, ["run", "alfworld-valid-seen", "--store", str(db), "--limit", "4", "--max-steps", "15",
                                 "--rounds", "1", "--workers", str(workers), "--name", "r"])
    assert result.exit_code == 0, result.output
    with Store(db, create=False) as store:
        return {e.task_id: (e.won, [s.action for s in e.steps], e.shortest_path) for e in store.episodes("r")}


def test_two_workers_play_the_episodes_one_worker_plays(alfworld_data: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))  # the worker processes read it too
    one = played(tmp_path / "one.db", 1)
    two = played(tmp_path / "two.db", 2)
    assert len(one) == 4 and two == one
