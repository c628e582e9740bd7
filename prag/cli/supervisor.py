"""`prag run` plays in a child process that this one supervises, so that a crash is not silent.

A run's process holds native code (llama.cpp, the engines, torch): a SIGSEGV there, an abort, or
the OOM killer's SIGKILL ends it with no Python left to mark the run. Before, such a run stayed
`running (stale)` and prag said nothing. Now `prag run` forks before it loads anything heavy: the
child plays the run as before, on the same terminal, in the same process group, and tells the
parent which run it plays (`report_run`); the parent waits. When the child dies by a signal, the
parent leaves the run `interrupted`, says how the child ended and how to resume, and exits with
the shell's status for that signal (139 for SIGSEGV). Otherwise it exits with the child's status.

Signals: a terminal sends Ctrl-C (and Ctrl-Z) to the whole foreground process group, the child
included, so the parent passes on only the signals a process sent (kill, a scheduler), and a
terminal's hang-up, which the kernel sends to the session's leader alone (the parent, when `prag
run` was started without a shell: `ssh -t host prag run`, a tmux window's command). A process
that signals the whole group (`kill -TERM -PGID`, a shell that exits) reaches the child twice:
prag.signals takes the copy for the same stop. If the parent is killed, the child is killed too
(the run is then `running (stale)`, as a killed run was before).
"""
from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import signal
import socket
import sys
from pathlib import Path

from prag.cli.common import error
from prag.errors import PragError
from prag.run.endings import ending
from prag.store import Store
from prag.store.claims import Claim, process_start
from prag.text import command

# si_code of a signal the kernel sent, as a terminal's Ctrl-C is (to the whole foreground group).
_SI_KERNEL = 0x80
_PR_SET_PDEATHSIG = 1
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}

_reports: int | None = None  # in the child: the pipe to the supervisor


def supervise() -> None:
    """Play on in a child process: returns in the child; the parent waits for it and exits."""
    global _reports
    if not sys.platform.startswith("linux"):
        return  # the run plays in this process, as before (the parent's death signal is Linux's)
    watched = _STOPS | {signal.SIGCHLD}
    # An inherited SIG_IGN would reap the child unseen; SIG_DFL leaves it for waitpid.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # Blocked before the fork: a stop that arrives meanwhile waits in the parent to be passed on.
    before = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    reports, _reports = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(reports)
        _die_with(parent)
        # A crash prints where Python was, for a bug report. Enabled before the libraries load, the
        # handler also keeps the signal what it was: pygame (which minigrid loads) puts its own
        # where there is none, and that one turns a SIGSEGV into an abort.
        faulthandler.enable()
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        return
    os.close(_reports)
    _reports = None
    claim = Claim(socket.gethostname(), pid, process_start(pid))
    code = os.waitstatus_to_exitcode(_wait(pid, watched))
    if code >= 0:
        raise SystemExit(code)
    _crashed(claim, -code, _reported(reports))
    raise SystemExit(128 - code)


def report_run(store_path: Path, run_id: str) -> None:
    """In the supervised child: tell the supervisor which run this process plays."""
    if _reports is not None:
        os.write(_reports, (json.dumps({"store": str(store_path), "run": run_id}) + "\n").encode())


STALE = "the run could not be marked interrupted (its store took no write), so it shows as `running (stale)`; "


def interrupted_hint(resume: str, marked: bool = True) -> str:
    """What every error that stops a run says after its cause; `marked`: the run could be marked
    interrupted (else it shows as `running (stale)`, and resumes all the same)."""
    if not marked:
        return f"{STALE[0].upper()}{STALE[1:]}its finished episodes are stored: once that is fixed, continue with `{resume}`"
    return f"The run is interrupted, its finished episodes stored: once that is fixed, continue with `{resume}`"


def _die_with(parent: int) -> None:
    """The child gets SIGKILL when the parent dies: `kill -9` of `prag run` still ends the run."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request was made
        os.kill(os.getpid(), signal.SIGKILL)


def _wait(pid: int, watched: set[signal.Signals]) -> int:
    """Wait for the child to end, passing on the stops the child did not get too; its wait status."""
    leader = os.getsid(0) == os.getpid()
    while True:
        got = signal.sigwaitinfo(watched)
        if got.si_signo == signal.SIGCHLD:
            ended, status = os.waitpid(pid, os.WNOHANG)  # SIGCHLD also comes when the child is stopped (Ctrl-Z)
            if ended:
                return status
        elif got.si_code != _SI_KERNEL or (got.si_signo == signal.SIGHUP and leader):
            os.kill(pid, got.si_signo)


def _reported(reports: int) -> tuple[Path, str] | None:
    """The store and run the child said it plays, if it said (before its death, so all is in the pipe)."""
    os.set_blocking(reports, False)  # a process the child started may still hold the pipe open
    data = b""
    try:
        while chunk := os.read(reports, 65536):
            data += chunk
    except BlockingIOError:
        pass
    lines = data.decode().splitlines()
    if not lines:
        return None
    last = json.loads(lines[-1])
    return Path(last["store"]), last["run"]


def _crashed(claim: Claim, signum: int, reported: tuple[Path, str] | None) -> None:
    """Leave the child's run `interrupted` if it still plays it, and say what happened."""
    if reported is None:
        error(f"prag run's process {ending(claim.pid, -signum)} before it began a run; nothing was stored")
        return
    store_path, run_id = reported
    how = f"the process playing run {run_id} {ending(claim.pid, -signum)}"
    resume = command("prag", "run", "--resume", run_id, "--store", store_path)
    try:
        with Store(store_path, create=False) as store:
            status = store.run(run_id).status
            mine = store.run_claims().get(run_id)
            if status == "running" and mine is not None and (mine.host, mine.pid, mine.started) == (
                    claim.host, claim.pid, claim.started):
                store.set_run_status(run_id, "interrupted")
                status = "interrupted"
    except PragError as exc:
        error(f"{how}; the episodes under way were not stored, and the run could not be marked interrupted: "
              f"{exc}\nIts finished episodes are stored: once that is fixed, continue with `{resume}`")
        return
    if status == "finished":
        error(f"{how} after the run finished; all of it is stored")
        return
    error(f"{how}; the episodes under way were not stored\n{interrupted_hint(resume)}")
