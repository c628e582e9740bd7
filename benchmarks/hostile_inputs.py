"""What a stranger's data costs prag in memory (issue 47): each case in a fresh process, its peak
resident memory and how it ended.

    python benchmarks/hostile_inputs.py [--line-mb 200] [--body-mb 200] [--per-task 10000000] [--cap-gb 3]
                                        [--against CHECKOUT]

- import: `prag import` of a file whose second line is one JSON line of --line-mb MB (a goal of
  that size); the store's growth is printed too.
- spec: `prag run` of a grid spec with `per_task = --per-task` and `--limit 1`, under an address
  space cap of --cap-gb GB (without one, 10**8 grew to 24 GB before the OOM killer ended it).
- error body: one call of the OpenAI-compatible backend to a local server answering 500 with a
  body of --body-mb MB.

With --against, another checkout of prag (say `git archive` of the code before a change, unpacked)
runs each case too: the figures are printed per checkout.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 1 << 20


def measured(command: list[str], checkout: Path, cwd: Path, cap_gb: float | None = None) -> tuple[float, int, str]:
    """(peak MB, exit code, last line of stderr) of `command` run with `checkout` first on the path."""

    def limit() -> None:
        if cap_gb:
            cap = int(cap_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = {**os.environ, "PYTHONPATH": str(checkout), "COLUMNS": "300"}
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               preexec_fn=limit)
    assert process.stderr is not None
    err = process.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    last = next((line for line in reversed(err.strip().splitlines()) if line.strip()), "")
    return usage.ru_maxrss / 1024, process.returncode, last[:160]


def import_case(checkout: Path, scratch: Path, megabytes: int) -> str:
    lines = scratch / "big.jsonl"
    run = {"kind": "run", "id": "r", "spec": "s", "llm": "x", "mode": "prag", "k": 3, "rounds": 1}
    with lines.open("w") as out:
        out.write(json.dumps(run) + "\n")
        out.write('{"kind": "episode", "run_id": "r", "round": 0, "task_id": "t", "task_type": "t", "won": false, '
                  '"steps": [{"t": 0, "action": null, "observation": "o", "scene": "s"}], "goal": "')
        for _ in range(megabytes):
            out.write("g" * CHUNK)
        out.write('"}\n')
    store = scratch / f"import-{checkout.name}.db"
    peak, code, said = measured([sys.executable, "cli.py", "import", str(store), str(lines)], checkout, checkout)
    size = sum(p.stat().st_size for p in scratch.glob(f"{store.name}*")) / 2**20
    lines.unlink()
    return f"peak {peak:,.0f} MB, exit {code}, store {size:,.0f} MB: {said}"


def spec_case(checkout: Path, scratch: Path, per_task: int, cap_gb: float) -> str:
    spec = scratch / "huge.toml"
    spec.write_text(f'name = "huge"\nenv = "grid"\nmax_steps = 5\n[params]\ntasks = ["collect_toys"]\nper_task = {per_task}\n')
    store = scratch / f"spec-{checkout.name}.db"
    command = [sys.executable, str(checkout / "cli.py"), "run", str(spec), "--limit", "1", "--rounds", "1",
               "--llm", "random", "--no-prior", "--store", str(store)]
    peak, code, said = measured(command, checkout, scratch, cap_gb)
    return f"peak {peak:,.0f} MB, exit {code}: {said}"


class _Huge500(BaseHTTPRequestHandler):
    megabytes = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(500)
        self.send_header("Content-Length", str(self.megabytes * CHUNK))
        self.end_headers()
        try:
            for _ in range(self.megabytes):
                self.wfile.write(b"e" * CHUNK)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: what it should do

    def log_message(self, *args: object) -> None:
        pass


def body_case(checkout: Path, megabytes: int) -> str:
    _Huge500.megabytes = megabytes
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Huge500)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    script = ("from prag.llm.openai_backend import OpenAILLM\n"
              f"OpenAILLM('m', base_url={url!r}, timeout=120, retries=0, constraint='none')"
              ".complete([{'role': 'user', 'content': 'hi'}])\n")
    try:
        peak, code, said = measured([sys.executable, "-c", script], checkout, checkout)
    finally:
        server.shutdown()
    return f"peak {peak:,.0f} MB, exit {code}: {said}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--line-mb", type=int, default=200)
    parser.add_argument("--body-mb", type=int, default=200)
    parser.add_argument("--per-task", type=int, default=10_000_000)
    parser.add_argument("--cap-gb", type=float, default=3.0)
    parser.add_argument("--against", type=Path, help="another checkout of prag to run each case with too")
    args = parser.parse_args()
    checkouts = [ROOT, *([args.against.resolve()] if args.against else [])]
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        for checkout in checkouts:
            print(f"== {checkout}")
            print(f"import, one line of {args.line_mb} MB: {import_case(checkout, scratch, args.line_mb)}")
            print(f"spec, grid per_task {args.per_task:,} --limit 1 (cap {args.cap_gb:g} GB): "
                  f"{spec_case(checkout, scratch, args.per_task, args.cap_gb)}")
            print(f"error body, a 500 of {args.body_mb} MB: {body_case(checkout, args.body_mb)}")


if __name__ == "__main__":
    main()
