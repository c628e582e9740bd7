"""Any OpenAI-compatible chat server through the `openai` client: OpenAI, vLLM, llama.cpp, Ollama.

Retries with exponential backoff on connection errors, timeouts, rate limits and 5xx are the
client's own (`max_retries`; it also honours Retry-After). Constrained choice is not part of the
OpenAI API, so it is sent the way the server understands it: a GBNF `grammar` for llama.cpp
servers, `structured_outputs.choice` / `guided_choice` for vLLM, nothing for the rest (OpenAI
rejects unknown fields). "auto" tells them apart by the `owned_by` field of /models.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Literal

import openai

from prag.errors import LLMError
from prag.llm.base import Completion, Message, choice_grammar, choice_token_budget

Constraint = Literal["auto", "grammar", "vllm", "none"]
_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# `owned_by` of /models entries: llama-cpp-python's server says "me", llama.cpp's "llamacpp".
_OWNERS: dict[str, Constraint] = {"me": "grammar", "llamacpp": "grammar", "vllm": "vllm"}


class OpenAILLM:
    """A model behind an OpenAI-compatible endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        constraint: Constraint = "auto",
    ) -> None:
        if not model:
            raise LLMError("Name the model: --llm openai:MODEL (for example openai:gpt-4o-mini).")
        if constraint not in ("auto", "grammar", "vllm", "none"):
            raise LLMError(f"constraint must be auto, grammar, vllm or none, not {constraint!r}")
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or _DEFAULT_BASE_URL).rstrip(
            "/"
        )
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url == _DEFAULT_BASE_URL:
                raise LLMError(
                    "No API key for OpenAI: set OPENAI_API_KEY, or point OPENAI_BASE_URL "
                    "(--base-url) at another OpenAI-compatible server."
                )
            key = "not-needed"  # local servers ignore it, but the client insists on one
        self.name = f"openai:{model}"
        self.model = model
        self._client = openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=max_retries
        )
        self._constraint: Constraint | None = None if constraint == "auto" else constraint
        self._lock = threading.Lock()

    @property
    def supports_choices(self) -> bool:
        return self.constraint != "none"

    @property
    def constraint(self) -> Constraint:
        """How `choices` reaches this server (asks /models once when set to "auto")."""
        with self._lock:
            if self._constraint is None:
                self._constraint = self._detect_constraint()
            return self._constraint

    def _detect_constraint(self) -> Constraint:
        try:
            owners = {getattr(m, "owned_by", None) for m in self._client.models.list()}
        except openai.APIStatusError:  # a server without /models: send no constraint
            return "none"
        except openai.APIError as exc:
            raise self._error(exc) from None
        return next((_OWNERS[o] for o in owners if o in _OWNERS), "none")

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 64,
        stop: list[str] | None = None,
        choices: list[str] | None = None,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Completion:
        extra: dict[str, Any] = {}
        if choices:
            max_tokens = choice_token_budget(choices, max_tokens)
            if self.constraint == "grammar":
                extra["grammar"] = choice_grammar(choices)
            elif self.constraint == "vllm":
                # vLLM >= 0.10.2 reads structured_outputs, older ones guided_choice (removed in
                # 0.12); each version ignores the field it does not know.
                extra["structured_outputs"] = {"choice": list(choices)}
                extra["guided_choice"] = list(choices)
        start = time.perf_counter()
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                stop=stop or None,
                extra_body=extra or None,
            )
        except openai.APIError as exc:
            raise self._error(exc) from None
        seconds = time.perf_counter() - start
        return _completion(response, seconds)

    def _error(self, exc: openai.APIError) -> LLMError:
        """What went wrong, with where and what to do (the client has already retried)."""
        where = f"The LLM server at {self.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(
                f"{where} did not answer in time: check that it is up and not overloaded, "
                f"or raise the timeout."
            )
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(
                f"Cannot reach the LLM server at {self.base_url} ({exc.__cause__ or exc}): start "
                f"the server, or set --base-url / OPENAI_BASE_URL to where it listens."
            )
        if isinstance(exc, openai.AuthenticationError):
            return LLMError(f"{where} refused the API key: set OPENAI_API_KEY or --api-key.")
        if isinstance(exc, openai.NotFoundError):
            return LLMError(
                f"{where} answered 404 for model {self.model!r}: check the model name and the "
                f"base URL (it usually ends in /v1). {_detail(exc)}"
            )
        status = getattr(exc, "status_code", "an error")
        return LLMError(f"{where} answered {status}: {_detail(exc)}")


def _detail(exc: openai.APIError) -> str:
    return str(getattr(exc, "message", "") or exc)[:500]


def _completion(response: Any, seconds: float) -> Completion:
    """Read what there is: a server may leave out choices, content or usage."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    text = getattr(message, "content", None) or ""
    usage = getattr(response, "usage", None)
    details = getattr(usage, "prompt_tokens_details", None)
    return Completion(
        text=text if isinstance(text, str) else str(text),
        prompt_tokens=getattr(usage, "prompt_tokens", None) or 0,
        cached_tokens=getattr(details, "cached_tokens", None) or 0,
        completion_tokens=getattr(usage, "completion_tokens", None) or 0,
        seconds=seconds,
    )
