"""The embedded llama.cpp backend with the real Qwen2.5 0.5B model: answers, token accounting,
prefix-cache reuse, constrained choice, and Ctrl-C while the model loads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import start

from prag.errors import LLMError
from prag.llm import make_llm
from prag.llm.local import LocalLLM

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
from local_models import llm  # noqa: E402,F401  (the module-scoped 0.5B model, a fixture)


def _evaluated(llm: LocalLLM) -> int:
    # llama.cpp's own count of decoded tokens: an oracle independent of our prefix bookkeeping.
    perf = llama_cpp.llama_perf_context(llm._llama._ctx.ctx)
    return int(perf.n_p_eval + perf.n_eval)


def _household(n: int) -> str:
    lines = [
        f"Room {i}: a cabinet {i}, a drawer {i + 1} and a shelf {i + 2}; the cabinet is closed."
        for i in range(n)
    ]
    return "You are in a house.\n" + "\n".join(lines)


def test_short_chat_answers_and_counts_tokens(llm: LocalLLM) -> None:
    messages = [{"role": "user", "content": "What is the capital of France? Answer with one word."}]
    out = llm.complete(messages, max_tokens=8)
    assert "paris" in out.text.lower()
    assert out.cost.prompt_tokens == len(llm.prompt_tokens(messages))
    assert 1 <= out.cost.completion_tokens <= 8
    assert out.cost.seconds > 0


def test_same_leading_messages_reuse_the_prefix(llm: LocalLLM) -> None:
    system = {"role": "system", "content": _household(25)}
    llm.complete([{"role": "user", "content": "Say hi."}], max_tokens=2)  # evicts that prefix

    before = _evaluated(llm)
    cold = llm.complete(
        [system, {"role": "user", "content": "Which room has drawer 5?"}], max_tokens=4
    )
    cold_evaluated = _evaluated(llm) - before
    prefix = len(llm.prompt_tokens([system]))
    assert cold.cost.prompt_tokens > 500
    assert cold.cost.cached_tokens < 10  # only the chat template's first tokens are shared

    before = _evaluated(llm)
    warm = llm.complete(
        [system, {"role": "user", "content": "Which room has shelf 12?"}], max_tokens=4
    )
    warm_evaluated = _evaluated(llm) - before
    assert warm.cost.cached_tokens >= prefix - 5
    # What llama.cpp decoded is what we said it would: the uncached prompt plus the new tokens.
    assert warm_evaluated == warm.cost.prompt_tokens - warm.cost.cached_tokens + warm.cost.completion_tokens - 1
    assert cold_evaluated == cold.cost.prompt_tokens - cold.cost.cached_tokens + cold.cost.completion_tokens - 1
    # Faster in work done, not in wall time (the machine is shared; benchmarks/llm.py times it).
    assert warm_evaluated * 10 < cold_evaluated


def test_a_growing_conversation_keeps_its_prefix(llm: LocalLLM) -> None:
    messages = [
        {"role": "system", "content": _household(10)},
        {"role": "user", "content": "Goal: open cabinet 3. Your next action?"},
    ]
    first = llm.complete(messages, max_tokens=6)
    messages += [
        {"role": "assistant", "content": first.text},
        {
            "role": "user",
            "content": "Observation: You open cabinet 3. It is empty. Your next action?",
        },
    ]
    second = llm.complete(messages, max_tokens=6)
    assert second.cost.cached_tokens >= first.cost.prompt_tokens - 1


def test_a_call_asked_again_or_re_asked_evaluates_no_prompt_token_twice(llm: LocalLLM) -> None:
    """A retried call (the same prompt) reads the logits its prompt ended with; a re-asked one
    (the answer and the re-ask after it) evaluates only what follows the first prompt. Counted by
    llama.cpp itself. Choices that branch at their first token only: the pick reads nothing more."""
    asked = [{"role": "system", "content": _household(12)},
             {"role": "user", "content": "Is there a drawer in room 3? Answer yes or no."}]
    choices = ["yes", "no"]
    llm.complete([{"role": "user", "content": "Say hi."}], max_tokens=2)  # another prompt in the context
    before = _evaluated(llm)
    first = llm.complete(asked, choices=choices)
    assert _evaluated(llm) - before == first.cost.prompt_tokens - first.cost.cached_tokens

    before = _evaluated(llm)
    again = llm.complete(asked, choices=choices)
    assert _evaluated(llm) == before  # not even the prompt's last token
    assert again.text == first.text and again.cost.cached_tokens == again.cost.prompt_tokens

    re_asked = asked + [{"role": "assistant", "content": first.text},
                        {"role": "user", "content": "Look again at room 3. Answer yes or no."}]
    before = _evaluated(llm)
    answer = llm.complete(re_asked, choices=choices)
    assert answer.cost.cached_tokens >= first.cost.prompt_tokens
    assert _evaluated(llm) - before == answer.cost.prompt_tokens - answer.cost.cached_tokens
    assert answer.text in choices


def test_after_a_pick_a_grammar_answer_to_the_same_prompt_is_the_models_own(llm: LocalLLM) -> None:
    """The pick leaves the context's logits at its last branch; llama-cpp-python's generation of
    the same prompt must not sample from them (it answered from the wrong position)."""
    from prag.llm.base import choice_grammar

    asked = [{"role": "user", "content": "You need the key in the drawer. Pick the action."}]
    llm.complete(asked, choices=["open drawer 2", "open drawer 3", "open cabinet 1"])  # branches past the prompt
    llm.complete(asked, choices=["look", "inventory"])  # its kept logits: nothing decoded
    grammar = choice_grammar(["look around", "2", "3"])  # what follows "open drawer" would be a digit
    answer = llm.complete(asked, grammar=grammar, max_tokens=8).text
    fresh = LocalLLM(llm._llama.model_path, n_ctx=1024).complete(asked, grammar=grammar, max_tokens=8).text
    assert answer == fresh


def test_choices_constrain_the_answer(llm: LocalLLM) -> None:
    choices = ["go to cabinet 3", "open drawer 2", 'say "done"', "path C:\\home"]
    out = llm.complete(
        [{"role": "user", "content": "Write a long poem about the sea, then pick an action."}],
        choices=choices,
        max_tokens=4,  # shorter than the choices: the backend must give them room to finish
    )
    assert out.text in choices


def test_choices_must_be_nonempty_strings(llm: LocalLLM) -> None:
    with pytest.raises(ValueError):
        llm.complete([{"role": "user", "content": "hi"}], choices=["a", ""])


def test_a_prompt_over_the_context_is_a_clear_error(llm: LocalLLM) -> None:
    with pytest.raises(LLMError, match="over the context"):
        llm.complete([{"role": "user", "content": _household(400)}])


def test_unknown_local_model_is_a_clear_error() -> None:
    with pytest.raises(LLMError, match="local:0.5b"):
        make_llm("local:7b")


def test_a_gguf_path_loads_that_file(llm: LocalLLM) -> None:
    path = llm._llama.model_path
    other = make_llm(f"local:{path}", n_ctx=512)
    assert other.name == "local:qwen2.5-coder-0.5b-instruct-q4_k_m"
    with pytest.raises(LLMError, match="No model file"):
        make_llm("local:/nonexistent/model.gguf")


BATCH_DECODE = textwrap.dedent(
    """
    from prag.llm import make_llm

    llm = make_llm("local:0.5b", n_ctx=4096)
    rooms = "\\n".join(f"Room {i}: a cabinet {i}, a drawer {i + 1} and a shelf {i + 2}." for i in range(60))
    out = llm.complete([{"role": "system", "content": rooms},
                        {"role": "user", "content": "What is the capital of France? Answer with one word."}], max_tokens=8)
    print(out.cost.prompt_tokens, out.text.strip(), flush=True)
    """
)


def test_the_model_answers_a_batch_decode_as_the_readme_installs_it() -> None:
    """The README's `pip install -e ".[local]"` (no build flags) and the first call of `prag run`:
    a prompt of several batches decoded at once. On machines that advertise AMX the native
    build's extra buffer types crashed here (exit -11, a segfault): the load turns them off
    there (`extra_buffers_safe`). In a child process, so that a crash fails this test alone."""
    done = subprocess.run([sys.executable, "-c", BATCH_DECODE], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    prompt_tokens, answer = done.stdout.split(maxsplit=1)
    assert int(prompt_tokens) > 1024  # more than two of llama.cpp's 512-token batches
    assert "paris" in answer.lower()


@pytest.mark.parametrize(
    ("flags", "safe"),
    [
        ("fpu sse2 avx2 fma f16c avx512f avx512_vnni", True),
        ("fpu sse2 avx2 avx512f amx_bf16 amx_tile amx_int8", False),
        ("fpu sse2 amx_tile", False),
    ],
)
def test_extra_buffers_are_off_where_the_cpu_advertises_amx(tmp_path, flags: str, safe: bool) -> None:  # type: ignore[no-untyped-def]
    from prag.llm.local import extra_buffers_safe

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    assert extra_buffers_safe(cpuinfo) is safe
    assert extra_buffers_safe(tmp_path / "missing") is True  # unreadable: nothing is turned off


def test_where_they_are_unsafe_the_model_loads_without_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("prag.llm.local.extra_buffers_safe", lambda: False)
    llm = make_llm("local:0.5b", n_ctx=1024)
    assert "paris" in llm.complete([{"role": "user", "content": "The capital of France? One word."}], max_tokens=6).text.lower()
    assert llm._llama.model_params.use_extra_bufts is False  # type: ignore[attr-defined]
    default = llama_cpp.llama_cpp.llama_model_default_params()
    assert default.use_extra_bufts is True  # the swap of the defaults ended with the load


def test_parked_conversations_come_back_with_their_cache_and_the_same_answers(llm: LocalLLM) -> None:
    path = llm._llama.model_path
    shared = LocalLLM(path, n_ctx=4096, sequences=2)
    first, second = ({"role": "system", "content": f"[{nonce}] " + _household(15)} for nonce in ("one", "two"))
    question = {"role": "user", "content": "Which room has shelf 9? Answer with the room's number."}
    for system in (first, second):
        shared.complete([system, {"role": "user", "content": "Which room has drawer 5?"}], max_tokens=4)
    before = _evaluated(shared)
    again = shared.complete([first, question], max_tokens=6)
    # Only what follows the parked household is decoded again (llama.cpp's own count), not its 400 tokens.
    assert _evaluated(shared) - before < 40
    assert again.cost.cached_tokens > again.cost.prompt_tokens - 30
    fresh = LocalLLM(path, n_ctx=4096).complete([first, question], max_tokens=6)
    assert again.text == fresh.text


LOADER = textwrap.dedent(
    """
    import time
    import llama_cpp  # imported first, so that the signal lands in the load itself
    from prag.llm import make_llm

    print("loading", flush=True)
    start = time.monotonic()
    make_llm("local:0.5b").prompt_tokens([{"role": "user", "content": "hi"}])  # the first use loads it
    print(f"loaded in {time.monotonic() - start:.2f} s", flush=True)
    time.sleep(1)
    print("went on", flush=True)
    """
)


def test_the_model_loads_at_its_first_use_not_when_built() -> None:
    """A run whose other sources decide every step never pays for the model's load and memory."""
    from prag.llm import make_llm

    llm = make_llm("local:0.5b")
    assert llm._loaded is None  # type: ignore[attr-defined]
    assert llm.prompt_tokens([{"role": "user", "content": "hi"}])  # type: ignore[attr-defined]
    assert llm._loaded is not None  # type: ignore[attr-defined]


def test_ctrl_c_while_the_model_loads_stops_the_process(llm: LocalLLM) -> None:
    # Before the fix the KeyboardInterrupt died in llama.cpp's log callback and the load went
    # on: "loaded", "went on", exit 0. The 0.5B model takes about half a second to load here.
    proc = start(
        [sys.executable, "-c", LOADER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "loading\n"
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert time.monotonic() - sent < 5
    assert proc.returncode == -signal.SIGINT, (out, err)
    assert "KeyboardInterrupt" in err and "loaded" not in out  # it came out of the load
