"""Fixtures shared by test files: the real ALFWorld data, unpacked once per session, and a fake
OpenAI-compatible server that answers what a test scripts."""
from __future__ import annotations

import ctypes
import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# The shared data lies beside the checkout (../shared), in CI as on the dev machines.
SHARED_ALFWORLD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alfworld"

_scratch: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    # `import alfworld` creates $ALFWORLD_DATA (default ~/.cache/alfworld): keep it out of $HOME.
    global _scratch
    if "ALFWORLD_DATA" not in os.environ:
        _scratch = tempfile.mkdtemp(prefix="prag-test-alfworld-")
        os.environ["ALFWORLD_DATA"] = _scratch


def pytest_unconfigure(config: pytest.Config) -> None:
    if _scratch:
        shutil.rmtree(_scratch, ignore_errors=True)


@pytest.fixture(scope="session")
def alfworld_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The shared ALFWorld splits (valid_seen, valid_train) unpacked into a temp dir.

    Yields the data root (the folder holding `json_2.1.1/` and `logic/`) and sets ALFWORLD_DATA
    to it for the session. Other fixtures may repoint ALFWORLD_DATA, so a test that relies on the
    variable should set it again itself (`monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))`).
    """
    tarballs = sorted(SHARED_ALFWORLD.glob("alfworld-*.tar.gz"))
    if not tarballs:
        pytest.skip(f"real ALFWorld data not found: no alfworld-*.tar.gz in {SHARED_ALFWORLD}")
    out = tmp_path_factory.mktemp("alfworld")
    for tarball in tarballs:
        with tarfile.open(tarball) as archive:
            archive.extractall(out, filter="data")
    root = out / "alfworld"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALFWORLD_DATA", str(root))
        yield root


@dataclass
class Answer:
    """One scripted HTTP answer of `FakeOpenAI`."""

    body: bytes = b""
    status: int = 200
    content_type: str = "application/json"
    delay: float = 0.0  # seconds before the status line
    pace: float = 0.0  # seconds between 64-byte pieces of the body
    length: bool = True  # send Content-Length; without it the body ends when the server hangs up
    headers: dict[str, str] = field(default_factory=dict)
    head_pace: float = 0.0  # seconds between the bytes of the status line and headers
    repeat: int = 1  # the body is sent this many times over (a huge body, not held in memory)


def chat_completion(content: str | None, finish_reason: str = "stop", **fields: Any) -> bytes:
    """The JSON body of an OpenAI chat completion answering `content`."""
    reply = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {
            "prompt_tokens": 30,
            "completion_tokens": 4,
            "total_tokens": 34,
            "prompt_tokens_details": {"cached_tokens": 16},
        },
    }
    return json.dumps({**reply, **fields}).encode()


class FakeOpenAI:
    """An OpenAI-compatible HTTP server on 127.0.0.1, in a thread, answering from a script.

    Each chat request gets the next `Answer` of `script`; the last one repeats. GET /models
    answers `models_answer` when set, else `models` as its data (404 when None). `requests`
    holds each chat request's size and JSON, `started` the monotonic time each arrived, `sent`
    the bytes of bodies sent; `hung_up` is set once a client hangs up before an answer's end.
    """

    def __init__(self) -> None:
        self.script: list[Answer] = [Answer(chat_completion("open drawer 2"))]
        self.models: list[dict[str, Any]] | None = None
        self.models_answer: Answer | None = None
        self.sent = 0
        self.hung_up = threading.Event()
        self.requests: list[tuple[int, dict[str, Any]]] = []
        self.started: list[float] = []
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _fake_handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    Answer = Answer  # so that tests build answers from the fixture alone
    chat = staticmethod(chat_completion)

    def answer(self, *answers: Answer) -> None:
        self.script = list(answers)

    def next_answer(self) -> Answer:
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    @property
    def closing(self) -> bool:
        return self._closing.is_set()

    def pause(self, seconds: float) -> None:
        """Sleep, cut short when the server closes (so no answer outlives its test)."""
        self._closing.wait(seconds)

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def _fake_handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            fake.started.append(time.monotonic())
            fake.requests.append((len(raw), json.loads(raw)))
            answer = fake.next_answer()
            fake.pause(answer.delay)
            self._send(answer)

        def do_GET(self) -> None:
            if fake.models_answer is not None:
                self._send(fake.models_answer)
            elif fake.models is None:
                self._send(Answer(b"", status=404))
            else:
                self._send(Answer(json.dumps({"object": "list", "data": fake.models}).encode()))

        def _send(self, answer: Answer) -> None:
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                if answer.length:
                    self.send_header("Content-Length", str(len(answer.body) * answer.repeat))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if answer.head_pace:
                    self._drip(b"".join(self._headers_buffer) + b"\r\n", answer.head_pace)
                    self._headers_buffer = []
                else:
                    self.end_headers()
                step = 64 if answer.pace else len(answer.body) or 1
                for _ in range(answer.repeat):
                    for start in range(0, len(answer.body), step):
                        self.wfile.write(answer.body[start : start + step])
                        self.wfile.flush()
                        fake.sent += len(answer.body[start : start + step])
                        fake.pause(answer.pace)
            except (BrokenPipeError, ConnectionResetError):
                fake.hung_up.set()  # the client hung up, as it should on a reply too big or too slow

        def _drip(self, head: bytes, pace: float) -> None:
            for byte in head:
                if fake.closing:
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                fake.pause(pace)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A `FakeOpenAI` server for one test."""
    fake = FakeOpenAI()
    yield fake
    fake.close()


