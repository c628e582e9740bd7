"""ScienceWorld's simulator: a JVM started through py4j, once per process and reused.

Starting the JVM costs about 2.5 s and half a gigabyte; loading a task into a running one about
1.5 s. So a process keeps one simulator for every game it plays (a game at a time: the family is
not thread-safe), and closes it when the process exits.
"""
from __future__ import annotations

import atexit
import shutil
import threading
from typing import Any

from prag.errors import PragError

VERSION = "1.2.3"  # trajectories change in 1.3: the family is pinned to this one
_lock = threading.Lock()
_simulator: Any = None


def require_java() -> None:
    """A clear error when no Java runtime is on PATH (ScienceWorld's simulator is a jar)."""
    if shutil.which("java") is None:
        raise PragError(
            "ScienceWorld runs its simulator on Java, and no `java` is on PATH: install a Java runtime "
            "(8 or newer; e.g. `apt-get install openjdk-17-jre-headless`) and run again"
        )


def simulator() -> Any:
    """The process's ScienceWorld simulator, started on first use."""
    global _simulator
    with _lock:
        if _simulator is None:
            require_java()
            try:
                from scienceworld import ScienceWorldEnv
            except ImportError as exc:
                raise PragError(
                    f"the sciworld family needs the scienceworld package ({exc}): "
                    f"`pip install scienceworld=={VERSION}`"
                ) from None
            # The step cap is prag's (a wrapper); the simulator's own is set past any spec's.
            _simulator = ScienceWorldEnv("", envStepLimit=100_000)
            atexit.register(close)
        return _simulator


def close() -> None:
    """Close the process's simulator; the next game starts another. A variation's world is not the
    same in every JVM: some (find-non-living-thing's) depend on what the JVM loaded before."""
    global _simulator
    if _simulator is not None:
        try:
            _simulator.close()
        except (OSError, RuntimeError):  # the JVM went first: nothing left to close
            pass
        _simulator = None
