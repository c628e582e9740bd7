"""The OpenAI-compatible backend against a real llama.cpp server on 127.0.0.1 (llama-cpp-python's
`python -m llama_cpp.server` with the 0.5B model), a closed port, and a fake server
(`fake_openai` in conftest.py) that answers junk, non-JSON, HTML, empty choices, huge bodies,
error statuses or slowly: each is retried within the retries given, then an LLMError that says
what the server sent and names only options that exist; answers come back bounded."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from prag.errors import LLMError
from prag.llm import make_llm
from prag.llm.base import answer_limit
from prag.llm.local import default_threads
from prag.llm.model_files import MODELS, model_path
from prag.llm.base import choice_grammar
from prag.llm.openai_backend import OpenAILLM

if TYPE_CHECKING:
    from conftest import FakeOpenAI

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
        "prag.llm.llama_server",  # llama_cpp.server, loaded as prag loads (it segfaults on AMX CPUs otherwise)
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
    assert out.cost.prompt_tokens > 10
    assert 1 <= out.cost.completion_tokens <= 8


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
    llm = OpenAILLM("any", base_url=url, timeout=2, retries=1)
    start = time.monotonic()
    with pytest.raises(LLMError) as err:
        llm.complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - start < 10
    assert url in str(err.value) and "OPENAI_BASE_URL" in str(err.value)
    assert "2 times" in str(err.value)


def test_openai_without_a_key_says_which_variable_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        make_llm("openai:gpt-4o-mini")
    with pytest.raises(LLMError, match="openai:MODEL"):
        make_llm("openai:")


ACT = [{"role": "user", "content": "act"}]
CHOICES = ["open drawer 2", "go to cabinet 3"]


def llm_for(fake: FakeOpenAI, **options: Any) -> OpenAILLM:
    """The backend pointed at the fake server; quick timeouts, no constraint unless asked."""
    return OpenAILLM("m", base_url=fake.url, **{"timeout": 2.0, "constraint": "none", **options})


JUNK = {
    "not-json": (b"this is not json {", "application/json", "not JSON: 'this is not json {'"),
    "html": (
        b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        "text/html",
        "<h1>502 Bad Gateway</h1>",
    ),
    "cut-off-json": (b'{"id": "c1", "choices": [{"index": 0, "mess', "application/json", "not JSON"),
    "binary": (bytes(range(256)) * 4, "application/octet-stream", "not JSON"),
    "json-list": (b"[1, 2, 3]", "application/json", "JSON that is not an object: '[1, 2, 3]'"),
    "error-object": (
        b'{"error": {"message": "model is still loading"}}',
        "application/json",
        "model is still loading",
    ),
    "empty-choices": (b'{"id": "c1", "choices": []}', "application/json", "no choices"),
    "bare": (b'{"id": "c1", "object": "chat.completion"}', "application/json", "no choices"),
    "null-content": (None, "application/json", "a choice without text"),
    "empty-text": (None, "application/json", "an empty answer"),
}


@pytest.mark.parametrize("case", list(JUNK))
def test_junk_is_retried_then_a_clear_error(fake_openai: FakeOpenAI, case: str) -> None:
    body, content_type, says = JUNK[case]
    if case == "null-content":
        body = fake_openai.chat(None)
    if case == "empty-text":
        body = fake_openai.chat("", finish_reason=None)  # the server says nothing of why
    fake_openai.answer(fake_openai.Answer(body, content_type=content_type))
    llm = llm_for(fake_openai, retries=1)
    start = time.monotonic()
    with pytest.raises(LLMError) as err:
        llm.complete(ACT)
    assert len(fake_openai.requests) == 2
    assert time.monotonic() - start < 5
    message = str(err.value)
    assert says in message and "(2 times)" in message and fake_openai.url in message
    assert "OPENAI_BASE_URL" in message and "--llm-retries" in message


def test_an_empty_answer_to_a_constrained_request_is_junk(fake_openai: FakeOpenAI) -> None:
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("")))
    llm = llm_for(fake_openai, retries=0, constraint="grammar")
    with pytest.raises(LLMError, match="an empty answer"):
        llm.complete(ACT, choices=CHOICES)
    assert "grammar" in fake_openai.requests[0][1]  # the constraint was sent, and ignored


def test_an_empty_answer_the_model_stopped_at_is_an_answer(fake_openai: FakeOpenAI) -> None:
    # stop=["\n"] and a first token "\n": an empty answer that is the model's own.
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("", finish_reason="stop")))
    out = llm_for(fake_openai).complete(ACT, stop=["\n"])
    assert out.text == "" and len(fake_openai.requests) == 1


def test_junk_then_an_answer_is_the_answer(fake_openai: FakeOpenAI) -> None:
    fake_openai.answer(
        fake_openai.Answer(b"<html>proxy error</html>", content_type="text/html"),
        fake_openai.Answer(b'{"choices": []}'),
        fake_openai.Answer(fake_openai.chat("open drawer 2")),
    )
    out = llm_for(fake_openai, retries=2).complete(ACT)
    assert len(fake_openai.requests) == 3
    assert (out.text, out.cost.prompt_tokens, out.cost.cached_tokens, out.cost.completion_tokens) == (
        "open drawer 2",
        30,
        16,
        4,
    )


def test_a_huge_body_is_refused_unread(fake_openai: FakeOpenAI) -> None:
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("open drawer 2 " + "x" * 5_000_000)))
    start = time.monotonic()
    with pytest.raises(LLMError) as err:
        llm_for(fake_openai, retries=1).complete(ACT, choices=CHOICES)
    assert time.monotonic() - start < 5
    assert len(fake_openai.requests) == 2
    assert "a body of 5,000," in str(err.value) and "--llm-retries" in str(err.value)


def test_a_huge_body_without_its_length_is_cut_off(fake_openai: FakeOpenAI) -> None:
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("x" * 5_000_000), length=False))
    with pytest.raises(LLMError, match="a body over the 1,0[0-9,]+ bytes an answer can need"):
        llm_for(fake_openai, retries=0).complete(ACT)


@pytest.mark.parametrize("choices", [CHOICES, None], ids=["choices", "free-text"])
def test_long_answers_come_back_cut_to_the_request(
    fake_openai: FakeOpenAI, choices: list[str] | None
) -> None:
    content = "open drawer 2, then " + "and then again " * 10_000  # 150 kB: under the byte cap
    fake_openai.answer(fake_openai.Answer(fake_openai.chat(content)))
    out = llm_for(fake_openai).complete(ACT, choices=choices, max_tokens=8)
    limit = answer_limit(choices, 8)
    assert out.text == content[:limit]
    assert limit <= (len(max(CHOICES, key=len)) + 16 if choices else 8 * 16)


def test_a_server_slower_than_the_timeout(fake_openai: FakeOpenAI) -> None:
    """--llm-timeout is the call's, retries included (issue 47: a dead server cost (retries + 1)
    timeouts and the pauses between, 197 s at the defaults): a request that takes all of it
    leaves no time for another."""
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("open drawer 2"), delay=10))
    waits: list[tuple[float, int]] = []
    llm = make_llm(
        "openai:m",
        base_url=fake_openai.url,
        constraint="none",
        timeout=2.5,
        retries=3,
        on_wait=lambda seconds, attempt: waits.append((seconds, attempt)),
    )
    start = time.monotonic()
    with pytest.raises(LLMError) as err:
        llm.complete(ACT)
    took = time.monotonic() - start
    assert 2.5 <= took < 4  # before: four requests of 2.5 s and three pauses, 13.5 s
    assert len(fake_openai.requests) == 1
    message = str(err.value)
    assert "did not answer within 2.5 s (1 time), the time --llm-timeout gives a call, retries included" in message
    assert "--llm-timeout" in message and "--llm-retries" in message
    # Told while waiting, about once a second, with the attempt; then told it is over.
    assert waits[-1] == (0.0, 0)
    ticks = waits[:-1]
    assert {attempt for _, attempt in ticks} == {1}
    assert [s for s, _ in ticks] == sorted(s for s, _ in ticks) and ticks[-1][0] <= took
    assert 1 <= len(ticks) <= took + 1


def test_retries_share_the_timeout_of_the_call(fake_openai: FakeOpenAI) -> None:
    """A retry gets what is left of the call's time, and none begins whose pause would end past it."""
    fake_openai.answer(
        fake_openai.Answer(b"{}", status=500),
        fake_openai.Answer(fake_openai.chat("open drawer 2"), delay=10),
    )
    start = time.monotonic()
    with pytest.raises(LLMError, match=r"did not answer within 2 s \(2 times\)"):
        llm_for(fake_openai, timeout=2, retries=5).complete(ACT)
    assert time.monotonic() - start < 3.5  # a 500, a 0.5 s pause, then the 1.5 s left
    assert len(fake_openai.requests) == 2
    fake_openai.answer(fake_openai.Answer(b"{}", status=503))
    start = time.monotonic()
    with pytest.raises(LLMError, match=r"answered 503 \((\d+) times\)") as err:
        llm_for(fake_openai, timeout=2, retries=100).complete(ACT)
    assert time.monotonic() - start < 3.5  # the pauses (0.5, 1, ...) end before the timeout does
    assert 2 <= int(re.search(r"\((\d+) times\)", str(err.value)).group(1)) < 5


