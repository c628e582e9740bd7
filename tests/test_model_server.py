"""The local model served to a run's workers (prag.llm.serve, prag.llm.model_server) with the real
0.5B model: it answers as the in-process model does, under the local model's name, with choices
constrained and the prefix of each conversation kept; a crash of the server is an LLMError that
says how it ended; and it ends when the run closes it (or dies)."""
from __future__ import annotations

import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from prag.errors import LLMError
from prag.llm import local_model, make_llm
from prag.llm.local import LocalLLM
from prag.llm.model_server import ModelServer

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")


def _model() -> tuple:
    try:
        return local_model("local:0.5b")
    except LLMError as exc:
        pytest.skip(f"the local 0.5B model is not available: {exc}")


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    path, name = _model()
    served = ModelServer(path, name, threads=1, sequences=2)
    try:
        yield served
    finally:
        served.close()


def _household(n: int, nonce: str) -> str:
    return f"[{nonce}] You are in a house.\n" + "\n".join(
        f"Room {i}: a cabinet {i}, a drawer {i + 1} and a shelf {i + 2}." for i in range(n))


def test_it_answers_as_the_local_model_under_its_name(server: ModelServer) -> None:
    llm = make_llm("local:0.5b", base_url=server.url)
    assert llm.name == "local:qwen2.5-coder-0.5b-instruct-q4_k_m"  # the answer cache's key, as in process
    assert llm.supports_choices
    messages = [{"role": "user", "content": "What is the capital of France? Answer with one word."}]
    served = llm.complete(messages, max_tokens=8)
    path, name = _model()
    in_process = LocalLLM(path, name=name, n_ctx=2048).complete(messages, max_tokens=8)
    assert served.text == in_process.text and "paris" in served.text.lower()
    assert (served.cost.prompt_tokens, served.cost.completion_tokens) == (in_process.cost.prompt_tokens, in_process.cost.completion_tokens)


def test_choices_are_picked_by_the_server_as_in_process(server: ModelServer) -> None:
    """The choices go to the server as they are and are picked token by token there, as the
    in-process model picks them (a grammar over hundreds of actions cost about a second a token)."""
    llm = make_llm("local:0.5b", base_url=server.url)
    choices = ["go to cabinet 3", "open drawer 2", 'say "done"']
    out = llm.complete([{"role": "user", "content": "Write a poem about the sea, then pick an action."}],
                       choices=choices, max_tokens=4)
    assert out.text in choices
    many = [f"move {thing} {n} to {place}" for thing in ("cup", "pot", "jar") for n in range(1, 60)
            for place in ("sink", "table", "stove")]  # ScienceWorld's hundreds
    asked = [{"role": "user", "content": "Put the pot 7 on the stove. Which action?"}]
    served = llm.complete(asked, choices=many)
    path, name = _model()
    assert served.text == LocalLLM(path, name=name, n_ctx=2048).complete(asked, choices=many).text
    assert served.cost.completion_tokens <= 12


def test_two_interleaved_conversations_each_keep_their_prefix(server: ModelServer) -> None:
    llm = make_llm("local:0.5b", base_url=server.url)
    first, second = ({"role": "system", "content": _household(20, nonce)} for nonce in ("a", "b"))
    for system in (first, second):
        llm.complete([system, {"role": "user", "content": "Which room has drawer 5?"}], max_tokens=4)
    again = llm.complete([first, {"role": "user", "content": "Which room has shelf 9?"}], max_tokens=4)
    assert again.cost.prompt_tokens > 300
    # Only the question after the household is evaluated again: the first conversation's cache was
    # parked while the second used the context, and brought back.
    assert again.cost.cached_tokens > again.cost.prompt_tokens - 30


def test_a_request_it_cannot_read_is_a_400_with_a_message(server: ModelServer) -> None:
    request = urllib.request.Request(f"{server.url}/chat/completions", data=b'{"messages": 3}',
                                     headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=30)
    assert caught.value.code == 400
    assert "messages" in json.loads(caught.value.read())["error"]["message"]


def test_a_crashed_server_is_an_llm_error_saying_how_it_ended() -> None:
    path, name = _model()
    served = ModelServer(path, name, threads=1, sequences=1)
    llm = make_llm("local:0.5b", base_url=served.url)
    llm.complete([{"role": "user", "content": "Say hi."}], max_tokens=2)  # the model is loaded and answering
    served.process.send_signal(signal.SIGSEGV)  # as llama.cpp crashing in native code does
    served.process.wait(timeout=30)
    with pytest.raises(LLMError) as caught:
        llm.complete([{"role": "user", "content": "Say hi again."}], max_tokens=2)
    said = str(served.error(caught.value))
    assert "was ended by SIGSEGV (a crash in llama.cpp's native code)" in said
    assert str(served.log) in said and served.log.exists()  # the log of a crash is kept
    served.close()
    served.log.unlink()


def test_closing_it_ends_the_server_and_removes_its_log() -> None:
    path, name = _model()
    served = ModelServer(path, name, threads=1, sequences=1)
    with urllib.request.urlopen(f"{served.url}/models", timeout=60) as reply:  # waits in the backlog while it starts
        assert json.loads(reply.read())["data"][0]["owned_by"] == "prag"
    served.close()
    assert served.process.returncode == 0
    assert not served.log.exists()
    assert served.error(LLMError("refused")).args[0].startswith("The local model server prag started")


def test_the_server_ends_when_the_process_that_started_it_dies(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    path, name = _model()
    script = (f"from pathlib import Path\nfrom prag.llm.model_server import ModelServer\n"
              f"s = ModelServer(Path({str(path)!r}), {name!r}, threads=1, sequences=1)\nprint(s.process.pid, flush=True)\n"
              f"import os; os._exit(0)\n")  # no close(): as a run killed with SIGKILL
    started = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    pid = int(started.stdout.split()[0])
    deadline = time.monotonic() + 30
    while _alive(pid):
        assert time.monotonic() < deadline, "the orphaned model server is still running"
        time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
