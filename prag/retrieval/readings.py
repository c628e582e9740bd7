"""Verified goal readings retrieved by wording (P-RAG's retrieval, here for goals).

An instruction is embedded as episode goals are (MiniLM through the store's embedding cache);
the verified readings the visibility allows (`prag.store.readings`) are ranked by the cosine of
their wording's vector with it. The goal readers (`prag.agent.goals.readers`) reuse a near-identical
wording's reading and show the nearest to the LLM reader as examples.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prag.retrieval.embed import EmbeddingCache
from prag.store.database import Store
from prag.store.readings import StoredReading
from prag.store.visibility import Visibility


RECALLED = 5  # the verified readings a goal reader is given, nearest first


@dataclass(frozen=True)
class ReadingHit:
    wording: str
    sentence: str
    similarity: float
    episodes: int  # how many visible episodes verified it
    reader: str = ""  # the reader that read it first (prag.agent.goals.readers.READERS, or "reward")


class ReadingMemory:
    """The store's verified readings, nearest wording first."""

    def __init__(self, store: Store, cache: EmbeddingCache, k: int = RECALLED) -> None:
        self.store = store
        self.cache = cache
        self.k = k

    def recaller(self, visibility: Visibility) -> Callable[..., list[ReadingHit]]:
        """`recall` bound to a visibility: what a goal reader of that round may see."""
        return lambda instruction, k=None: self.recall(instruction, visibility, k)

    def recall(self, instruction: str, visibility: Visibility, k: int | None = None) -> list[ReadingHit]:
        """The verified readings visible under `visibility` whose wording is nearest to
        `instruction`, best first (ties: more verifying episodes, then the wording)."""
        return nearest(instruction, self.store.readings.verified(visibility), self.cache, self.k if k is None else k)


def nearest(instruction: str, verified: Sequence[StoredReading], cache: EmbeddingCache, k: int) -> list[ReadingHit]:
    """The `k` verified readings whose wording is nearest to `instruction`, best first (ties: more
    verifying episodes, then the wording)."""
    if not verified:
        return []
    wordings = list(dict.fromkeys(r.wording for r in verified))
    vectors = cache.vectors([instruction, *wordings])
    similarity = dict(zip(wordings, (vectors[1:] @ vectors[0]).tolist()))
    hits = [ReadingHit(r.wording, r.sentence, float(similarity[r.wording]), r.episodes, r.reader) for r in verified]
    hits.sort(key=lambda h: (-round(h.similarity, 6), -h.episodes, h.wording, h.sentence))
    return hits[:k]
