"""The numpy all-MiniLM-L6-v2 of `prag query` (prag.retrieval.minilm): the vectors of
sentence-transformers, and the same episodes retrieved."""
from __future__ import annotations

import numpy as np
from support import minilm

from prag.retrieval.embed import Encoder

TEXTS = [
    "put a clean mug in coffeemachine.",
    "Put a washed apple on the kitchen table, please.",
    "(agent, at, countertop 1), (agent, sees, mug 2), (mug 2, on, countertop 1)",
    "x",
    "",
    "커피머신에 깨끗한 머그잔을 넣어라",
    "go to shelf " * 150,  # past the model's 256 tokens: cut as sentence-transformers cuts it
]


def test_its_vectors_are_sentence_transformers_vectors() -> None:
    quick = Encoder(quick=True).encode(TEXTS)
    reference = minilm().encode(TEXTS)
    assert quick.shape == reference.shape == (len(TEXTS), 384) and quick.dtype == np.float32
    assert np.all((quick * reference).sum(axis=1) > 0.99999)
    assert np.abs(quick - reference).max() < 1e-5


def test_it_ranks_stored_texts_as_sentence_transformers_does() -> None:
    stored = [f"put a {adjective} {thing} in {place}." for adjective in ("clean", "hot", "cool")
              for thing in ("mug", "apple", "plate", "knife") for place in ("fridge", "microwave", "cabinet")]
    vectors = minilm().encode(stored)
    for query in ("Chill an apple and leave it in the cabinet.", "warm the plate up then put it in the microwave"):
        quick, reference = Encoder(quick=True).encode([query])[0], minilm().encode([query])[0]
        assert list(np.argsort(-(vectors @ quick))[:10]) == list(np.argsort(-(vectors @ reference))[:10])


def test_only_the_default_model_is_quick() -> None:
    assert Encoder(quick=True).quick
    assert not Encoder("some/other-model", quick=True).quick
    assert Encoder(quick=True).dim == 384
