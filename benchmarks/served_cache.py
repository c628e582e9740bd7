"""The same prompts through an OpenAI-compatible server's HTTP path: how much of them its prefix
cache serves, and the seconds a call.

    PYTHONPATH=. taskset -c 1 python benchmarks/llm_steps.py sciworld-test --limit 2 --record calls.jsonl
    PYTHONPATH=. OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/served_cache.py calls.jsonl --server llama-cpp
    PYTHONPATH=. OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/served_cache.py calls.jsonl --server prag

Replays the calls a run recorded (`benchmarks/llm_steps.py --record`), in their order, through
prag's OpenAI client (`--llm openai:MODEL --llm-url URL`, as `prag run` sends them) to a server
started for the purpose on 127.0.0.1 with one thread:
- `llama-cpp`: llama-cpp-python's server (`python -m prag.llm.llama_server`: `llama_cpp.server` loaded as prag loads, installed with the
  `local` extra's server extra), which keeps the last prompt's KV cache and reuses its longest
  shared prefix; choices go to it as a GBNF grammar. It reports no cached tokens, so they are
  read from what it logs with `--verbose True` ("N prefix-match hit, remaining M prompt tokens
  to eval");
- `prag`: prag's own model server (`prag.llm.serve`, what `prag run --workers N` starts), which
  reports them in `usage.prompt_tokens_details.cached_tokens`; choices are picked token by token.
Prints the calls' seconds (median, 90th percentile), prompt tokens a call, and the share of
prompt tokens the server's cache served, beside what the in-process model did for the same calls.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prag.llm import local_model
from prag.llm.openai_backend import OpenAILLM

_PREFIX_HIT = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(server: str, path: Path, name: str, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    if server == "llama-cpp":
        command = [sys.executable, "-m", "prag.llm.llama_server", "--model", str(path), "--model_alias", name,
                   "--n_ctx", "8192", "--n_threads", "1", "--n_threads_batch", "1", "--verbose", "True",
                   "--host", "127.0.0.1", "--port", str(port)]
        process = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    else:
        listener = socket.socket()
        listener.bind(("127.0.0.1", port))
        listener.listen(16)
        command = [sys.executable, "-m", "prag.llm.serve", "--model", str(path), "--name", name,
                   "--fd", str(listener.fileno()), "--threads", "1"]
        process = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                                   pass_fds=(listener.fileno(),), env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
        listener.close()
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5):
                return process, url
        except OSError:
            time.sleep(0.5)
    process.kill()
    sys.exit(f"the {server} server did not answer on {url}; its output: {log}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("calls", type=Path, help="a --record file of benchmarks/llm_steps.py")
    parser.add_argument("--server", choices=("llama-cpp", "prag"), default="llama-cpp")
    parser.add_argument("--llm", default="local", help="the local model the server runs (local, local:0.5b)")
    parser.add_argument("--first", type=int, default=60, help="replay the first N calls")
    args = parser.parse_args()
    recorded = [json.loads(line) for line in args.calls.read_text().splitlines()][: args.first]
    path, name = local_model(args.llm)
    log = Path(tempfile.mkstemp(prefix=f"served-{args.server}-", suffix=".log")[1])
    process, url = _start(args.server, path, name, log)
    try:
        client = OpenAILLM(name, base_url=url, timeout=600, retries=0)
        rows = []
        for call in recorded:
            logged = log.stat().st_size
            done = client.complete(call["messages"], max_tokens=24, choices=call.get("choices"),
                                   stop=None if call.get("choices") else ["\n"])
            cached = done.cost.cached_tokens
            if args.server == "llama-cpp":
                with log.open() as text:
                    text.seek(logged)
                    hits = _PREFIX_HIT.findall(text.read())
                cached = int(hits[-1][0]) if hits else 0
            rows.append((done.cost.seconds, done.cost.prompt_tokens, cached, call["seconds"], call["cached_tokens"]))
    finally:
        if process.stdin is not None:
            process.stdin.close()
        process.terminate()
        process.wait(timeout=30)
    seconds = sorted(r[0] for r in rows)
    prompt = sum(r[1] for r in rows)
    print(f"{len(rows)} calls of {args.calls.name} through {args.server}'s server ({client.constraint} for choices), "
          f"model {name}, 1 thread; its log: {log}")
    print("| path | s a call (median) | s a call (p90) | prompt tokens a call | cached |")
    print("|---|---|---|---|---|")
    print(f"| HTTP, {args.server} | {statistics.median(seconds):.2f} | {seconds[int(0.9 * (len(seconds) - 1))]:.2f} "
          f"| {prompt / len(rows):.0f} | {sum(r[2] for r in rows) / prompt:.0%} |")
    recorded_seconds = sorted(r[3] for r in rows)
    print(f"| in process, as recorded | {statistics.median(recorded_seconds):.2f} "
          f"| {recorded_seconds[int(0.9 * (len(rows) - 1))]:.2f} | {prompt / len(rows):.0f} "
          f"| {sum(r[4] for r in rows) / prompt:.0%} |")


if __name__ == "__main__":
    main()
