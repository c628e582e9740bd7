"""The embedded backend: a GGUF model run in-process by llama-cpp-python.

llama-cpp-python keeps the last prompt's KV cache and re-evaluates only the tokens after the
longest prefix shared with the new prompt. We format the chat ourselves with the model's own
template (a chat prompt for messages m1..mk is a text prefix of the one for m1..mk+1) and hand
llama.cpp the token list, so we know exactly which tokens it will reuse and can count them.
With `sequences` > 1 (a model served to several episodes at once, prag.llm.serve) the KV caches
of the other conversations are parked as llama.cpp sequence states and brought back when their
next prompt comes, so that interleaved episodes each keep their prefix.

The weights are loaded without llama.cpp's extra CPU buffer types on machines that advertise
Intel AMX (`extra_buffers_safe`): there the native build's AMX kernels segfault in the first
batch decode.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from prag.errors import LLMError
from prag.llm.base import (
    Completion,
    Cost,
    Message,
    answer_limit,
    choice_grammar,
    choice_token_budget,
)
from prag.llm.choice_decoding import Chosen, choose
from prag.llm.model_files import check_gguf
from prag.signals import STOP_SIGNALS


def _llama_cpp() -> Any:
    # libgomp reads this once, when llama.cpp's library loads: without it idle OpenMP threads
    # spin and starve everything else on a small machine.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp
        import llama_cpp.llama_chat_format
    except ImportError as exc:
        raise LLMError(
            f"The local backend needs llama-cpp-python ({exc}). Install it with "
            f"`pip install llama-cpp-python`, or use --llm openai:MODEL."
        ) from None
    return llama_cpp


def default_threads() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


def extra_buffers_safe(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether llama.cpp may load the weights into its extra CPU buffer types (AMX tiles, the
    repacked layouts): not on a CPU that advertises AMX (any `amx*` flag), where the native
    build's AMX kernels segfaulted in the first batch decode on cloud VMs (llama-cpp-python
    0.3.36). Where the flags cannot be read, nothing is turned off."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return True
    flags = {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[-1].split()}
    return not any(flag.startswith("amx") for flag in flags)


@dataclass
class _Kept:
    """The logits a prompt ended with, kept so that the same prompt asked again (a retry, the
    answer cache off) reads them instead of evaluating its last token again."""

    tokens: np.ndarray
    logits: np.ndarray


@dataclass
class _Parked:
    """The KV cache of a conversation set aside while another one uses the context."""

    tokens: np.ndarray
    state: np.ndarray  # the bytes of llama_state_seq_get_data
    kept: _Kept | None


# Tokens a context holds: a 100-step ScienceWorld episode's prompt with its room cards and examples
# (up to about 9,000: `PromptLimits.history_chars`), shown whole so that its prefix never moves;
# the KV cache of the 1.5B model takes 28 kB a token.
DEFAULT_CONTEXT = 12288


class LocalLLM:
    """A GGUF chat model in this process. Thread-safe: calls are serialised on one context."""

    supports_choices = True

    def __init__(
        self,
        model_path: Path,
        *,
        name: str | None = None,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        seed: int = 0,
        sequences: int = 1,
    ) -> None:
        if not Path(model_path).exists():
            raise LLMError(f"No model file at {model_path}: give the path of a .gguf file.")
        check_gguf(Path(model_path))
        _llama_cpp()  # a missing llama-cpp-python is said now, not at the first call
        threads = n_threads or default_threads()
        # The model is loaded at the first call, not here: a run whose other sources decide every
        # step (0 LLM calls) never pays for its load time and memory (1.1 GB file, KV cache).
        self._model_path = Path(model_path)
        self._params = dict(n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, seed=seed, verbose=False)
        self._extra_buffers = extra_buffers_safe()
        # Conversations whose KV cache is kept besides the live one (LRU, oldest first).
        self._parked: list[_Parked] = []
        self._kept: _Kept | None = None  # of the live conversation
        self._park_at_most = max(sequences - 1, 0)
        self._loaded: tuple[Any, Any] | None = None  # (the Llama, its chat formatter)
        self._load_lock = threading.Lock()
        self.name = name or f"local:{Path(model_path).stem}"
        self.n_ctx = n_ctx
        self._grammar = lru_cache(maxsize=64)(
            lambda text: _llama_cpp().LlamaGrammar.from_string(text, verbose=False)
        )
        self._lock = threading.Lock()

    def _model(self) -> tuple[Any, Any]:
        with self._load_lock:
            if self._loaded is None:
                llama_cpp = _llama_cpp()
                try:
                    with extra_buffers(llama_cpp, self._extra_buffers):
                        llama = _load(llama_cpp, model_path=str(self._model_path), **self._params)
                except ValueError as exc:  # llama-cpp-python's way of saying the file did not load
                    raise LLMError(f"Cannot load the model {self._model_path}: {exc}") from None
                self._loaded = (llama, _chat_formatter(llama, llama_cpp, self._model_path))
            return self._loaded

    @property
    def _llama(self) -> Any:
        return self._model()[0]

    @property
    def _formatter(self) -> Any:
        return self._model()[1]

    def prompt_tokens(self, messages: list[Message]) -> list[int]:
        """The tokens the model reads for `messages`, ending with the assistant's turn opener."""
        return self._tokenize(self._formatter(messages=messages))

    def _tokenize(self, formatted: Any) -> list[int]:
        return self._llama.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )

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
        # One of the choices, greedily: picked token by token (`prag.llm.choice_decoding`), which
        # reads the model's logits only where the choices branch; a grammar (plans, sampling,
        # readings) checks the whole vocabulary at every token.
        pick = bool(choices) and not more_lines and temperature == 0.0
        if choices and not pick:
            grammar = choice_grammar(choices, more_lines)
        compiled = self._grammar(grammar) if grammar and not pick else None
        limit = answer_limit(choices, max_tokens, more_lines if choices else 0)
        if choices:
            max_tokens = choice_token_budget(choices, max_tokens)
        formatted = self._formatter(messages=messages)
        with self._lock:
            start = time.perf_counter()
            tokens = self._tokenize(formatted)
            if len(tokens) + max_tokens > self.n_ctx:
                raise LLMError(
                    f"The prompt has {len(tokens)} tokens and up to {max_tokens} more may follow, "
                    f"over the context of {self.n_ctx}: shorten the prompt (fewer retrieved "
                    f"examples or history steps) or load the model with a larger n_ctx."
                )
            self._bring_back(tokens)
            cached = self._reused_prefix(tokens)
            if pick:
                assert choices is not None
                kept = self._kept_for(tokens)
                chosen = self._pick(tokens, cached, choices, kept)
                text, completion_tokens = chosen.text, chosen.tokens
                cached = len(tokens) if kept is not None else cached
            else:
                result = self._llama.create_completion(
                    prompt=tokens,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    seed=seed,
                    stop=list(stop or []) + list(formatted.stop or []),
                    stopping_criteria=formatted.stopping_criteria,
                    grammar=compiled,
                )
                choice = (result.get("choices") or [{}])[0]
                text = choice.get("text") or ""
                completion_tokens = (result.get("usage") or {}).get("completion_tokens", 0)
            seconds = time.perf_counter() - start
        return Completion(text[:limit], Cost(
            calls=1, prompt_tokens=len(tokens), cached_tokens=cached, completion_tokens=completion_tokens, seconds=seconds,
        ))

    def _pick(self, tokens: list[int], cached: int, choices: list[str], kept: _Kept | None) -> Chosen:
        """Evaluate the prompt past its `cached` prefix (nothing, where its logits were `kept`),
        then pick one of `choices` greedily."""
        llama = self._llama
        vocabulary = llama.n_vocab()

        def logits() -> np.ndarray:
            return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(vocabulary,))

        if kept is not None:
            llama._ctx.kv_cache_seq_rm(-1, len(tokens), -1)  # the last answer's tokens go
            llama.n_tokens = len(tokens)
            first = kept.logits
        else:
            llama.n_tokens = cached  # `eval` drops the KV cache past it
            llama.eval(tokens[cached:])
            first = logits().copy()
            self._kept = _Kept(np.asarray(tokens, dtype=np.intc), first)

        def step(more: list[int]) -> np.ndarray:
            if not more:  # the first read, at the prompt's end
                return first
            llama.eval(more)
            return logits()

        tokenized = {c: llama.tokenize(c.encode("utf-8"), add_bos=False, special=False) for c in choices}
        chosen = choose(tokenized, step, self._end_tokens(llama))
        # The context's logits may be another position's (the last branch read, or an earlier
        # call's where the prompt's were kept): llama-cpp-python's own generation must not sample
        # from them (after a kept prompt it answered "2" where the model's answer was "look around").
        llama._requires_eval = True
        return chosen

    def _kept_for(self, tokens: list[int]) -> _Kept | None:
        """The kept logits of exactly this prompt, if the context still holds it."""
        kept, llama = self._kept, self._llama
        if kept is None or len(kept.tokens) != len(tokens) or llama.n_tokens < len(tokens):
            return None
        wanted = np.asarray(tokens, dtype=np.intc)
        return kept if np.array_equal(kept.tokens, wanted) and _common(llama.input_ids[: llama.n_tokens], wanted) == len(tokens) else None

    @staticmethod
    def _end_tokens(llama: Any) -> list[int]:
        """What ends an answer: the model's end of turn, or a new line."""
        return [llama.token_eos(), *llama.tokenize(b"\n", add_bos=False, special=False)]

    def _reused_prefix(self, tokens: list[int]) -> int:
        """How many of `tokens` llama.cpp will take from its KV cache (as `Llama.generate` does)."""
        held = self._llama.input_ids[: self._llama.n_tokens]
        common = _common(held, np.asarray(tokens, dtype=held.dtype))
        # A fully cached prompt still has its last token re-evaluated to get fresh logits.
        return min(common, len(tokens) - 1)

    def _bring_back(self, tokens: list[int]) -> None:
        """Make the context hold the conversation that shares most of `tokens`. The live one is
        parked when the prompt is another conversation's (it shares less than half of the live
        cache, or a parked one shares more); the parked one that shares more is restored."""
        if not self._park_at_most:
            return
        llama = self._llama
        wanted = np.asarray(tokens, dtype=np.intc)
        live = _common(llama.input_ids[: llama.n_tokens], wanted)
        best = max(self._parked, key=lambda p: _common(p.tokens, wanted), default=None)
        if best is not None and _common(best.tokens, wanted) <= live:
            best = None  # the live conversation shares the most
        if best is not None:
            self._parked.remove(best)
        if llama.n_tokens and (best is not None or 2 * live < llama.n_tokens):
            self._parked.append(self._park(llama))
            del self._parked[: -self._park_at_most]  # the least recently used go first
            self._kept = None
        if best is not None:
            self._restore(llama, best)
            self._kept = best.kept

    def _park(self, llama: Any) -> _Parked:
        low = _llama_cpp().llama_cpp
        size = low.llama_state_seq_get_size(llama._ctx.ctx, 0)
        # Left uninitialised (a ctypes array zeroes its ~100 MB first: 0.13 s a switch, not 0.02).
        state = np.empty(size, dtype=np.uint8)
        low.llama_state_seq_get_data(llama._ctx.ctx, _bytes(state), size, 0)
        return _Parked(llama.input_ids[: llama.n_tokens].copy(), state, self._kept)

    def _restore(self, llama: Any, parked: _Parked) -> None:
        low = _llama_cpp().llama_cpp
        llama._ctx.kv_cache_seq_rm(0, -1, -1)
        if not low.llama_state_seq_set_data(llama._ctx.ctx, _bytes(parked.state), len(parked.state), 0):
            llama.reset()  # the state did not load: the prompt is evaluated from its start
            return
        n = len(parked.tokens)
        llama.input_ids[:n] = parked.tokens
        llama.n_tokens = n
        # The logits of the restored sequence's last token are not in the context: have llama-cpp-python
        # evaluate it again rather than sample from another conversation's logits.
        llama._requires_eval = True

    def close(self) -> None:
        if self._loaded is not None:
            self._loaded[0].close()


