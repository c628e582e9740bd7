"""The local model served over HTTP to the episodes of one run: `python -m prag.llm.serve`.

Started by `prag.llm.model_server.ModelServer` for a run whose episodes play in several threads
or processes (`--workers N`): one model in memory whatever N, run with the run's cores, in a
process of its own so that a crash in llama.cpp's native code ends the server, not prag. It
speaks the part of the OpenAI API that `prag.llm.openai_backend` uses, which already times
requests out, retries and bounds replies:

- `GET /v1/models`: the one model, `owned_by` "prag", so that choices are sent as they are;
- `POST /v1/chat/completions` (not streamed): messages, max_tokens, temperature, seed, stop,
  grammar, and prag's `choices` and `more_lines` (one of the choices picked token by token, as
  in process: a grammar over ScienceWorld's hundreds of actions cost about a second a token);
  usage with `prompt_tokens_details.cached_tokens`.

Requests are answered one at a time (`LocalLLM` serialises them on its context), with the KV
caches of `--sequences` conversations kept (one per worker), so interleaved episodes keep their
prefixes. The model loads at the first request, as `LocalLLM` does in process. The server ends
when its standard input closes: the run that started it ended, however it ended.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from prag.errors import LLMError
from prag.llm.local import DEFAULT_CONTEXT, LocalLLM

_MAX_REQUEST_BYTES = 64 << 20  # a prompt far over any context fits; a runaway client does not


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    llm: LocalLLM


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive: the client reuses its connection

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, _error(f"no route GET {self.path}"))
            return
        model = {"id": self.server.llm.name, "object": "model", "created": 0, "owned_by": "prag"}
        self._send(200, {"object": "list", "data": [model]})

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, _error(f"no route POST {self.path}"))
            return
        length = int(self.headers.get("content-length") or 0)
        if not 0 < length <= _MAX_REQUEST_BYTES:
            self._send(400, _error(f"a request body of {length} bytes"))
            return
        try:
            request = json.loads(self.rfile.read(length))
            reply = _complete(self.server.llm, request)
        except (ValueError, TypeError, KeyError) as exc:
            self._send(400, _error(f"a request this server cannot read: {exc}"))
            return
        except LLMError as exc:  # e.g. a prompt over the context: the client shows the message
            self._send(400, _error(str(exc)))
            return
        self._send(200, reply)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a line per request would only grow the log the run's errors point to


def _complete(llm: LocalLLM, request: dict[str, Any]) -> dict[str, Any]:
    """The chat completion for an OpenAI request body."""
    messages = request["messages"]
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages
    ):
        raise ValueError("messages must be a list of {role, content} objects")
    stop = request.get("stop")
    choices = request.get("choices")
    if choices is not None and not (isinstance(choices, list) and choices and all(isinstance(c, str) and c for c in choices)):
        raise ValueError("choices must be a list of non-empty strings")
    completion = llm.complete(
        [{"role": str(m.get("role")), "content": m["content"]} for m in messages],
        max_tokens=int(request.get("max_tokens") or 64),
        stop=[stop] if isinstance(stop, str) else list(stop or []),
        temperature=float(request.get("temperature") or 0.0),
        seed=int(request.get("seed") or 0),
        grammar=request.get("grammar") or None,
        choices=choices,
        more_lines=int(request.get("more_lines") or 0),
    )
    cost = completion.cost
    finish = "length" if cost.completion_tokens >= int(request.get("max_tokens") or 64) else "stop"
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": llm.name,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": completion.text},
                     "finish_reason": finish}],
        "usage": {
            "prompt_tokens": cost.prompt_tokens,
            "completion_tokens": cost.completion_tokens,
            "total_tokens": cost.prompt_tokens + cost.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cost.cached_tokens},
        },
    }


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _end_with_stdin(server: _Server) -> None:
    """Shut the server down when standard input closes (the run that started it is gone)."""
    sys.stdin.buffer.read()
    threading.Thread(target=server.shutdown, daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="the GGUF file")
    parser.add_argument("--name", required=True, help="the backend's name (the run's --llm model)")
    parser.add_argument("--fd", type=int, required=True, help="a listening socket handed over by the parent")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--sequences", type=int, default=1, help="conversations whose KV cache is kept")
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_CONTEXT)
    args = parser.parse_args(argv)
    # The run stops its server (by closing stdin); Ctrl-C at a terminal reaches the whole process
    # group and must not end the model before the run has stopped its episodes.
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    server = _Server(("127.0.0.1", 0), _Handler, bind_and_activate=False)
    server.socket.close()
    server.socket = socket.socket(fileno=args.fd)
    server.llm = LocalLLM(args.model, name=args.name, n_ctx=args.n_ctx, n_threads=args.threads,
                          sequences=args.sequences)
    threading.Thread(target=_end_with_stdin, args=(server,), daemon=True).start()
    with server:
        server.serve_forever(poll_interval=0.2)


if __name__ == "__main__":
    main()
