"""Bounded retries of a call to a server, telling a display while the call waits.

`on_wait(seconds, attempt)` is called about once a second while a call is under way, from a
helper thread: `seconds` since the call began (retries and pauses included), `attempt` 1 for
the first request, 2 for the first retry, and so on. When a call that reported waiting ends,
with an answer or an error, `on_wait(0.0, 0)` is called once from the caller's thread, so that
a display can clear its note. Calls that end within a second report nothing. The callback
should be quick and must not raise (what it raises in the helper thread is only printed).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Self, TypeVar

T = TypeVar("T")
WaitCallback = Callable[[float, int], None]

_TICK = 1.0
_FIRST_PAUSE = 0.5
_LONGEST_PAUSE = 30.0


def backoff(retry: int) -> float:
    """The pause before retry number `retry` (1, 2, ...): 0.5 s doubling, at most 30 s."""
    return min(_FIRST_PAUSE * 2 ** (retry - 1), _LONGEST_PAUSE)


def retrying(
    call: Callable[[], T],
    *,
    retries: int,
    pause: Callable[[Exception, int], float | None],
    on_wait: WaitCallback | None = None,
    until: float | None = None,
) -> T:
    """`call()`, tried again up to `retries` times while it fails transiently.

    `pause(error, retry)` is the seconds to wait before retry number `retry` after `error`, or
    None when the error is final. `until` (a `time.monotonic()`) is the call's deadline: no retry
    begins whose pause would end past it. The last error is raised as it is.
    """
    with _Ticker(on_wait) as ticker:
        for retry in range(1, retries + 1):
            try:
                return call()
            except Exception as exc:
                seconds = pause(exc, retry)
                if seconds is None:
                    raise
                seconds = min(seconds, _LONGEST_PAUSE)
                if until is not None and time.monotonic() + seconds >= until:
                    raise
            time.sleep(seconds)
            ticker.attempt = retry + 1
        return call()


class _Ticker:
    """Calls `on_wait` every second from a daemon thread while the `with` block runs."""

    def __init__(self, on_wait: WaitCallback | None) -> None:
        self.on_wait = on_wait
        self.attempt = 1
        self._stop = threading.Event()
        self._reported = False
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        if self.on_wait is not None:
            self._thread = threading.Thread(target=self._tick, name="llm-wait", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        if self._reported and self.on_wait is not None:
            self.on_wait(0.0, 0)

    def _tick(self) -> None:
        assert self.on_wait is not None
        start = time.monotonic()
        while not self._stop.wait(_TICK):
            self._reported = True
            self.on_wait(time.monotonic() - start, self.attempt)
