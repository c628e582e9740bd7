"""Episodes spread over several OpenAI-compatible servers, least-loaded first.

Every request of one episode goes to the server the episode started on, so that the server's
prefix cache holds the episode's growing prompt (as verl's agent loop keeps a trajectory on one
server); a new episode goes to the server with the fewest episodes in flight, ties to the one
listed first. Whoever schedules the episodes counts them: the runner's threads, or the Ray
driver, which hands each episode its server with the task (prag.run.ray_executor).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


def server_urls(given: Sequence[str] = ()) -> list[str]:
    """The servers a run spreads over: the `--llm-url`s given, else OPENAI_BASE_URL's comma list;
    [] when neither names one (the backend's own default)."""
    urls = list(given) or (os.environ.get("OPENAI_BASE_URL") or "").split(",")
    return list(dict.fromkeys(url.strip().rstrip("/") for url in urls if url.strip()))


class LeastLoaded:
    """Picks a server for each new episode: the one with the fewest episodes in flight (ties:
    the first listed). Safe to call from parallel episodes' threads.

    With no servers it hands out None: the backend's default server, one for every episode.
    """

    def __init__(self, urls: Sequence[str]) -> None:
        self.in_flight: dict[str | None, int] = {url: 0 for url in urls} or {None: 0}
        self._lock = threading.Lock()

    def acquire(self) -> str | None:
        """The server for a new episode, counted in flight until `release`."""
        with self._lock:
            url = min(self.in_flight, key=self.in_flight.__getitem__)  # min keeps the first of ties
            self.in_flight[url] += 1
            return url

    def release(self, url: str | None) -> None:
        """The episode on `url` is over (played, or lost with its worker)."""
        with self._lock:
            self.in_flight[url] -= 1

    @contextmanager
    def episode(self) -> Iterator[str | None]:
        """The server of one episode, released when the block ends."""
        url = self.acquire()
        try:
            yield url
        finally:
            self.release(url)
