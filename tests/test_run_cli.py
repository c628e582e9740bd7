"""`prag run` through the command line, on the real grid world with a scripted stand-in LLM (set
through the CLI's test hook, `prag.cli.common.test_llm`): what a run stores, prints and writes,
parallel workers, Ctrl-C and `--resume`, and runs recorded by other versions of prag."""
from __future__ import annotations

import errno
import io
import itertools
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import held_cli, plan_follower, plans_of, signal_when_stored, start, write_spec
from rich.console import Console
from typer.testing import CliRunner

from prag.cli import _register, app, common
from prag.cli.run_cmd import DEFAULT, run_display
from prag.envs.spec import load_spec
from prag.llm.scripted import ScriptedLLM
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.runner import RunLog
from prag.store import Store
from prag.store.records import RunRecord

_register()
WIDE = {"COLUMNS": "300"}  # no wrapped lines in what is checked
# For tests of the runner's mechanics through its LLM stand-in: the LLM chooses every step (P-RAG as
# published), where the command line's default would let search win these grid tasks without it.
EVERY_STEP = ("--ask", "always")


def task_ids(spec: str) -> list[str]:
    return [task.task_id for task in load_spec(spec).open().tasks()]


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """(invoke, play, asked): `invoke` runs `prag` in tmp_path (runs/ goes there); `play(answer)`
    makes the commands' LLM a scripted stand-in answering `answer(messages)`; `asked` lists the
    --llm specs the commands built an LLM for."""
    monkeypatch.chdir(tmp_path)
    asked: list[str] = []

    def play(answer) -> None:
        def make(spec: str) -> ScriptedLLM:
            asked.append(spec)
            return ScriptedLLM(answer)

        monkeypatch.setattr(common, "test_llm", make)

    def invoke(*args: object):
        return CliRunner().invoke(app, [str(a) for a in args], env=WIDE)

    return invoke, play, asked


def test_a_run_stores_every_setting_and_writes_its_summary(tmp_path, cli):
    invoke, play, asked = cli
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"], max_steps=20)
    plans = plans_of(spec)
    lost = min(plans)
    play(plan_follower(plans, spoil={lost}))
    db = tmp_path / "s.db"
    result = invoke("run", spec, "--store", db, "--rounds", 2, "--k", 1, "--name", "cli", "--no-prior", "--think",
                    "--llm", "openai:stand-in", "--llm-timeout", 7.5, "--llm-retries", 0, "--seed", 3, *EVERY_STEP)
    assert result.exit_code == 0, result.output
    assert asked == ["openai:stand-in"]  # one LLM, built once for the run
    assert "round 0: 1/2 won (50%)" in result.output and "round 1: 1/2 won (50%)" in result.output
    summary = json.loads((tmp_path / "runs" / "cli" / "summary.json").read_text())
    assert summary == [{"round": r, "episodes": 2, "won": 1, "success_rate": 0.5} for r in (0, 1)]
    events = [json.loads(line)["event"] for line in (tmp_path / "runs" / "cli" / "log.jsonl").read_text().splitlines()]
    assert events == ["round", "episode", "episode"] * 2
    with Store(db) as store:
        run = store.run("cli")
        assert run.status == "finished"
        assert RunConfig.from_dict(run.config) == RunConfig(
            ExperimentConfig(spec=spec, rounds=2, llm="openai:stand-in", seed=3),
            RetrievalConfig(k=1, prior=False),
            replace(DEFAULT.agent, think=True, ask="always"),  # the command line's defaults for who acts
            ExecutionConfig(llm_timeout=7.5, llm_retries=0),
        )
        assert set(run.config["agent"]) >= {"think", "constrained", "max_reasks", "loop_limit", "keep_margin", "limits"}
        episodes = list(store.episodes("cli"))
        assert [e.round for e in episodes] == [0, 0, 1, 1]
        assert all(e.won == (e.goal != lost) for e in episodes)
        assert all(e.n_actions == 20 for e in episodes if not e.won)  # the spec's step cap
        assert all(len(e.extra.thoughts) == e.n_actions for e in episodes)  # --think was played