def test_a_body_trickling_past_the_timeout_times_out(fake_openai: FakeOpenAI) -> None:
    # Each 64-byte piece comes well within the timeout; the whole reply does not.
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("open drawer 2"), pace=0.25))
    start = time.monotonic()
    with pytest.raises(LLMError, match=r"did not answer within 1 s \(1 time\)"):
        llm_for(fake_openai, timeout=1, retries=0).complete(ACT)
    assert time.monotonic() - start < 2.5


def test_a_slow_answer_within_the_timeout_is_reported_while_waited_for(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("open drawer 2"), delay=1.6))
    waits: list[tuple[float, int]] = []
    llm = llm_for(fake_openai, timeout=10, on_wait=lambda s, a: waits.append((s, a)))
    assert llm.complete(ACT).text == "open drawer 2"
    assert waits[-1] == (0.0, 0)
    assert [a for _, a in waits[:-1]] == [1] and 1.0 <= waits[0][0] < 1.6
    waits.clear()
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("open drawer 2")))
    llm.complete(ACT)
    assert waits == []  # a quick answer shows nothing


def test_rate_limits_and_server_errors_are_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.answer(
        fake_openai.Answer(b'{"error": {"message": "slow down"}}', status=429),
        fake_openai.Answer(b'{"error": {"message": "overloaded"}}', status=503),
        fake_openai.Answer(fake_openai.chat("open drawer 2")),
    )
    out = llm_for(fake_openai, retries=2).complete(ACT)
    assert len(fake_openai.requests) == 3 and out.text == "open drawer 2"


