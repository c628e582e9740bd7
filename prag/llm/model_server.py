"""A run's local model in a server process of its own (`prag.llm.serve`), and how it ended.

A run whose episodes play in several threads or worker processes talks to one model through
it: one copy of the weights in memory, the run's cores used by one llama.cpp context instead of
one per worker (two contexts of two threads each on two cores ran four busy threads), and the
KV cache of each worker's episode kept between its calls. A crash of llama.cpp ends the server
only: the episodes' calls fail, and `error` turns their LLMError into one that says how the
server ended and where its output is.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from prag.errors import LLMError

# The server answers one request at a time: a call may wait for every other worker's call
# before its own. What bounds it is the model's speed, not a server that stopped answering.
SERVED_TIMEOUT = 1800.0


class ModelServer:
    """`python -m prag.llm.serve` for the GGUF file at `path`, listening on a free port of
    127.0.0.1 from the moment it is built (requests wait in the socket's backlog while it starts);
    its output goes to a temporary log, removed when it ends cleanly."""

    def __init__(self, path: Path, name: str, *, threads: int, sequences: int) -> None:
        self.name = name
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        fd, log = tempfile.mkstemp(prefix="prag-model-server-", suffix=".log")
        self.log = Path(log)
        # The child imports this prag whether it is installed or run from a checkout.
        root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        command = [sys.executable, "-m", "prag.llm.serve", "--model", str(path), "--name", name,
                   "--fd", str(listener.fileno()), "--threads", str(threads), "--sequences", str(sequences)]
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=fd, stderr=subprocess.STDOUT,
                                            pass_fds=(listener.fileno(),), env=env)
        finally:
            os.close(fd)
            listener.close()  # the server holds its own copy

    def ended(self) -> str | None:
        """How the server ended (None while it runs)."""
        code = self.process.poll()
        if code is None:
            return None
        if code < 0:
            return f"was ended by {_signal_name(-code)} ({_WHY.get(-code, 'a signal')})"
        return f"exited with status {code}"

    def error(self, cause: LLMError) -> LLMError:
        """`cause` as the run should report it: said of the server when the server has ended."""
        how = self.ended()
        if how is None:
            return cause
        tail = _tail(self.log)
        return LLMError(
            f"The local model server prag started for this run ({self.name}, pid {self.process.pid}) {how}; "
            f"its output is in {self.log}{f', ending: {tail}' if tail else ''}. Resuming the run starts a new one."
        )

    def close(self) -> None:
        """End the server (closing its standard input tells it to) and remove a clean run's log."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass  # the server is already gone
        killed = False
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # busy in a long decode: it holds nothing to save
            self.process.kill()
            self.process.wait()
            killed = True
        if killed or self.process.returncode == 0:  # a crash keeps its log: the run's error names it
            self.log.unlink(missing_ok=True)


_WHY: dict[int, str] = {
    signal.SIGSEGV: "a crash in llama.cpp's native code",
    signal.SIGBUS: "a crash in llama.cpp's native code",
    signal.SIGILL: "an instruction this CPU lacks",
    signal.SIGABRT: "llama.cpp aborted",
    signal.SIGKILL: "killed, perhaps for want of memory",
}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _tail(log: Path, chars: int = 300) -> str:
    try:
        text = log.read_text(errors="replace").strip()
    except OSError:
        return ""
    return " ".join(text[-chars:].split())
