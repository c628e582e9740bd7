"""LLM backends behind one small interface (`LLM.complete` → `Completion`), and `make_llm`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prag.errors import LLMError
from prag.llm.base import LLM, Completion, Message

__all__ = ["LLM", "SPEC_HELP", "Completion", "Message", "make_llm"]

SPEC_HELP = "local (Qwen2.5-Coder 1.5B), local:0.5b, local:/path/model.gguf or openai:MODEL"


def make_llm(spec: str, **options: Any) -> LLM:
    """The backend a `--llm` spec names; `options` go to its constructor.

    local: n_ctx, n_threads, seed. openai: base_url, api_key, timeout, max_retries, constraint.
    """
    kind, _, arg = spec.partition(":")
    if kind == "local":
        from prag.llm.local import LocalLLM
        from prag.llm.model_files import MODELS, model_path

        size = (arg or "1.5b").lower()
        if size in MODELS:
            model = MODELS[size]
            return LocalLLM(model_path(model), name=f"local:{model.name}", **options)
        if arg.endswith(".gguf") or Path(arg).is_file():
            return LocalLLM(Path(arg).expanduser(), **options)
        raise LLMError(f"Unknown local model {arg!r}: use {SPEC_HELP}.")
    if kind == "openai":
        from prag.llm.openai_backend import OpenAILLM

        return OpenAILLM(arg, **options)
    raise LLMError(f"Unknown LLM {spec!r}: use {SPEC_HELP}.")
