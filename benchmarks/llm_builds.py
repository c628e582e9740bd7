"""Prompt and generation tokens per second of the installed llama.cpp build, with llama.cpp's
extra CPU buffer types (AMX tiles, repacked weights) on and off, on one agent-shaped prompt.

    taskset -c 1 python benchmarks/llm_builds.py [--model 0.5b|1.5b] [--repeat 3]

Compare builds by running it with each build's Python (e.g. a venv holding an AVX2-only wheel
of llama-cpp-python, with this checkout on PYTHONPATH). Each setting loads the model in a child
process (one load per process: the buffer types are chosen at load), evaluates the same ~1,500-token
prompt cold, then generates up to 128 tokens; the rates are llama.cpp's own counters
(llama_perf_context), best of `--repeat`. Prints the library's system info (the SIMD it was
built with) once.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys
sys.path.insert(0, {root!r})
import llama_cpp
from prag.llm import local
from prag.llm.local import LocalLLM
from prag.llm.model_files import MODELS, model_path

local.extra_buffers_safe = lambda: {extra}
llm = LocalLLM(model_path(MODELS[{size!r}]), n_ctx=4096)
rooms = "\\n".join(f"Room {{i}}: a cabinet {{i}}, a drawer {{i + 1}}, a shelf {{i + 2}} and a mug {{i}}." for i in range(80))
best = {{"prompt": 0.0, "gen": 0.0}}
for attempt in range({repeat}):
    messages = [{{"role": "system", "content": f"[{{attempt}}] " + rooms}},
                {{"role": "user", "content": "Tell a long story about these rooms, room by room."}}]
    ctx = llm._llama._ctx.ctx
    llama_cpp.llama_perf_context_reset(ctx)
    out = llm.complete(messages, max_tokens=128)
    perf = llama_cpp.llama_perf_context(ctx)
    best["prompt"] = max(best["prompt"], perf.n_p_eval / perf.t_p_eval_ms * 1000)
    best["gen"] = max(best["gen"], perf.n_eval / perf.t_eval_ms * 1000)
    best["prompt_tokens"], best["generated"] = perf.n_p_eval, perf.n_eval
best["extra_bufts"] = llm._llama.model_params.use_extra_bufts
best["system"] = llama_cpp.llama_print_system_info().decode()
print(json.dumps(best))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="0.5b", choices=("0.5b", "1.5b"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for extra in (True, False):
        code = CHILD.format(root=str(ROOT), extra=extra, size=args.model, repeat=args.repeat)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"the child exited with {done.returncode}:\n{done.stderr[-3000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if extra:
            print(f"{sys.executable}: llama.cpp {result['system']}")
        print(f"{args.model}, extra buffer types {'on ' if result['extra_bufts'] else 'off'}: "
              f"prompt {result['prompt']:.1f} tokens/s ({result['prompt_tokens']} tokens), "
              f"generation {result['gen']:.1f} tokens/s ({result['generated']} tokens)", flush=True)


if __name__ == "__main__":
    main()