def test_workers_play_a_round_in_parallel_and_each_task_once(tmp_path, cli):
    invoke, play, _ = cli
    spec = write_spec(tmp_path, "four", ["throw_away_trash", "collect_toys"], per_task=2)
    follow = plan_follower(plans_of(spec))
    calls = itertools.count()
    meet = threading.Barrier(2, timeout=60)

    def answer(messages):
        if next(calls) < 2:
            meet.wait()  # the first two calls can only both get here from two episodes at once
        return follow(messages)

    play(answer)
    result = invoke("run", spec, "--store", tmp_path / "s.db", "--rounds", 2, "--k", 2, "--name", "par", "--workers", 2, "--no-prior", *EVERY_STEP)
    assert result.exit_code == 0, result.output
    with Store(tmp_path / "s.db") as store:
        episodes = list(store.episodes("par"))
        keys = [(e.round, e.task_id) for e in episodes]
        assert sorted(keys) == sorted((r, t) for r in (0, 1) for t in task_ids(spec))
        assert all(e.won for e in episodes)
        round0 = {e.id for e in episodes if e.round == 0}
        assert all(e.extra.retrieved and set(e.extra.retrieved) <= round0 for e in episodes if e.round == 1)
    assert "round 1: 4/4 won (100%)" in result.output


def test_ctrl_c_keeps_what_is_stored_and_resume_plays_the_rest(tmp_path, cli):
    invoke, play, _ = cli
    spec = write_spec(tmp_path, "four", ["throw_away_trash", "collect_toys"], per_task=2)
    db = tmp_path / "s.db"
    # Held after three stored episodes: Ctrl-C lands in round 0, with its fourth task unplayed.
    script = held_cli(tmp_path, spec, db, episodes=3)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = start(
            [sys.executable, str(script), "run", spec, "--store", str(db), "--rounds", "2", "--name", "victim", "--no-prior"],
            cwd=tmp_path, stdout=stdout, stderr=stderr, env={**os.environ, **WIDE},
        )
        assert signal_when_stored(process, db, 3, signal.SIGINT) == 130
    assert f"interrupted: finished episodes are stored; continue with `prag run --resume victim --store {db}`" in err.read_text()
    assert "Traceback" not in err.read_text()
    assert not (tmp_path / "runs" / "victim" / "summary.json").exists()
    with Store(db) as store:
        assert store.run("victim").status == "interrupted"
        assert len(list(store.episodes("victim"))) == 3

    play(plan_follower(plans_of(spec)))
    result = invoke("run", "--resume", "victim", "--store", db)
    assert result.exit_code == 0, result.output
    assert "round 0: 4/4 won (100%)" in result.output and "round 1: 4/4 won (100%)" in result.output
    with Store(db) as store:
        keys = [(e.round, e.task_id) for e in store.episodes("victim")]
        assert sorted(keys) == sorted((r, t) for r in (0, 1) for t in task_ids(spec))
        assert store.run("victim").status == "finished"
    summary = json.loads((tmp_path / "runs" / "victim" / "summary.json").read_text())
    assert [(r["round"], r["episodes"], r["won"]) for r in summary] == [(0, 4, 4), (1, 4, 4)]
    again = invoke("run", "--resume", "victim", "--store", db)
    assert again.exit_code == 1 and "run victim is finished: nothing to resume" in again.output


# A run as the first prag recorded it: its config flat, with no version.
FLAT = {
    "spec": "", "rounds": 2, "k": 1, "mode": "goal", "llm": "local", "max_steps": 4, "workers": 1, "seed": 0,
    "train": None, "include_runs": [], "think": False, "constrained": True, "embedding_model": "all-MiniLM-L6-v2",
    "limit": 1, "corrections": True, "corrections_k": 1, "prior": False, "round0_from": None,
}


def interrupted_run(db, spec: str, config: dict) -> None:
    with Store(db) as store:
        store.add_run(RunRecord(id="old", spec="pair", llm="local", mode="goal", k=1, rounds=2, config=config, status="interrupted"))


