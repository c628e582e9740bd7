"""The signals that stop a command: Ctrl-C (SIGINT), and SIGTERM and SIGHUP, which schedulers send
(docker stop, Kubernetes, Slurm, systemd and Ray send SIGTERM; a closed terminal sends SIGHUP).

SIGTERM and SIGHUP are raised as `Stop`, a KeyboardInterrupt: whatever handles Ctrl-C (a run left
`interrupted` with its resume command, a transaction rolled back, parallel episodes told to give
up) handles them the same way. The exit status is the shell's for the signal: 128 + its number.
"""
from __future__ import annotations

import signal
import threading
import time
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stop(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: stop as on Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# The stop signals that arrived, first first: a library may turn our exception into a plain
# KeyboardInterrupt on its way up (Ray's ray.wait does), and the exit status is still the signal's.
_arrived: list[int] = []

# A stop signal that comes again within this many seconds is a copy of the same stop: `prag run`'s
# supervisor passes on what a process sent it, and a process that signals the whole group (`kill
# -TERM -PGID`, a shell that exits) reaches the run's process as well (prag.cli.supervisor). Raised
# again, the copy would cut the clean-up of the first. Later, the signal stops anew, as before.
COPY_WITHIN = 1.0
_began: dict[int, float] = {}  # when each signal's latest stop began (time.monotonic)


def _is_copy(signum: int) -> bool:
    now = time.monotonic()
    if signum in _began and now - _began[signum] < COPY_WITHIN:
        return True
    _began[signum] = now
    return False


def _stop(signum: int, frame: FrameType | None) -> None:
    if _is_copy(signum):
        return
    _arrived.append(signum)
    raise Stop(signum)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    if _is_copy(signum):
        return
    _arrived.append(signum)
    raise KeyboardInterrupt


def stop_on_signals() -> None:
    """From now on SIGTERM and SIGHUP raise `Stop` in the main thread, as SIGINT raises
    KeyboardInterrupt. A signal this process was started with ignored stays ignored (SIGHUP
    under nohup, SIGINT in a job a shell put in the background): as Python keeps an ignored
    SIGINT, prag keeps what the parent chose."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:
            signal.signal(signum, _stop)


def signal_of(stop: KeyboardInterrupt) -> int:
    """The signal that raised `stop`: its own, or else the first stop signal that arrived
    (SIGINT for a KeyboardInterrupt no signal raised)."""
    if isinstance(stop, Stop):
        return stop.signum
    return _arrived[0] if _arrived else int(signal.SIGINT)


def exit_status(stop: KeyboardInterrupt) -> int:
    """The shell's exit status of a process the signal stopped: 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP)."""
    return 128 + signal_of(stop)


def stopped_by(stop: KeyboardInterrupt) -> str:
    """How messages name what stopped the command: `interrupted`, or `interrupted by SIGTERM`."""
    signum = signal_of(stop)
    return "interrupted" if signum == signal.SIGINT else f"interrupted by {signal.Signals(signum).name}"
