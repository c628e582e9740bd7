"""The MiniLM encoder, loaded offline, and the cache that never encodes a text twice."""
from __future__ import annotations

import numpy as np
from support import minilm

from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.store import Store


class CountingEncoder(Encoder):
    """The real MiniLM model, counting the texts it is asked to encode."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded: list[str] = []
        self._inner = minilm()

    def encode(self, texts):  # type: ignore[no-untyped-def]
        self.encoded.extend(texts)
        return self._inner.encode(texts)

    @property
    def dim(self) -> int:
        return self._inner.dim


def test_minilm_gives_normalised_384_d_vectors_that_mean_something():
    vectors = minilm().encode(["put an apple in the fridge", "place the apple inside the fridge", "turn on the desk lamp"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_cache_encodes_each_text_once_and_counts_hits(tmp_path):
    encoder = CountingEncoder()
    with Store(tmp_path / "s.db") as store:
        cache = EmbeddingCache(store, encoder)
        first = cache.vectors(["at: fridge 1", "at: sink 1", "at: fridge 1"])
        second = cache.vectors(["at: sink 1", "at: fridge 1"])
        assert encoder.encoded == ["at: fridge 1", "at: sink 1"]
        assert np.array_equal(first[0], first[2]) and np.array_equal(first[1], second[0])
        assert store.embedding_counts()["all-MiniLM-L6-v2"] == {"encoded": 2, "hits": 3}
    with Store(tmp_path / "s.db") as store:  # the cache persists in the file
        EmbeddingCache(store, encoder).vectors(["at: sink 1"])
        assert encoder.encoded == ["at: fridge 1", "at: sink 1"]


def test_a_read_only_cache_writes_nothing(tmp_path):
    encoder = CountingEncoder()
    with Store(tmp_path / "s.db") as store:
        EmbeddingCache(store, encoder).vectors(["at: sink 1"])
        vector = EmbeddingCache(store, encoder, read_only=True).vectors(["at: sink 1", "at: desk 1"])
        assert vector.shape == (2, 384)
        assert store.count("embeddings") == 1
        assert store.embedding_counts()["all-MiniLM-L6-v2"] == {"encoded": 1, "hits": 0}
