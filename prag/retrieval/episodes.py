"""The agent's view of the store: the top-K past episodes for its goal and current scene graph."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from prag.envs.base import Triple
from prag.envs.domain import Domain
from prag.retrieval.embed import EmbeddingCache
from prag.retrieval.index import ExperienceIndex, Hit, Mode, Visibility
from prag.store import Store
from prag.store.records import EpisodeRecord


@dataclass(frozen=True)
class Experience:
    """A retrieved episode and how it scored."""

    hit: Hit
    episode: EpisodeRecord


def where_things_were(episode: EpisodeRecord, domain: Domain) -> dict[str, str]:
    """Each thing the episode's scene graphs showed in or on a place, where it was first seen:
    in a replay of the same task, that is where it still starts."""
    places: dict[str, str] = {}
    for step in episode.steps:
        for thing, relation, place in domain.placed(step.triples):
            places.setdefault(thing, f"{relation} {place}")
    return places


def never_opened(graphs: Iterable[Iterable[Triple]]) -> list[str]:
    """The places scene graphs (their triples, one graph after another) showed closed and never
    open, in the order first seen."""
    closed: dict[str, None] = {}
    opened: set[str] = set()
    for triples in graphs:
        for thing, relation, state in triples:
            if relation == "is" and state == "closed":
                closed.setdefault(thing)
            elif relation == "is" and state == "open":
                opened.add(thing)
    return [place for place in closed if place not in opened]


class ExperienceSource:
    """Retrieval for one run: an index over the store (kept in files beside it), refreshed between rounds.

    Safe to query from parallel episodes: the index only changes in `refresh()`, which the
    runner calls between rounds, and the cache writes nothing (the runner stores vectors
    with each finished episode).
    """

    def __init__(self, store: Store, cache: EmbeddingCache, mode: Mode, k: int) -> None:
        self.store = store
        self.cache = cache
        self.mode = mode
        self.k = k
        self.index = ExperienceIndex()
        self._episodes: dict[int, EpisodeRecord] = {}

    def refresh(self) -> int:
        return self.index.refresh(self.store, self.cache) if self.mode != "none" else 0

    def retrieve(self, goal: str, scene: str, visibility: Visibility, k: int | None = None) -> list[Experience]:
        """The top `k` (default: the source's k) episodes, best first."""
        k = self.k if k is None else k
        if self.mode == "none" or k <= 0:
            return []
        vectors = self.cache.vectors([goal, scene] if self.mode == "prag" else [goal])
        hits = self.index.query(
            vectors[0],
            vectors[1] if self.mode == "prag" else None,
            k=k,
            mode=self.mode,
            visibility=visibility,
        )
        return [Experience(hit, self._episode(hit.episode_id)) for hit in hits]

    def every(self, goal: str, scene: str, visibility: Visibility) -> list[Experience]:
        """Every episode the visibility allows, best first: what a caller filters for the
        episodes of one task (prag.agent.sources.lessons), whichever the top `k` would leave out."""
        return self.retrieve(goal, scene, visibility, k=self.index.size)

    def _episode(self, episode_id: int) -> EpisodeRecord:
        if episode_id not in self._episodes:
            self._episodes[episode_id] = self.store.episode(episode_id)
        return self._episodes[episode_id]