# --- the grid world played by a scripted stand-in LLM (runner, console, CLI and learning tests) ---

GRID_SPEC = """
name = "{name}"
env = "grid"
max_steps = {max_steps}
[params]
tasks = {tasks}
per_task = {per_task}
seed = {seed}
"""
TESTS = Path(__file__).resolve().parent


def write_spec(directory: Path, name: str, tasks: list[str], per_task: int = 1, seed: int = 0, max_steps: int = 40,
               hide: tuple[str, ...] = ()) -> str:
    """A grid task-set spec file in `directory`; returns its path."""
    path = directory / f"{name}.toml"
    text = GRID_SPEC.format(name=name, tasks=tasks, per_task=per_task, seed=seed, max_steps=max_steps)
    if hide:
        text = f"hide_actions = {list(hide)}\n" + text
    path.write_text(text.replace("'", '"'))
    return str(path)


def plans_of(spec_path: str) -> dict[str, list[str]]:
    """Goal text -> the oracle's plan, for every task of a spec."""
    from prag.envs.spec import load_spec

    source = load_spec(spec_path).open()
    plans = {}
    for task in source.tasks():
        env = source.make(task)
        goal = env.reset().goal
        plans[goal] = env.oracle_plan()
        env.close()
    return plans


def plan_follower(plans: dict[str, list[str]], spoil: Collection[str] = frozenset()) -> Callable[[list], str]:
    """Answers for a scripted stand-in LLM: the next step of the plan for the goal in the prompt.

    Goals in `spoil` get "look around the room" (never admissible) instead: a losing policy.
    """

    def answer(messages: list) -> str:
        task = next(m["content"] for m in reversed(messages) if m["content"].startswith("Your goal"))
        goal = task.split("\n", 1)[0].removeprefix("Your goal: ")
        if goal in spoil:
            return "look around the room"
        done = sum(1 for line in task.split("\n") if line.startswith("> "))
        return plans[goal][min(done, len(plans[goal]) - 1)]  # past the plan (steps passed over): its last step

    return answer


def agent_episodes(db: Path) -> int:
    """How many episodes the agent played into a store file; read with plain SQLite, so that a
    test can watch a store another process is writing."""
    if not db.exists():
        return 0
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        if not conn.execute("select 1 from sqlite_master where name = 'episodes'").fetchone():
            return 0
        return int(conn.execute("select count(*) from episodes where source = 'agent'").fetchone()[0])


def held_after(answer: Callable[[list], str], db: Path, episodes: int, patience: float = 300.0) -> Callable[[list], str]:
    """`answer`, until the store holds `episodes` agent episodes: then it never answers again
    (until `patience` runs out), so the run is still under way whenever the test stops it."""

    def held(messages: list) -> str:
        waited = time.monotonic()
        while agent_episodes(db) >= episodes:
            if time.monotonic() - waited > patience:
                raise RuntimeError(f"held for {patience} s: the test never stopped the run")
            time.sleep(0.05)
        return answer(messages)

    return held


HELD_CLI = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from conftest import held_after, plan_follower, plans_of
from prag.cli import common, main
from prag.llm.scripted import ScriptedLLM

common.test_llm = lambda spec: ScriptedLLM(held_after(plan_follower(plans_of({spec!r})), Path({db!r}), {episodes}))
sys.argv[0] = "prag"
main()
"""


def held_cli(directory: Path, spec: str, db: Path, episodes: int) -> Path:
    """A script that runs `prag` with its arguments, the LLM a plan-following scripted stand-in
    held once `db` holds `episodes` agent episodes (see `held_after`)."""
    script = directory / "held_prag.py"
    script.write_text(HELD_CLI.format(tests=str(TESTS), spec=spec, db=str(db), episodes=episodes))
    return script


def _stop_signals_at_their_defaults() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def start(command: list[str], **popen: Any) -> subprocess.Popen:
    """`subprocess.Popen(command, **popen)` for a test that stops the child with a signal: the
    child starts with SIGINT, SIGTERM and SIGHUP at their defaults, as a terminal's foreground
    job does. Otherwise it inherits what started the test session: a shell's background job
    (`pytest &` in a script) ignores SIGINT, one under `nohup` ignores SIGHUP, and Python keeps
    an ignored SIGINT ignored (no KeyboardInterrupt)."""
    return subprocess.Popen(command, preexec_fn=_stop_signals_at_their_defaults, **popen)


@pytest.fixture
def started_in_background() -> Iterator[None]:
    """This test process ignores SIGINT and SIGHUP for the test, as a test session started with
    `pytest &` from a script, or under `nohup`, does: children inherit that."""
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


CALLED_CLI = """
import sys, time
from pathlib import Path
from prag.cli import common, main
from prag.llm.scripted import ScriptedLLM

