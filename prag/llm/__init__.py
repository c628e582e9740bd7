"""LLM backends behind one small interface (`LLM.complete` → `Completion`), and `make_llm`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prag.errors import LLMError
from prag.llm.base import DEFAULT_RETRIES, DEFAULT_TIMEOUT, LLM, Completion, Cost, Message
from prag.llm.retrying import WaitCallback

__all__ = [
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "LLM",
    "SPEC_HELP",
    "Completion",
    "Cost",
    "Message",
    "WaitCallback",
    "check_spec",
    "local_model",
    "make_llm",
]

SPEC_HELP = ("local (Qwen2.5-Coder 1.5B), local:0.5b, local:/path/model.gguf, openai:MODEL, or random[:SEED] "
             "(no model: a uniform choice among the admissible actions, the baseline of the other sources)")


def make_llm(
    spec: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    on_wait: WaitCallback | None = None,
    **options: Any,
) -> LLM:
    """The backend a `--llm` spec names; `options` go to its constructor.

    For a server (openai:MODEL): `timeout` is the seconds one call may take in all, `retries` how
    many times within that time a request that timed out, found no server, got 408/409/429/5xx or
    a reply that is not a chat completion is sent again (so a call gives up after `timeout`
    seconds at most), and `on_wait(seconds, attempt)` is told while a call waits (`prag.llm.retrying`;
    also settable later as the backend's `on_wait` attribute). A local model ignores the three.
    Other options: local: n_ctx, n_threads, seed, sequences, or base_url (the model served by
    prag to a run's workers, prag.llm.serve); openai: base_url, api_key, constraint.
    """
    kind, _, arg = spec.partition(":")
    if kind == "local":
        path, name = _local_model(arg)
        if "base_url" in options:
            return _served(name or f"local:{path.stem}", options["base_url"])
        from prag.llm.local import LocalLLM

        return LocalLLM(path, name=name, **options)
    if kind == "random":
        from prag.llm.scripted import RandomChoiceLLM

        if arg and not arg.isdigit():
            raise LLMError(f"--llm {spec!r}: random takes a seed, a whole number (random:7)")
        return RandomChoiceLLM(int(arg or 0), name=f"random:{int(arg or 0)}")
    if kind == "openai":
        from prag.llm.openai_backend import OpenAILLM

        return OpenAILLM(arg, timeout=timeout, retries=retries, on_wait=on_wait, **options)
    raise LLMError(f"Unknown LLM {spec!r}: use {SPEC_HELP}.")


def check_spec(spec: str, *, timeout: float = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES, **options: Any) -> None:
    """Refuse a `--llm` spec (with its timeout, retries and `options`, a server's `base_url`) that
    `make_llm` could not build, without loading a model or asking a server: commands check their
    options with it before they create anything."""
    kind, _, arg = spec.partition(":")
    if kind == "local":
        _local_model(arg)
    else:
        make_llm(spec, timeout=timeout, retries=retries, **options)  # a server's client only: no request is made


def local_model(spec: str) -> tuple[Path, str]:
    """The GGUF file of a `local[:ARG]` spec and the name its backend goes by."""
    path, name = _local_model(spec.partition(":")[2])
    return path, name or f"local:{path.stem}"


def _served(name: str, url: str) -> LLM:
    """The local model `name` as served by prag at `url`: the server's client, under the local
    model's name (the answer cache's key), with no retries (the server is prag's own: a refused
    request means it has ended, which the run reports), a timeout that waits for the other
    workers' calls queued before this one, and no waits shown (a local model has no server to
    wait for, as far as the user is concerned)."""
    from prag.llm.model_server import SERVED_TIMEOUT
    from prag.llm.openai_backend import OpenAILLM

    served = OpenAILLM(name, base_url=url, timeout=SERVED_TIMEOUT, retries=0, constraint="choices")
    served.name = name
    return served


def _local_model(arg: str) -> tuple[Path, str | None]:
    """The GGUF file of a `local[:ARG]` spec (a shipped model joined from its parts on first
    use) and the backend's name for it (None: named after the file)."""
    from prag.llm.model_files import MODELS, check_gguf, model_path

    size = (arg or "1.5b").lower()
    if size in MODELS:
        model = MODELS[size]
        return model_path(model), f"local:{model.name}"
    path = Path(arg).expanduser()
    if path.exists():
        return check_gguf(path), None
    if arg.endswith(".gguf"):
        raise LLMError(f"No model file at {path}: give the path of a .gguf file.")
    raise LLMError(f"Unknown local model {arg!r}: use {SPEC_HELP}.")