def test_retry_after_is_honoured(fake_openai: FakeOpenAI) -> None:
    fake_openai.answer(
        fake_openai.Answer(b"{}", status=429, headers={"Retry-After": "1.5"}),
        fake_openai.Answer(fake_openai.chat("open drawer 2")),
    )
    assert llm_for(fake_openai, retries=1).complete(ACT).text == "open drawer 2"
    assert fake_openai.started[1] - fake_openai.started[0] >= 1.4


def test_persistent_server_error_is_an_llm_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.answer(fake_openai.Answer(b'{"error": {"message": "boom"}}', status=500))
    with pytest.raises(LLMError, match=r"answered 500 \(2 times\).*boom.*--llm-retries"):
        llm_for(fake_openai, retries=1).complete(ACT)
    assert len(fake_openai.requests) == 2


@pytest.mark.parametrize(
    ("status", "says"),
    [(400, "answered 400"), (401, "OPENAI_API_KEY"), (404, "--llm openai:MODEL")],
)
def test_a_refused_request_is_not_retried(fake_openai: FakeOpenAI, status: int, says: str) -> None:
    fake_openai.answer(fake_openai.Answer(b'{"error": {"message": "no"}}', status=status))
    with pytest.raises(LLMError, match=re.escape(says)):
        llm_for(fake_openai, retries=3).complete(ACT)
    assert len(fake_openai.requests) == 1


def test_constraint_detection_sends_the_grammar(fake_openai: FakeOpenAI) -> None:
    fake_openai.models = [{"id": "m", "object": "model", "owned_by": "llamacpp", "created": 0}]
    llm = OpenAILLM("m", base_url=fake_openai.url, timeout=2)
    assert llm.constraint == "grammar"
    assert llm.complete(ACT, choices=CHOICES).text == "open drawer 2"
    assert fake_openai.requests[0][1]["grammar"] == choice_grammar(CHOICES)


def test_prags_own_server_is_sent_the_choices_themselves(fake_openai: FakeOpenAI) -> None:
    fake_openai.models = [{"id": "m", "object": "model", "owned_by": "prag", "created": 0}]
    llm = OpenAILLM("m", base_url=fake_openai.url, timeout=2)
    assert llm.constraint == "choices"
    assert llm.complete(ACT, choices=CHOICES).text == "open drawer 2"
    sent = fake_openai.requests[0][1]
    assert sent["choices"] == CHOICES and sent["more_lines"] == 0 and "grammar" not in sent


def test_models_that_answer_junk_mean_no_constraint(fake_openai: FakeOpenAI) -> None:
    for models in (None, "junk"):
        fake_openai.models = models  # type: ignore[assignment]
        assert OpenAILLM("m", base_url=fake_openai.url, timeout=2).constraint == "none"


@pytest.mark.parametrize("options", [{"timeout": 0}, {"timeout": -1}, {"retries": -1}])
def test_timeout_and_retries_are_checked(options: dict[str, Any]) -> None:
    with pytest.raises(LLMError, match="LLM (timeout|retries)"):
        make_llm("openai:m", base_url="http://127.0.0.1:9/v1", **options)


def _run_options() -> set[str]:
    import typer

    from prag.cli import _register, app

    _register()
    run = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    return {opt for param in run.params for opt in param.opts if opt.startswith("--")}