def held(messages):
    Path({marker!r}).touch()
    while True:  # never answers: the command is stopped while it waits
        time.sleep(0.05)

# Its own name: no answer another stand-in left in the store's answer cache is served for it.
common.test_llm = lambda spec: ScriptedLLM(held, name="held-never-answers")
sys.argv[0] = "prag"
main()
"""


def stop_at_first_llm_call(tmp_path: Path, signum: int, *args: str, typed: str = "") -> tuple[int, str]:
    """Run `prag ARGS` with an LLM stand-in that never answers, `typed` on its stdin (kept open,
    as a person at a terminal would); send `signum` at the LLM's first call. Returns the exit
    code and stderr."""
    marker = tmp_path / "called.marker"
    script = tmp_path / "called_prag.py"
    script.write_text(CALLED_CLI.format(marker=str(marker)))
    err = tmp_path / "called.err"
    with err.open("w") as stderr:
        process = start([sys.executable, str(script), *args], cwd=tmp_path, stdin=subprocess.PIPE, text=True,
                        stdout=subprocess.DEVNULL, stderr=stderr, env={**os.environ, "COLUMNS": "300"})
        try:
            assert process.stdin is not None
            process.stdin.write(typed)
            process.stdin.flush()
            began = time.monotonic()
            while not marker.exists():
                assert process.poll() is None, err.read_text()
                assert time.monotonic() - began < 240, "the LLM was never called"
                time.sleep(0.05)
            process.send_signal(signum)
            return process.wait(timeout=30), err.read_text()
        finally:
            if process.poll() is None:
                process.kill()
            process.stdin.close()


def wait_for_episodes(process: subprocess.Popen, db: Path, episodes: int, deadline: float = 240.0) -> None:
    """Poll the store until it holds `episodes` agent episodes (the process is then held)."""
    start = time.monotonic()
    while agent_episodes(db) < episodes:
        assert process.poll() is None, f"the run ended (exit {process.returncode}) before {episodes} episodes were stored"
        assert time.monotonic() - start < deadline, f"fewer than {episodes} episodes stored after {deadline} s"
        time.sleep(0.1)


def signal_when_stored(process: subprocess.Popen, db: Path, episodes: int, signum: int, timeout: float = 120.0) -> int:
    """Once the store holds `episodes` episodes, send `signum` to the (held) run and return its exit
    code; a process still alive after `timeout` seconds, or after a failed wait, is killed."""
    try:
        wait_for_episodes(process, db, episodes)
        process.send_signal(signum)
        return process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()


def model_parts_installed() -> bool:
    """Whether the 0.5B model's data wheels are installed (the `small` extra)."""
    from prag.errors import LLMError
    from prag.llm.model_files import MODELS, part_paths

    try:
        part_paths(MODELS["0.5b"])
    except LLMError:
        return False
    return True


# --- learning from interaction: what a scripted improvement LLM answers ---

PROBLEM = "The robot never opened the door to the kitchen."
ADVICE = "Open a closed door before trying to walk through it."


def plan_transcript(goal: str, plan: list[str]) -> str:
    """A console transcript in which the robot follows `plan` for `goal`: an improved transcript."""
    lines = [">>> wait_for_trigger()", repr({"type": "dialog", "text": goal}), ">>> observe()", "You are somewhere."]
    for action in plan:
        lines += [f'>>> act("{action}")', "It works."]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def accepts() -> Iterator[Callable[[str, str], bool]]:
    """`accepts(grammar, text)`: whether llama.cpp's grammar sampler lets the 0.5B model's
    tokenizer spell `text` and then end, token by token."""
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from prag.errors import LLMError
    from prag.llm.model_files import MODELS, model_path

    try:
        path = model_path(MODELS["0.5b"])
    except LLMError as exc:
        pytest.skip(f"the local 0.5B model is not available: {exc}")
    vocab = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)  # the tokenizer only: fast

    def run(grammar: str, text: str) -> bool:
        # LlamaGrammar.from_string only holds the text in llama-cpp-python 0.3; llama.cpp parses
        # it here, as when LocalLLM samples with it.
        sampler = llama_cpp.llama_sampler_init_grammar(vocab._model.vocab, grammar.encode(), b"root")
        assert sampler, f"llama.cpp did not parse the grammar:\n{grammar}"
        try:
            for token in vocab.tokenize(text.encode(), add_bos=False, special=False) + [vocab.token_eos()]:
                data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
                candidates = llama_cpp.llama_token_data_array(data, 1, -1, False)
                llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
                if math.isinf(data[0].logit):
                    return False  # the grammar masked this token out
                if token != vocab.token_eos():
                    llama_cpp.llama_sampler_accept(sampler, token)
            return True
        finally:
            llama_cpp.llama_sampler_free(sampler)

    yield run
    vocab.close()
