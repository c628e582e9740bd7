"""Measure the local llama.cpp backends: load time, cold and prefix-cached calls, speed, memory.

    python benchmarks/llm.py [0.5b 1.5b] [--n-ctx 8192]

Each model runs in its own child process so that its resident memory is its own. The prompt is
agent-shaped: ~1500 tokens of instructions, example trajectories and an observation; "cold" has
nothing cached, "warm" shares everything but the last user message with the previous call.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prag.llm.local import LocalLLM, default_threads
from prag.llm.model_files import MODELS, model_path


def _rss_mib() -> tuple[float, float]:
    """Resident and peak resident memory of this process in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _prompt(nonce: str, question: str) -> list[dict[str, str]]:
    rooms = ["kitchen", "bedroom", "bathroom", "living room", "office"]
    examples = []
    for n in range(len(rooms)):
        steps = "\n".join(
            f"> go to {obj} {i}\nYou arrive at {obj} {i}. On the {obj} {i}, you see a mug {i}, "
            f"a pen {i + 1} and a book {i + 2}."
            for i, obj in enumerate(
                ["countertop", "cabinet", "drawer", "shelf", "desk", "fridge", "sinkbasin"]
            )
        )
        examples.append(f"Example {n + 1} (success): put a clean mug in the {rooms[n]}.\n{steps}")
    system = (
        f"[{nonce}] You are an agent in a household. Reply with exactly one admissible action.\n\n"
        + "\n\n".join(examples)
    )
    observation = (
        "You are in the middle of a room. Looking quickly around you, you see "
        + ", ".join(f"a cabinet {i}" for i in range(1, 30))
        + ".\nYour task is to: put a clean mug in coffeemachine."
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": observation + "\n" + question},
    ]


def measure(size: str, n_ctx: int) -> dict[str, float | str | int]:
    path = model_path(MODELS[size])
    start = time.perf_counter()
    llm = LocalLLM(path, n_ctx=n_ctx)
    load = time.perf_counter() - start
    rss_loaded, _ = _rss_mib()

    llm.complete(_prompt("warmup", "Next action?"), max_tokens=1)  # pages the weights in
    cold = llm.complete(_prompt("cold", "Next action?"), max_tokens=1).cost
    warm = llm.complete(_prompt("cold", "Next action? (again)"), max_tokens=1).cost
    long_warm = llm.complete(_prompt("cold", "Describe the room in detail."), max_tokens=64).cost
    decode_s = long_warm.seconds - warm.seconds
    rss, peak = _rss_mib()
    return {
        "model": llm.name,
        "threads": default_threads(),
        "n_ctx": n_ctx,
        "load_s": load,
        "prompt_tokens": cold.prompt_tokens,
        "cold_s": cold.seconds,
        "warm_s": warm.seconds,
        "warm_cached": warm.cached_tokens,
        "prompt_tok_per_s": (cold.prompt_tokens - cold.cached_tokens) / cold.seconds,
        "gen_tok_per_s": (long_warm.completion_tokens - 1) / decode_s if decode_s > 0 else 0.0,
        "gen_tokens": long_warm.completion_tokens,
        "rss_loaded_mib": rss_loaded,
        "rss_mib": rss,
        "peak_rss_mib": peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", default=["0.5b", "1.5b"], help="/".join(MODELS))
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if unknown := set(args.sizes) - set(MODELS):
        parser.error(f"unknown model size {', '.join(sorted(unknown))}: use {' or '.join(MODELS)}")
    if args.child:
        print(json.dumps(measure(args.sizes[0], args.n_ctx)))
        return
    rows = []
    for size in args.sizes:
        out = subprocess.run(
            [sys.executable, __file__, size, "--n-ctx", str(args.n_ctx), "--child"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    print(
        f"{'model':44} {'load s':>7} {'prompt':>6} {'cold s':>7} {'warm s':>7} {'cached':>6} "
        f"{'prompt tok/s':>12} {'gen tok/s':>9} {'RSS MiB':>8} {'peak MiB':>8}"
    )
    for r in rows:
        print(
            f"{r['model']:44} {r['load_s']:7.2f} {r['prompt_tokens']:6d} {r['cold_s']:7.2f} "
            f"{r['warm_s']:7.2f} {r['warm_cached']:6d} {r['prompt_tok_per_s']:12.1f} "
            f"{r['gen_tok_per_s']:9.1f} {r['rss_mib']:8.0f} {r['peak_rss_mib']:8.0f}"
        )
    print(
        f"threads={rows[0]['threads']} n_ctx={rows[0]['n_ctx']}; cold = nothing cached, "
        f"warm = all but the last user message cached; gen tok/s from a 64-token answer."
    )


if __name__ == "__main__":
    main()