def _bytes(array: np.ndarray) -> Any:
    """A byte array as the uint8 pointer llama.cpp's state functions take."""
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))


def _common(held: np.ndarray, wanted: np.ndarray) -> int:
    """The length of the prefix two token arrays share."""
    n = min(len(held), len(wanted))
    differ = np.flatnonzero(held[:n] != wanted[:n])
    return int(differ[0]) if differ.size else n


@contextlib.contextmanager
def extra_buffers(llama_cpp: Any, allowed: bool) -> Iterator[None]:
    """Models loaded within have llama.cpp's `use_extra_bufts` off unless `allowed`.

    llama-cpp-python's `Llama` takes no such argument: it starts from
    `llama_model_default_params()`, which is swapped for the duration of the load (under the
    backend's load lock; prag loads no other model meanwhile)."""
    low = llama_cpp.llama_cpp
    original = low.llama_model_default_params
    if allowed or not hasattr(original(), "use_extra_bufts"):
        yield
        return

    def without() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    low.llama_model_default_params = without
    try:
        yield
    finally:
        low.llama_model_default_params = original


def _load(llama_cpp: Any, **params: Any) -> Any:
    """`llama_cpp.Llama(**params)`, with a Ctrl-C (or SIGTERM, SIGHUP) during the load raised once it returns.

    While the model loads, a signal's Python handler runs inside llama.cpp's log callback,
    where ctypes drops the KeyboardInterrupt: the load, and the run, went on. So the signal is
    only noted then, and delivered again to the caller's handler once the load is done (about
    a second for the shipped models). Handlers can be set only in the main thread; elsewhere
    the load runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        return llama_cpp.Llama(**params)
    caught: list[int] = []
    handled = [signum for signum in STOP_SIGNALS if callable(signal.getsignal(signum))]
    previous = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum)) for signum in handled}
    llama = None
    try:
        llama = llama_cpp.Llama(**params)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            if llama is not None:
                llama.close()
            signal.raise_signal(caught[0])
    return llama


def _chat_formatter(llama: Any, llama_cpp: Any, model_path: Path) -> Any:
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise LLMError(
            f"The model {model_path} has no chat template in its metadata; use an instruct GGUF."
        )
    eos = llama.token_eos()
    bos = llama.token_bos()

    def text(token: int) -> str:
        return llama.detokenize([token], special=True).decode("utf-8") if token != -1 else ""

    # As llama-cpp-python builds its own handler from the GGUF template (Llama.__init__).
    return llama_cpp.llama_chat_format.Jinja2ChatFormatter(
        template=template, eos_token=text(eos), bos_token=text(bos), stop_token_ids=[eos]
    )
