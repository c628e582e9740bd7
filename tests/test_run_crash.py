"""`prag run` plays in a child process that it supervises (prag.cli.supervisor), on the real grid
world with a scripted stand-in LLM: a run whose process dies of a signal (a crash in native code,
the OOM killer's SIGKILL) is left `interrupted`, with how it ended and its resume command, and
nothing stored is lost; on a terminal the run shows its progress, and a Ctrl-C or the terminal's
hang-up stops it as before, once."""
from __future__ import annotations

import os
import pty
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import TESTS, agent_episodes, held_cli, plan_follower, plans_of, write_spec
from typer.testing import CliRunner

from prag import signals
from prag.cli import _register, app, common
from prag.llm.scripted import ScriptedLLM
from prag.run.endings import CAUSES
from prag.store import Store

_register()

CRASHING_CLI = """
import ctypes, os, signal, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from conftest import agent_episodes, plan_follower, plans_of
from prag.cli import common, main
from prag.llm.scripted import ScriptedLLM

follow = []

def answer(messages):
    if agent_episodes(Path({db!r})) >= 1:
        {crash}
    # The plans are read here, in the run's process: reading them opens the grid world, which loads
    # pygame, whose own SIGSEGV handler, had it come before prag's, would turn the crash into an abort.
    follow or follow.append(plan_follower(plans_of({spec!r})))
    return follow[0](messages)

common.test_llm = lambda spec: ScriptedLLM(answer)
sys.argv[0] = "prag"
main()
"""

CRASHES = {
    signal.SIGSEGV: "ctypes.string_at(0)  # a read at address 0, in native code",
    signal.SIGKILL: "os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer ends a process",
}


@pytest.mark.parametrize("signum", list(CRASHES))
def test_a_run_whose_process_dies_of_a_signal_is_left_interrupted_with_what_happened_and_resumes(tmp_path, monkeypatch,
                                                                                                 signum):
    # Before: the run stayed `running (stale)` and prag said nothing (exit -11 or -9).
    monkeypatch.chdir(tmp_path)
    spec = write_spec(tmp_path, "three", ["throw_away_trash", "collect_toys", "water_plants"])
    db = tmp_path / "s.db"
    script = tmp_path / "crashing_prag.py"
    script.write_text(CRASHING_CLI.format(tests=str(TESTS), db=str(db), spec=spec, crash=CRASHES[signum]))
    done = _run([sys.executable, str(script), "run", spec, "--store", str(db), "--rounds", "1", "--name", "victim",
                 "--no-prior", "--ask", "always"], cwd=tmp_path)
    err = " ".join(done.stderr.split())
    assert done.returncode == 128 + signum, done.stderr[-3000:]
    assert "round 0 1/3: throw_away_trash-0 won in" in done.stdout  # the run's own output came through
    name = signal.Signals(signum).name
    assert f"Error: the process playing run victim was ended by {name} ({CAUSES[signum]}) (pid " in err, err[-3000:]
    assert "the episodes under way were not stored" in err and "Traceback" not in err
    hint = f"continue with `prag run --resume victim --store {db}`"
    assert hint in err
    with Store(db) as store:
        assert store.run("victim").status == "interrupted" and store.run_claims() == {"victim": None}
        assert [e.task_id for e in store.episodes("victim")] == ["throw_away_trash-0"]

    monkeypatch.setattr(common, "test_llm", lambda spec_: ScriptedLLM(plan_follower(plans_of(spec))))
    resumed = CliRunner().invoke(app, shlex.split(hint.split("`")[1])[1:], env={"COLUMNS": "300"})
    assert resumed.exit_code == 0, resumed.output
    assert "round 0: 3/3 won (100%)" in resumed.output
    with Store(db) as store:
        assert sorted(e.task_id for e in store.episodes("victim")) == ["collect_toys-0", "throw_away_trash-0",
                                                                       "water_plants-0"]
        assert store.run("victim").status == "finished"


def test_on_a_terminal_the_run_shows_its_progress_and_one_ctrl_c_stops_it_interrupted(tmp_path):
    # The terminal sends Ctrl-C to the supervisor and to the run's process both: the run stops as it
    # did when it was one process, and the supervisor exits with the run's status.
    db = tmp_path / "s.db"
    pid, terminal = _play_on_a_terminal(tmp_path, db)
    shown = bytearray()
    status: int | None = None
    try:
        _pump(terminal, shown, lambda: agent_episodes(db) >= 1 and b"won 1/1" in shown, "first episode on the terminal")
        os.write(terminal, b"\x03")  # Ctrl-C, typed
        _pump(terminal, shown, lambda: _ended(pid) is not None, "end of prag run", timeout=120)
        status = _ended(pid)
    finally:
        _end(pid, terminal)
    text = " ".join(bytes(shown).decode(errors="replace").split())
    assert status == 130, text[-3000:]
    assert f"interrupted: finished episodes are stored; continue with `prag run --resume victim --store {db}`" in text
    assert text.count("interrupted") == 1 and "Traceback" not in text, text[-3000:]
    with Store(db) as store:
        assert store.run("victim").status == "interrupted"
        assert len(list(store.episodes("victim"))) == 1


