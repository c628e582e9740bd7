"""`prag run --workers 2` on real ALFWorld games (worker processes: textworld is not thread-safe):
with the local model, one model server for the run; a crash of that server, or of a worker
process, is reported with how it ended, and the run is left `interrupted` with its resume command."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import model_parts_installed

from prag.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _children(pid: int) -> list[tuple[int, str]]:
    """The processes below `pid`, with their command lines."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents.setdefault(int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], list(parents.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            found.append((child, (Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode())))
        except OSError:
            continue
        todo.extend(parents.get(child, []))
    return found


def _run_and_crash(tmp_path: Path, llm: str, victim: Callable[[str], bool]) -> tuple[int, str, list[str]]:
    """`prag run --workers 2` of two real games; once a child whose command line `victim` picks
    is up, it gets SIGSEGV. Returns the exit code, stderr and the command lines of every child seen."""
    db = tmp_path / "crash.db"
    command = [sys.executable, str(ROOT / "cli.py"), "run", "alfworld-valid-seen", "--store", str(db), "--limit", "2",
               "--max-steps", "4", "--rounds", "1", "--workers", "2", "--llm", llm, "--name", "crash",
               "--ask", "always", "--sources", "experience,llm"]
    # TMPDIR: the crashed server's log, kept for the user, lands in the test's folder.
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(tmp_path)})
    seen: set[str] = set()
    try:
        deadline = time.monotonic() + 240
        while process.poll() is None:
            children = _children(process.pid)
            seen.update(line for _, line in children)
            chosen = [pid for pid, line in children if victim(line)]
            if chosen:
                os.kill(chosen[0], signal.SIGSEGV)
                break
            assert time.monotonic() < deadline, "no child to crash appeared"
            time.sleep(0.2)
        _, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    with Store(db, create=False) as store:
        assert store.run("crash").status == "interrupted"
    return process.returncode, err, sorted(seen)


def _is_worker(line: str) -> bool:
    return "spawn_main" in line and "resource_tracker" not in line


def test_a_worker_process_that_crashes_is_reported_and_the_run_interrupted(alfworld_data: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))
    code, err, _ = _run_and_crash(tmp_path, "random", _is_worker)
    flat = " ".join(err.split())
    assert code == 1, err
    assert "a worker process of the round was ended by SIGSEGV (a crash in native code" in flat
    assert f"prag run --resume crash --store {tmp_path / 'crash.db'}" in flat


@pytest.mark.slow
@pytest.mark.skipif(not model_parts_installed(), reason="the 0.5B model's parts are not installed")
def test_a_crash_of_the_model_server_is_an_llm_error_and_the_run_interrupted(alfworld_data: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))
    code, err, seen = _run_and_crash(tmp_path, "local:0.5b", lambda line: "prag.llm.serve" in line)
    flat = " ".join(err.split())
    assert code == 1, err
    assert "The local model server prag started for this run" in flat
    assert "was ended by SIGSEGV (a crash in llama.cpp's native code)" in flat
    assert f"its output is in {tmp_path}/prag-model-server-" in flat
    assert "prag run --resume crash" in flat
    assert sum("prag.llm.serve" in line for line in seen) == 1  # one model for the two workers


@pytest.mark.slow
@pytest.mark.skipif(not model_parts_installed(), reason="the 0.5B model's parts are not installed")
def test_two_workers_play_with_one_model_server(alfworld_data: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))
    db = tmp_path / "two.db"
    command = [sys.executable, str(ROOT / "cli.py"), "run", "alfworld-valid-seen", "--store", str(db), "--limit", "2",
               "--max-steps", "2", "--rounds", "1", "--workers", "2", "--llm", "local:0.5b", "--name", "two",
               "--ask", "always", "--sources", "experience,llm", "--no-answer-cache", "--no-corrections"]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    servers: set[int] = set()
    while process.poll() is None:
        servers.update(pid for pid, line in _children(process.pid) if "prag.llm.serve" in line)
        time.sleep(0.2)
    output = process.communicate()[0]
    assert process.returncode == 0, output
    assert len(servers) == 1
    with Store(db, create=False) as store:
        episodes = list(store.episodes("two"))
    assert len(episodes) == 2
    assert all(e.llm_calls >= 2 for e in episodes)  # every step asked, all answered by the one server
    assert sum(e.cached_tokens for e in episodes) > 0  # each episode's prefix was kept between its calls