def test_a_run_recorded_by_the_first_prag_resumes_with_its_settings(tmp_path, cli):
    invoke, play, _ = cli
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    plans = plans_of(spec)
    play(plan_follower(plans, spoil=set(plans)))
    db = tmp_path / "s.db"
    interrupted_run(db, spec, {**FLAT, "spec": spec})
    result = invoke("run", "--resume", "old", "--store", db)
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        episodes = list(store.episodes("old"))
    # Its settings, converted: one task (limit 1), two rounds, capped at its max_steps of 4.
    first = task_ids(spec)[0]
    assert [(e.round, e.task_id, e.won, e.n_actions) for e in episodes] == [(0, first, False, 4), (1, first, False, 4)]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"version": 3, "prag": "0.9.0", "experiment": {"spec": "x"}},
         "of config version 3, written by prag 0.9.0; this is prag"),
        ({"version": 2, "prag": "0.1.0", "experiment": {"spec": "x", "beam_width": 4}},
         "name settings this prag"),
        ({**FLAT, "temperature": 0.7}, "unknown prag (flat config with temperature)"),
        ({"version": 2, "prag": "0.1.0", "experiment": {"spec": "x", "rounds": "many"}}, "experiment.rounds"),
    ],
)
def test_a_run_this_prag_cannot_read_is_refused_with_a_message(tmp_path, cli, config, message):
    invoke, _, _ = cli
    db = tmp_path / "s.db"
    interrupted_run(db, "x", config)
    result = invoke("run", "--resume", "old", "--store", db)
    assert result.exit_code == 1
    assert "run old:" in result.output and message in result.output
    assert "Traceback" not in result.output


# --- Ctrl-C at any moment, a server that stops answering, the display (issue 11) -------------

STAGED_CLI = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
marker = Path({marker!r})
if {stage!r} == "loading":
    from prag.cli import main
    marker.touch()  # Ctrl-C now lands while the commands import torch and friends
else:
    from conftest import plan_follower, plans_of
    from prag.cli import common, main
    from prag.llm.scripted import ScriptedLLM

    def building(spec):
        marker.touch()
        while True:  # the model loads until Ctrl-C
            time.sleep(0.05)

    def slow(spec):
        calls = []

        def answer(messages):
            calls.append(1)
            if len(calls) == 4:
                marker.touch()  # Ctrl-C now lands while two episodes are under way
            time.sleep(0.25)
            return "look around the room"  # never admissible: the episodes last to the cap

        return ScriptedLLM(answer)

    common.test_llm = building if {stage!r} == "building" else slow