def test_a_terminal_closed_under_a_run_started_without_a_shell_stops_it_interrupted(tmp_path):
    # Started as the terminal's own program (`ssh -t host prag run`, a tmux window's command), the
    # supervisor leads the session: the kernel sends the hang-up to it alone, and it passes it on.
    db = tmp_path / "s.db"
    pid, terminal = _play_on_a_terminal(tmp_path, db)
    shown = bytearray()
    status: int | None = None
    try:
        _pump(terminal, shown, lambda: agent_episodes(db) >= 1, "first episode")
        os.close(terminal)  # the terminal goes away
        terminal = -1
        _wait_for(lambda: _ended(pid) is not None, "end of prag run", timeout=120)
        status = _ended(pid)
    finally:
        _end(pid, terminal)
    # Its messages cannot reach a terminal that is gone: printing them fails (status 1), as it did
    # when `prag run` was one process. What counts is the run, stopped and left `interrupted`.
    assert status not in (None, 0)
    with Store(db) as store:
        assert store.run("victim").status == "interrupted"
        assert len(list(store.episodes("victim"))) == 1


def test_the_same_stop_signal_twice_at_once_stops_once(monkeypatch):
    # A process that signals the whole group reaches the run's process directly and through its
    # supervisor: the copy must not cut the clean-up of the first stop.
    monkeypatch.setattr(signals, "_began", {})
    before = {signum: signal.getsignal(signum) for signum in signals.STOP_SIGNALS}
    try:
        # As a process starts: an earlier test in this session may have left a handler of its own.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signals.stop_on_signals()
        with pytest.raises(signals.Stop):
            signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGTERM)  # the copy: nothing raised
        later = time.monotonic() + signals.COPY_WITHIN
        monkeypatch.setattr(signals.time, "monotonic", lambda: later)
        with pytest.raises(signals.Stop):  # a stop after the window is a stop again
            signal.raise_signal(signal.SIGTERM)
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "300"})


def _play_on_a_terminal(tmp_path: Path, db: Path) -> tuple[int, int]:
    """`prag run` of three grid tasks held after one stored episode, as the program of a
    pseudo-terminal (a session of its own): its pid and the terminal's master end."""
    spec = write_spec(tmp_path, "three", ["throw_away_trash", "collect_toys", "water_plants"])
    script = held_cli(tmp_path, spec, db, episodes=1)
    pid, terminal = pty.fork()
    if pid == 0:
        try:
            os.chdir(tmp_path)
            for signum in signals.STOP_SIGNALS:  # as a terminal's foreground job has them
                signal.signal(signum, signal.SIG_DFL)
            os.execve(sys.executable, [sys.executable, str(script), "run", spec, "--store", str(db), "--rounds", "1",
                                       "--name", "victim", "--no-prior", "--ask", "always"],
                      {**os.environ, "COLUMNS": "300"})
        finally:
            os._exit(127)
    return pid, terminal


def _pump(terminal: int, shown: bytearray, ready: Callable[[], object], what: str, timeout: float = 300.0) -> None:
    """Read what the terminal shows into `shown` until `ready()` (a terminal left full would
    hold the run up)."""
    began = time.monotonic()
    while not ready():
        assert time.monotonic() - began < timeout, f"no {what} after {timeout} s"
        if select.select([terminal], [], [], 0.1)[0]:
            try:
                shown.extend(os.read(terminal, 4096))
            except OSError:  # EIO: every process of the session has closed the terminal
                time.sleep(0.1)


def _wait_for(ready: Callable[[], object], what: str, timeout: float = 300.0) -> None:
    began = time.monotonic()
    while not ready():
        assert time.monotonic() - began < timeout, f"no {what} after {timeout} s"
        time.sleep(0.1)


_statuses: dict[int, int] = {}


def _ended(pid: int) -> int | None:
    """The exit status of child `pid` once it has ended, else None."""
    if pid not in _statuses:
        ended, status = os.waitpid(pid, os.WNOHANG)
        if not ended:
            return None
        _statuses[pid] = os.waitstatus_to_exitcode(status)
    return _statuses[pid]


def _end(pid: int, terminal: int) -> None:
    """Kill child `pid` if it still runs, and close the terminal if it is open."""
    if _ended(pid) is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if terminal >= 0:
        os.close(terminal)