def test_messages_name_only_options_that_exist(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = []
    cases = [
        fake_openai.Answer(b"<html></html>", content_type="text/html"),
        fake_openai.Answer(fake_openai.chat("x"), delay=2),
        fake_openai.Answer(b"{}", status=401),
        fake_openai.Answer(b"{}", status=404),
        fake_openai.Answer(b"{}", status=500),
        fake_openai.Answer(b"{}", status=400),
    ]
    for answer in cases:
        fake_openai.answer(answer)
        with pytest.raises(LLMError) as err:
            llm_for(fake_openai, timeout=0.5, retries=0).complete(ACT)
        messages.append(str(err.value))
    with pytest.raises(LLMError) as err:
        OpenAILLM("m", base_url=f"http://127.0.0.1:{_free_port()}/v1", retries=0).complete(ACT)
    messages.append(str(err.value))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMError) as err:
        make_llm("openai:gpt-4o-mini")
    messages.append(str(err.value))
    named = {option for message in messages for option in re.findall(r"--[a-z][a-z-]*", message)}
    assert {"--llm-timeout", "--llm-retries"} <= named
    assert named <= _run_options()
    assert not any("raise the timeout" in message for message in messages)


# Before: the HTTP client's timeout bounds each read, and a server sending a byte at a time
# within it held a call until it had sent everything (here 5 to 30 s; a hostile one: for ever);
# now the client hangs up at the deadline, before the server is through. (A chat reply's body
# was already read against a deadline: that case guards it.)
DRIP = {"status line and headers": {"head_pace": 0.1}, "body": {"pace": 0.5}}  # a byte, 64 bytes


@pytest.mark.parametrize("where", list(DRIP))
def test_a_chat_reply_dripping_past_the_timeout_times_out_as_a_whole(fake_openai: FakeOpenAI, where: str) -> None:
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("open drawer 2"), **DRIP[where]))  # type: ignore[arg-type]
    with pytest.raises(LLMError, match=r"did not answer within 1 s \(1 time\).*--llm-timeout"):
        llm_for(fake_openai, timeout=1, retries=0).complete(ACT)
    assert fake_openai.hung_up.wait(30)


@pytest.mark.parametrize("where", list(DRIP))
def test_a_model_list_dripping_past_the_timeout_times_out_as_a_whole(fake_openai: FakeOpenAI, where: str) -> None:
    listed = [{"id": f"m{n}", "object": "model", "owned_by": "llamacpp"} for n in range(10)]
    models = json.dumps({"object": "list", "data": listed}).encode()
    fake_openai.models_answer = fake_openai.Answer(models, **DRIP[where])  # type: ignore[arg-type]
    with pytest.raises(LLMError, match=r"did not answer within 1 s \(1 time\)"):
        _ = OpenAILLM("m", base_url=fake_openai.url, timeout=1, retries=0).constraint
    assert fake_openai.hung_up.wait(30)
    # The backend left with a call past its deadline serves the next one.
    fake_openai.models_answer = fake_openai.Answer(models)
    assert OpenAILLM("m", base_url=fake_openai.url, timeout=1).constraint == "grammar"


@pytest.mark.parametrize("length", [True, False], ids=["declared", "undeclared"])
def test_a_model_list_of_400_mb_is_not_read(fake_openai: FakeOpenAI, length: bool) -> None:
    # Before: read whole (1.16 GB at its peak). Now read up to MODELS_BYTES, then "no constraint".
    fake_openai.models_answer = fake_openai.Answer(b" " * (1 << 16), repeat=6_400, length=length)
    llm = OpenAILLM("m", base_url=fake_openai.url, timeout=10)
    assert llm.constraint == "none"
    assert fake_openai.sent < 64 << 20  # the server got no further than the socket's buffers
    assert llm.complete(ACT).text == "open drawer 2"


@pytest.mark.parametrize("length", [True, False], ids=["declared", "undeclared"])
def test_an_error_of_200_mb_is_not_read(fake_openai: FakeOpenAI, length: bool) -> None:
    """Issue 47: a 500 with a body of 200 MB took 2.5 GB, read whole by the `openai` client
    before prag saw it. Now it is cut at ERROR_BYTES under the client, and said as any 500."""
    fake_openai.answer(fake_openai.Answer(b"boom " * (1 << 16), status=500, repeat=640, length=length))
    with pytest.raises(LLMError, match=r"answered 500 \(1 time\)") as err:
        llm_for(fake_openai, timeout=10, retries=0).complete(ACT)
    assert len(str(err.value)) < 1000
    assert fake_openai.sent < 64 << 20  # the server got no further than the socket's buffers
    fake_openai.answer(fake_openai.Answer(fake_openai.chat("open drawer 2")))
    assert llm_for(fake_openai).complete(ACT).text == "open drawer 2"  # a new request goes through
