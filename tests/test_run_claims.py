"""Run states through `prag run` and `prag stats`, on the real grid world with a scripted stand-in
LLM: a second `--resume` of a run that a live process plays is refused with that process's pid,
and a run whose process was killed shows as `running (stale)` and resumes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import held_cli, plan_follower, plans_of, wait_for_episodes, write_spec
from typer.testing import CliRunner

from prag.cli import _register, app, common
from prag.llm.scripted import ScriptedLLM
from prag.store import Store

_register()
WIDE = {"COLUMNS": "300"}


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env=WIDE)


def states(db) -> dict[str, str]:
    result = invoke("stats", db, "--json")
    assert result.exit_code == 0, result.output
    return {run["id"]: run["status"] for run in json.loads(result.output)["runs"]}


def test_a_resume_of_a_run_being_played_is_refused_and_a_killed_run_is_stale(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = write_spec(tmp_path, "three", ["throw_away_trash", "collect_toys", "water_plants"])
    db = tmp_path / "s.db"
    script = held_cli(tmp_path, spec, db, episodes=1)  # holds after one stored episode
    process = subprocess.Popen(
        [sys.executable, str(script), "run", spec, "--store", str(db), "--rounds", "1", "--name", "victim", "--no-prior"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **WIDE},
    )
    try:
        wait_for_episodes(process, db, 1)
        assert states(db) == {"victim": "running"}
        second = invoke("run", "--resume", "victim", "--store", db)
        assert second.exit_code == 1 and "Traceback" not in second.output
        with Store(db) as store:
            player = store.run_claims()["victim"]
        # The run is played by a child of `prag run` (prag.cli.supervisor): that process is named.
        assert player is not None and _parent(player.pid) == process.pid
        assert f"run victim is being resumed elsewhere (pid {player.pid} on " in second.output
        process.send_signal(signal.SIGKILL)  # no resume message, no status written
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    # Killed with `prag run`, the run's process wrote nothing either.
    deadline = time.monotonic() + 60
    while Path(f"/proc/{player.pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert states(db) == {"victim": "running (stale)"}
    assert "running (stale)" in invoke("stats", db).output

    monkeypatch.setattr(common, "test_llm", lambda llm: ScriptedLLM(plan_follower(plans_of(spec))))
    resumed = invoke("run", "--resume", "victim", "--store", db)
    assert resumed.exit_code == 0, resumed.output
    assert states(db) == {"victim": "finished"}
    with Store(db) as store:
        assert len({e.task_id for e in store.episodes("victim")}) == 3  # each task once
        assert store.run_claims() == {"victim": None}


def _parent(pid: int) -> int:
    """The parent of process `pid`, from /proc."""
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
