"""Which process plays a running run, and whether that process is still there.

A run being played is claimed by its process: the host name, the pid and the process's start
time (the pid alone could be a later process that got the same number). The claim is taken when
the run starts or resumes and cleared when it finishes or is interrupted; every stored episode
also stamps the run's heartbeat.

A run marked `running` whose process is gone (killed, or the machine went down) shows as
`running (stale)`. On the claiming host that is decided by the process table; a claim made on
another host (a store on a shared disk) can only be judged by its heartbeat, and is stale when
no episode was stored for `STALE_AFTER`: longer than any episode takes, so a slow live run is
not called stale.
"""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

STALE_AFTER = timedelta(hours=2)


def process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, from /proc), or None when it is not
    running or the system does not say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.rpartition(")")[2].split()[19]


@dataclass(frozen=True)
class Claim:
    """The process that plays a run."""

    host: str
    pid: int
    started: str | None  # process_start(pid) when claimed; None where /proc is not there
    heartbeat_at: str | None = None

    @classmethod
    def mine(cls) -> "Claim":
        """The claim of this process."""
        pid = os.getpid()
        return cls(socket.gethostname(), pid, process_start(pid))

    def is_mine(self) -> bool:
        """Whether this process made the claim."""
        return (self.host, self.pid) == (socket.gethostname(), os.getpid())

    def is_alive(self, now: datetime | None = None) -> bool:
        """Whether the claiming process still runs (on another host: whether it stored an
        episode within `STALE_AFTER`)."""
        if self.host != socket.gethostname():
            if not self.heartbeat_at:
                return False
            age = (now or datetime.now(timezone.utc)) - datetime.fromisoformat(self.heartbeat_at)
            return age < STALE_AFTER
        if self.started is not None:
            return process_start(self.pid) == self.started
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process: it exists
            return True
        return True

    def describe(self) -> str:
        """The claiming process, as messages name it."""
        return f"pid {self.pid} on {self.host}"


def run_state(status: str, claim: Claim | None) -> str:
    """The status to show: `running (stale)` for a running run whose process is gone."""
    if status == "running" and (claim is None or not claim.is_alive()):
        return "running (stale)"
    return status
