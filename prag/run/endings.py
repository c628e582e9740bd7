"""How a process of a run ended, as the run's errors say it: `was ended by SIGSEGV (a crash in
native code: an engine's or llama.cpp's) (pid 12)`. Said of a worker process of a round
(prag.run.process_executor) and of the process playing the run (prag.cli.supervisor)."""
from __future__ import annotations

import signal

# The likely cause of each signal that ends a process without its asking: prag sends none of them.
CAUSES: dict[int, str] = {
    signal.SIGSEGV: "a crash in native code: an engine's or llama.cpp's",
    signal.SIGBUS: "a crash in native code",
    signal.SIGILL: "an instruction this CPU lacks: native code built for another machine",
    signal.SIGABRT: "native code aborted",
    signal.SIGKILL: "killed, perhaps for want of memory",
}


def ending(pid: int, code: int) -> str:
    """How process `pid` ended, from its exit code as multiprocessing gives it (-N: signal N)."""
    if code > 0:
        return f"exited with status {code} (pid {pid})"
    name = signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
    why = CAUSES.get(-code)
    return f"was ended by {name}{f' ({why})' if why else ''} (pid {pid})"
