"""The OpenAI-compatible backend against a real llama.cpp server on 127.0.0.1 (llama-cpp-python's
`python -m llama_cpp.server` with the 0.5B model), plus retries and odd answers from a tiny HTTP
server, and a closed port."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from prag.errors import LLMError
from prag.llm import make_llm
from prag.llm.local import default_threads
from prag.llm.model_files import MODELS, model_path
from prag.llm.openai_backend import OpenAILLM


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp OpenAI-compatible server on a free local port; yields its base URL."""
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed")
    try:
        gguf = model_path(MODELS["0.5b"])
    except LLMError as exc:
        pytest.skip(f"the local 0.5B model is not available: {exc}")
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        str(default_threads()),
        "--model_alias",
        "qwen-0.5b",
    ]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"llama_cpp.server exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
                )
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not ready after 120 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.25)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_completes_through_a_real_server(server: str) -> None:
    llm = make_llm("openai:qwen-0.5b", base_url=server)
    assert llm.name == "openai:qwen-0.5b"
    out = llm.complete(
        [{"role": "user", "content": "What is the capital of France? Answer with one word."}],
        max_tokens=8,
    )
    assert "paris" in out.text.lower()
    assert out.prompt_tokens > 10
    assert 1 <= out.completion_tokens <= 8


def test_choices_through_the_server_grammar(server: str) -> None:
    llm = OpenAILLM("qwen-0.5b", base_url=server)
    assert llm.constraint == "grammar"  # recognised as a llama.cpp server
    assert llm.supports_choices
    choices = ["go to cabinet 3", "open drawer 2", 'say "done"']
    out = llm.complete(
        [{"role": "user", "content": "Write a long poem about the sea, then pick an action."}],
        choices=choices,
        max_tokens=4,
    )
    assert out.text in choices


def test_unreachable_endpoint_is_a_clear_and_quick_error() -> None:
    port = _free_port()  # bound then released: nothing listens there
    url = f"http://127.0.0.1:{port}/v1"
    llm = OpenAILLM("any", base_url=url, timeout=2, max_retries=1)
    start = time.monotonic()
    with pytest.raises(LLMError) as err:
        llm.complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - start < 10
    assert url in str(err.value) and "OPENAI_BASE_URL" in str(err.value)


def test_openai_without_a_key_says_which_variable_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        make_llm("openai:gpt-4o-mini")
    with pytest.raises(LLMError, match="openai:MODEL"):
        make_llm("openai:")


class _Scripted(BaseHTTPRequestHandler):
    """Answers POSTs with the next (status, body) of the server's script."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.requests += 1  # type: ignore[attr-defined]
        status, body = self.server.script.pop(0)  # type: ignore[attr-defined]
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:  # /models: nothing to tell the server's kind by
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def scripted_http() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    httpd.requests = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _url(httpd: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}/v1"


OK = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "open drawer 2"},
        }
    ],
    "usage": {
        "prompt_tokens": 30,
        "completion_tokens": 4,
        "total_tokens": 34,
        "prompt_tokens_details": {"cached_tokens": 16},
    },
}


def test_rate_limits_and_server_errors_are_retried(scripted_http: ThreadingHTTPServer) -> None:
    scripted_http.script = [  # type: ignore[attr-defined]
        (429, {"error": {"message": "slow down"}}),
        (503, {"error": {"message": "overloaded"}}),
        (200, OK),
    ]
    llm = OpenAILLM("m", base_url=_url(scripted_http), max_retries=3, constraint="none")
    out = llm.complete([{"role": "user", "content": "act"}])
    assert scripted_http.requests == 3  # type: ignore[attr-defined]
    assert (out.text, out.prompt_tokens, out.cached_tokens, out.completion_tokens) == (
        "open drawer 2",
        30,
        16,
        4,
    )


def test_persistent_server_error_is_an_llm_error(scripted_http: ThreadingHTTPServer) -> None:
    scripted_http.script = [(500, {"error": {"message": "boom"}})] * 2  # type: ignore[attr-defined]
    llm = OpenAILLM("m", base_url=_url(scripted_http), max_retries=1, constraint="none")
    with pytest.raises(LLMError, match="answered 500"):
        llm.complete([{"role": "user", "content": "act"}])


@pytest.mark.parametrize(
    "body",
    [
        {
            **OK,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": None},
                }
            ],
            "usage": None,
        },
        {**OK, "choices": []},
        {"id": "c1", "object": "chat.completion", "created": 0, "model": "m"},
    ],
    ids=["null-content", "no-choices", "bare"],
)
def test_odd_answers_come_back_as_empty_text(
    scripted_http: ThreadingHTTPServer, body: dict
) -> None:
    scripted_http.script = [(200, body)]  # type: ignore[attr-defined]
    llm = OpenAILLM("m", base_url=_url(scripted_http), max_retries=0)
    assert llm.constraint == "none"  # /models answers 404: no constraint is sent
    out = llm.complete([{"role": "user", "content": "act"}], choices=["a", "b"])
    assert out.text == ""
