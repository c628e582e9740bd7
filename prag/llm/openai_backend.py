"""Any OpenAI-compatible chat server through the `openai` client: OpenAI, vLLM, llama.cpp, Ollama.

A call may take `timeout` seconds in all, from sending its first request to the last byte of the
reply that answers it, retries and their pauses included: each request gets what is left of it.
The HTTP client's own timeout bounds each read only, and a server that sends its status line, its
headers or its body a byte at a time would hold a call for ever. After a refused connection,
408/409/429, 5xx, a reply that is not a chat completion or a request that timed out, the request
is sent again, up to `retries` more times while the time allows, with backoff (and Retry-After when
the server gives one); then an `LLMError` says what the server answered and what to do. Replies
are read as streams and bounded (`prag.llm.reply`): a server that ignores `max_tokens` cannot hand
back more than an answer can be, nor a model list more than `MODELS_BYTES`, nor an error more
than `ERROR_BYTES` (the `openai` client reads an error's body whole: it reads a cut one).

Constrained choice is not part of the OpenAI API, so it is sent the way the server understands
it: the choices themselves to prag's own model server (`prag.llm.serve`, which picks one token by
token, reading the model only where the choices branch), a GBNF `grammar` for llama.cpp servers,
`structured_outputs.choice` / `guided_choice` for vLLM, nothing for the rest (OpenAI rejects
unknown fields). "auto" tells them apart by the `owned_by` field of /models. A plan
(`more_lines`: the chosen action, then free lines) is a grammar too; vLLM gets the
single-action choice, so its answer, and the plan, is the first action alone.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Any, Literal, TypeVar

import openai

from prag.errors import LLMError
from prag.llm.base import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    timeout_problem,
    Completion,
    Message,
    answer_limit,
    choice_grammar,
    choice_token_budget,
)
from prag.llm.balance import server_urls
from prag.llm.reply import BadReply, body_limit, parse_reply, read_body
from prag.llm.retrying import WaitCallback, backoff, retrying
from prag.text import clip

T = TypeVar("T")

Constraint = Literal["auto", "choices", "grammar", "vllm", "none"]
_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# `owned_by` of /models entries: prag's model server says "prag", llama-cpp-python's server "me",
# llama.cpp's "llamacpp".
_OWNERS: dict[str, Constraint] = {"prag": "choices", "me": "grammar", "llamacpp": "grammar", "vllm": "vllm"}
_TRANSIENT_STATUS = {408, 409, 429}
# A model list is a few kB (llama.cpp's, vLLM's: one model; OpenAI's: some hundred).
MODELS_BYTES = 1 << 20
# What is read of an error's body (4xx, 5xx): its message is a line; 200 MB of it took 2.5 GB.
ERROR_BYTES = 64 << 10


class _Failed(Exception):
    """A call that gave up: its last error and how many requests it made."""

    def __init__(self, error: Exception, requests: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.requests = requests


class OpenAILLM:
    """A model behind an OpenAI-compatible endpoint.

    `timeout`: seconds one call may take in all, its retries included; `retries`: how many times
    a failed request is sent again within that time; `on_wait(seconds, attempt)`: told while a
    call waits (see `prag.llm.retrying`); it may be set after construction, e.g. once a progress
    bar exists. `base_url` is the server's (default: the first of OPENAI_BASE_URL's, else OpenAI's).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        on_wait: WaitCallback | None = None,
        constraint: Constraint = "auto",
    ) -> None:
        if not model:
            raise LLMError("Name the model: --llm openai:MODEL (for example openai:gpt-4o-mini).")
        if constraint not in ("auto", "choices", "grammar", "vllm", "none"):
            raise LLMError(f"constraint must be auto, choices, grammar, vllm or none, not {constraint!r}")
        problem = timeout_problem(timeout) if isinstance(timeout, (int, float)) else "give a number of seconds"
        if problem is not None:
            raise LLMError(f"The LLM timeout is wrong: {problem}.")
        if not (isinstance(retries, int) and retries >= 0):
            raise LLMError(f"The LLM retries must be a whole number, 0 or more, not {retries!r}.")
        # OPENAI_BASE_URL may list several servers (prag.llm.balance): alone, a backend uses the first.
        self.base_url = (base_url or next(iter(server_urls()), None) or _DEFAULT_BASE_URL).rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url == _DEFAULT_BASE_URL:
                raise LLMError(
                    "No API key for OpenAI: set OPENAI_API_KEY, or name another OpenAI-compatible server "
                    "with --llm-url (or OPENAI_BASE_URL)."
                )
            key = "not-needed"  # local servers ignore it, but the client insists on one
        self.name = f"openai:{model}"
        self.model = model
        self.timeout = float(timeout)
        self.retries = retries
        self.on_wait = on_wait
        self._key = key
        self._client = self._new_client()
        self._client_lock = threading.Lock()  # guards replacing the client after a deadline
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

    def _new_client(self) -> openai.OpenAI:
        # Retries are ours (`retrying`): they also cover junk replies and report each attempt.
        http = openai.DefaultHttpxClient(timeout=self.timeout, event_hooks={"response": [_cut_error_body]})
        return openai.OpenAI(api_key=self._key, base_url=self.base_url, timeout=self.timeout, max_retries=0,
                             http_client=http)

    def _detect_constraint(self) -> Constraint:
        try:
            owners = self._retrying(self._model_owners)
        except _Failed as failed:
            if isinstance(failed.error, openai.APIStatusError) and not _transient(failed.error):
                return "none"  # a server without /models: send no constraint
            raise self._error(failed.error, failed.requests) from None
        return next((_OWNERS[o] for o in owners if o in _OWNERS), "none")

    def _model_owners(self, client: openai.OpenAI) -> set[str]:
        """The `owned_by` of the models /models lists; none when it answers something else than
        a model list, or more than a model list can be."""
        with client.models.with_streaming_response.list() as response:
            try:
                body = read_body(response.iter_bytes(), declared=response.headers.get("content-length"),
                                 limit=MODELS_BYTES)
                models = json.loads(body)["data"]
                return {m["owned_by"] for m in models if isinstance(m, dict) and isinstance(m.get("owned_by"), str)}
            except (BadReply, ValueError, TypeError, KeyError):
                return set()
            except _http_errors() as exc:
                raise BadReply(f"a model list that broke off ({type(exc).__name__})", b"") from None

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 64,
        stop: list[str] | None = None,
        choices: list[str] | None = None,
        more_lines: int = 0,
        temperature: float = 0.0,
        seed: int = 0,
        grammar: str | None = None,
    ) -> Completion:
        extra: dict[str, Any] = {}
        if choices:
            max_tokens = choice_token_budget(choices, max_tokens)
            if self.constraint == "choices":
                extra["choices"] = list(choices)
                extra["more_lines"] = more_lines
            elif self.constraint == "grammar":
                extra["grammar"] = choice_grammar(choices, more_lines)
            elif self.constraint == "vllm":
                # vLLM >= 0.10.2 reads structured_outputs, older ones guided_choice (removed in
                # 0.12); each version ignores the field it does not know.
                extra["structured_outputs"] = {"choice": list(choices)}
                extra["guided_choice"] = list(choices)
        elif grammar:
            if self.constraint in ("choices", "grammar"):
                extra["grammar"] = grammar
            elif self.constraint == "vllm":
                extra["structured_outputs"] = {"grammar": grammar}
                extra["guided_grammar"] = grammar
        request = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
            "stop": stop or None,
            "extra_body": extra or None,
        }
        limit = answer_limit(choices, max_tokens, more_lines if {"grammar", "choices"} & extra.keys() else 0)
        start = time.perf_counter()
        try:
            reply = self._retrying(lambda client: self._ask(client, request, limit, constrained=bool(extra)))
        except _Failed as failed:
            raise self._error(failed.error, failed.requests) from None
        return Completion(reply.text, replace(reply.cost, seconds=time.perf_counter() - start))

    def _ask(self, client: openai.OpenAI, request: dict[str, Any], limit: int, *, constrained: bool) -> Completion:
        """One request, its reply read within the byte bound, then checked."""
        create = client.chat.completions.with_streaming_response.create
        with create(**request) as response:
            try:
                body = read_body(
                    response.iter_bytes(), declared=response.headers.get("content-length"), limit=body_limit(limit)
                )
            except _http_errors() as exc:
                raise BadReply(f"a reply that broke off ({type(exc).__name__})", b"") from None
        return parse_reply(body, text_limit=limit, constrained=constrained)

    def _retrying(self, call: Callable[[openai.OpenAI], T]) -> T:
        """`call(client)`, retried as the module says, all of it within the timeout; `_Failed`
        with the last error of a server's (or a timeout) and the requests made."""
        deadline = time.monotonic() + self.timeout
        requests = 0

        def request() -> T:
            nonlocal requests
            requests += 1
            return self._on_time(call, deadline)

        try:
            return retrying(request, retries=self.retries, pause=_pause, on_wait=self.on_wait, until=deadline)
        except (openai.APIError, BadReply, TimeoutError) as exc:
            raise _Failed(exc, requests) from None

    def _on_time(self, call: Callable[[openai.OpenAI], T], deadline: float) -> T:
        """`call(client)` (one request and its reply) by the `deadline` (a `time.monotonic()`). It
        runs in a helper thread: past the deadline it is left there, and its client's connections
        are closed under it (a new client serves the next request), which ends it at its next read."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no time left of {self.timeout:g} s")
        client = self._client
        result: Future[T] = Future()

        def run() -> None:
            try:
                result.set_result(call(client))
            except BaseException as exc:  # handed to the caller, whatever it is
                result.set_exception(exc)

        threading.Thread(target=run, name="llm-request", daemon=True).start()
        try:
            return result.result(timeout=left)
        except FutureTimeout:
            with self._client_lock:  # calls of parallel episodes may time out at once: one new client
                if self._client is client:
                    self._client = self._new_client()
            client.close()
            raise TimeoutError(f"no whole reply within {self.timeout:g} s") from None

    def _error(self, exc: Exception, requests: int) -> LLMError:
        """What went wrong, with where and what to do (retries are spent when it is transient)."""
        where = f"The LLM server at {self.base_url}"
        tries = f"{requests} time{'s' if requests != 1 else ''}"
        more = "--llm-retries sets how many times prag asks again within --llm-timeout"
        if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
            return LLMError(
                f"{where} did not answer within {self.timeout:g} s ({tries}), the time --llm-timeout gives a call, "
                f"retries included: check that it is up and not overloaded, or allow it longer with --llm-timeout; {more}."
            )
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(
                f"Cannot reach the LLM server at {self.base_url} ({exc.__cause__ or exc}; tried "
                f"{tries}): start the server, or give the URL it listens at with --llm-url (or OPENAI_BASE_URL)."
            )
        if isinstance(exc, BadReply):
            return LLMError(
                f"{where} sent no usable answer ({tries}); last it sent {exc}. Check that "
                f"the URL (--llm-url or OPENAI_BASE_URL) points at an OpenAI-compatible API (it usually ends in /v1) "
                f"and that the server works; {more}."
            )
        if isinstance(exc, openai.AuthenticationError):
            return LLMError(f"{where} refused the API key: set OPENAI_API_KEY to a key it accepts.")
        if isinstance(exc, openai.NotFoundError):
            return LLMError(
                f"{where} answered 404 for model {self.model!r}: check the model name in "
                f"--llm openai:MODEL and the URL, --llm-url or OPENAI_BASE_URL (it usually ends in /v1). {_detail(exc)}"
            )
        status = getattr(exc, "status_code", "an error")
        if isinstance(exc, openai.APIStatusError) and _transient(exc):
            return LLMError(
                f"{where} answered {status} ({tries}): {_detail(exc)}. Wait until it recovers; "
                f"{more}."
            )
        return LLMError(f"{where} answered {status}: {_detail(exc)}")


def _cut_error_body(response: Any) -> None:
    """The HTTP client's response hook: an error's body is read no further than ERROR_BYTES (the
    `openai` client reads it whole, before any code of ours sees it)."""
    if response.status_code >= 400:
        response.stream = _cut(response.stream, ERROR_BYTES)


def _cut(stream: Any, limit: int) -> Any:
    """`stream` (the HTTP library's byte stream: httpx's or httpx2's) ending after `limit` bytes;
    of that library's SyncByteStream, which the library checks it is."""
    base = next(kind for kind in type(stream).__mro__ if kind.__name__ == "SyncByteStream")

    class Cut(base):  # type: ignore[misc,valid-type]
        def __iter__(self) -> Any:
            left = limit
            for chunk in stream:
                yield chunk[:left]
                left -= len(chunk)
                if left <= 0:
                    return

        def close(self) -> None:
            stream.close()

    return Cut()


def _pause(exc: Exception, retry: int) -> float | None:
    """Seconds before retry number `retry` after `exc`, or None when asking again cannot help."""
    if isinstance(exc, (BadReply, TimeoutError, openai.APIConnectionError)):
        return backoff(retry)  # APITimeoutError is an APIConnectionError
    if isinstance(exc, openai.APIStatusError) and _transient(exc):
        return max(backoff(retry), _retry_after(exc))
    return None


def _transient(exc: openai.APIStatusError) -> bool:
    return exc.status_code in _TRANSIENT_STATUS or exc.status_code >= 500


def _retry_after(exc: openai.APIStatusError) -> float:
    value = exc.response.headers.get("retry-after", "")
    try:
        return max(float(value), 0.0)
    except ValueError:
        return 0.0  # an HTTP date, or junk: our own backoff will do


def _detail(exc: Exception) -> str:
    return clip(str(getattr(exc, "message", "") or exc), 300)


def _http_errors() -> tuple[type[Exception], ...]:
    """The transport errors of the HTTP library under `openai` (httpx, or httpx2 from openai 3),
    which reach us unwrapped while a streamed body is read. Only a library already loaded (the
    one `openai` sends with) is looked at: importing httpx from a request's thread while openai 3
    asks whether it is loaded, in another, showed it half-imported to openai (AttributeError)."""
    loaded = (sys.modules.get(name) for name in ("httpx2", "httpx"))
    return tuple(error for module in loaded if (error := getattr(module, "TransportError", None)) is not None)