sys.argv[0] = "prag"
main()
"""


def interrupt_at(tmp_path, stage: str, *args: str, signum: int = signal.SIGINT) -> tuple[int, str, float]:
    """Run `prag run ARGS` in a subprocess, send `signum` (Ctrl-C's SIGINT) when it reaches `stage`
    (seen by a marker file it writes); returns its exit code, its stderr and the seconds it took to stop."""
    marker = tmp_path / f"{stage}.marker"
    script = tmp_path / f"{stage}_prag.py"
    script.write_text(STAGED_CLI.format(tests=str(Path(__file__).parent), marker=str(marker), stage=stage))
    err = tmp_path / f"{stage}.err"
    with err.open("w") as stderr:
        process = start([sys.executable, str(script), "run", *args], cwd=tmp_path,
                        stdout=subprocess.DEVNULL, stderr=stderr, env={**os.environ, **WIDE})
        try:
            began = time.monotonic()
            while not marker.exists():
                assert process.poll() is None, err.read_text()
                assert time.monotonic() - began < 240, f"{stage} never reached"
                time.sleep(0.02)
            process.send_signal(signum)
            sent = time.monotonic()
            code = process.wait(timeout=120)
            return code, err.read_text(), time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()


def test_ctrl_c_while_the_commands_load_exits_quietly(tmp_path):
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    db = tmp_path / "s.db"
    code, err, _ = interrupt_at(tmp_path, "loading", spec, "--store", str(db), "--llm", "local:0.5b")
    assert code == 130 and "interrupted" in err and "Traceback" not in err
    if db.exists():  # a fast machine got past the imports (about 0.4 s) before the signal landed
        with Store(db) as store:
            assert all(run.status == "interrupted" for run in store.runs())


def test_ctrl_c_while_the_llm_is_built_leaves_the_run_interrupted_with_the_resume_command(tmp_path):
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    db = tmp_path / "s.db"
    code, err, seconds = interrupt_at(tmp_path, "building", spec, "--store", str(db), "--name", "early", "--no-prior")
    assert code == 130 and "Traceback" not in err, err
    assert f"interrupted: finished episodes are stored; continue with `prag run --resume early --store {db}`" in err
    assert seconds < 10
    with Store(db) as store:
        assert store.run("early").status == "interrupted" and not list(store.episodes("early"))


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_leave_the_run_interrupted_with_the_resume_command_as_ctrl_c_does(tmp_path, signum, status):
    # Before: the process died of the signal (exit -15, -1), the run left `running`, no resume command.
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    db = tmp_path / "s.db"
    code, err, seconds = interrupt_at(tmp_path, "building", spec, "--store", str(db), "--name", "early", "--no-prior",
                                      signum=signum)
    name = signal.Signals(signum).name
    assert code == status and "Traceback" not in err, err
    assert f"interrupted by {name}: finished episodes are stored; continue with `prag run --resume early --store {db}`" in err
    assert seconds < 10
    with Store(db) as store:
        assert store.run("early").status == "interrupted"


def test_the_resume_command_of_a_run_named_with_spaces_and_accents_is_pasted_as_it_is_printed(tmp_path, cli):
    # Before: `prag run --resume my run é --store …/my stores/café.db`, which a shell splits apart.
    invoke, play, _ = cli
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    db = tmp_path / "my stores" / "café.db"
    code, err, _ = interrupt_at(tmp_path, "building", spec, "--store", str(db), "--name", "my run é", "--no-prior")
    assert code == 130, err
    hint = re.search(r"continue with `([^`]*)`", err)
    assert hint is not None and hint.group(1) == f"prag run --resume 'my run é' --store '{db}'", err
    argv = shlex.split(hint.group(1))  # as a shell reads the pasted line
    assert argv[:2] == ["prag", "run"]
    play(plan_follower(plans_of(spec)))
    resumed = invoke(*argv[1:])
    assert resumed.exit_code == 0, resumed.output
    assert f"compare rounds with `prag compare '{db}' 'my run é'`" in " ".join(resumed.output.split())


def test_ctrl_c_stops_a_run_also_when_the_tests_were_started_in_the_background(tmp_path, started_in_background):
    # `pytest &` from a script starts pytest with SIGINT ignored, and its children inherit that:
    # before, the run never saw the Ctrl-C and was killed after the wait.
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    db = tmp_path / "s.db"
    code, err, seconds = interrupt_at(tmp_path, "building", spec, "--store", str(db), "--name", "early", "--no-prior")
    assert code == 130 and "interrupted: finished episodes are stored" in err, err
    assert seconds < 10


def test_ctrl_c_stops_parallel_episodes_before_their_next_action_and_resume_plays_every_task(tmp_path, cli):
    invoke, play, _ = cli
    spec = write_spec(tmp_path, "four", ["throw_away_trash", "collect_toys"], per_task=2, max_steps=40)
    db = tmp_path / "s.db"
    # Each episode would take 40 steps of 3 asks of 0.25 s: 30 s. Stopped, the two under way give
    # up at their next action (waiting for them to end took as long as the episodes).
    code, err, seconds = interrupt_at(tmp_path, "episodes", spec, "--store", str(db), "--name", "par", "--rounds", "1",
                                      "--workers", "2", "--no-prior", "--no-answer-cache", *EVERY_STEP)
    assert code == 130 and "Traceback" not in err, err
    assert "continue with `prag run --resume par" in err
    assert seconds < 10
    with Store(db) as store:
        assert store.run("par").status == "interrupted"
        assert not list(store.episodes("par"))  # the episodes cut off are not stored
    play(plan_follower(plans_of(spec)))
    resumed = invoke("run", "--resume", "par", "--store", db)
    assert resumed.exit_code == 0, resumed.output
    with Store(db) as store:
        assert sorted(e.task_id for e in store.episodes("par")) == sorted(task_ids(spec))


def test_a_server_that_stops_answering_shows_the_wait_then_leaves_the_run_interrupted(tmp_path, cli, fake_openai):
    invoke, _, _ = cli
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    db = tmp_path / "s.db"
    answer = fake_openai.chat("look")
    # Two answers, then a 500 and a request that outlasts what is left of --llm-timeout 3 (the call's,
    # retries included): the retry shows, then the run stops.
    fake_openai.answer(fake_openai.Answer(answer), fake_openai.Answer(answer), fake_openai.Answer(b"{}", status=500),
                       fake_openai.Answer(answer, delay=30))
    result = CliRunner().invoke(
        app,
        ["run", spec, "--store", str(db), "--name", "gone", "--llm", "openai:m", "--llm-timeout", "3", "--llm-retries", "1",
         "--no-prior", "--no-answer-cache", *EVERY_STEP],
        env={**WIDE, "OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "k"},
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    out = " ".join(result.output.split())
    assert "waiting for the LLM server: 2 s, attempt 2" in out or "waiting for the LLM server: 1 s, attempt 2" in out
    assert "--llm-timeout" in out  # the LLM's own message, naming the option that exists
    assert f"The run is interrupted, its finished episodes stored: once that is fixed, continue with `prag run --resume gone --store {db}`" in out
    with Store(db) as store:
        assert store.run("gone").status == "interrupted"
    stats = invoke("stats", db, "--json")
    assert json.loads(stats.output)["runs"][0]["status"] == "interrupted"


def test_a_full_disk_beside_the_store_stops_the_run_interrupted_with_what_to_do(tmp_path, cli, monkeypatch):
    # Before: an OSError traceback (No space left on device) from the run's log, the run left running.
    invoke, play, _ = cli
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    db = tmp_path / "s.db"
    log = RunLog.__call__

    def full_after_one_episode(self, event, data):
        if event == "episode" and data["task_id"] != task_ids(spec)[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
        log(self, event, data)

    monkeypatch.setattr(RunLog, "__call__", full_after_one_episode)
    play(plan_follower(plans_of(spec)))
    result = invoke("run", spec, "--store", db, "--name", "full", "--no-prior")
    out = " ".join(result.output.split())
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "the disk has no room for" in out and "log.jsonl (No space left on device): free some space on it" in out
    assert f"continue with `prag run --resume full --store {db}`" in out
    with Store(db) as store:
        assert store.run("full").status == "interrupted" and len(list(store.episodes("full"))) == 2


def test_the_progress_of_a_run_fits_80_columns_and_shows_the_wait(tmp_path):
    out = Console(width=80, force_terminal=True, file=io.StringIO())
    with run_display(RunLog(tmp_path / "runs" / "r"), out) as display:
        display("round", {"round": 0, "spec": "alfworld-valid-seen", "tasks": 140, "todo": 140})
        for n in range(100):
            display("episode", {"round": 0, "task_id": "pick_two_obj_and_place-1", "won": n % 4 == 0, "n_steps": 30})
        shown = Console(width=80, record=True, file=io.StringIO())
        shown.print(display.progress.get_renderable())
        display.waiting(12.3, 2)
        shown.print(display.progress.get_renderable())
        display.waiting(0.0, 0)
        shown.print(display.progress.get_renderable())
    lines = shown.export_text().splitlines()
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert "100/140 won 25/100 (25%), last lost in 30 steps" in lines[0]
    assert "100/140 waiting for the LLM server: 12 s, attempt 2" in lines[1]
    assert lines[2] == lines[0]


def test_piped_a_run_prints_a_line_per_episode_within_80_columns(tmp_path, cli):
    _, play, _ = cli
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    play(plan_follower(plans_of(spec)))
    result = CliRunner().invoke(app, ["run", spec, "--store", str(tmp_path / "s.db"), "--rounds", "1", "--name", "p",
                                      "--no-prior"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines if not line.startswith("log and summary")), "\n".join(lines)
    first, second = task_ids(spec)
    assert any(line.startswith(f"round 0 1/2: {first} won in ") and line.endswith("(won 1/1)") for line in lines)
    assert any(line.startswith(f"round 0 2/2: {second} won in ") and line.endswith("(won 2/2)") for line in lines)
