"""What a constrained answer costs once its prompt is read: a llama.cpp grammar over the actions'
text, the token-by-token pick over their text, and the pick over their numbers.

    PYTHONPATH=. taskset -c 1 python benchmarks/llm_steps.py sciworld-test --limit 2 --record calls.jsonl
    PYTHONPATH=. OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/answers.py calls.jsonl --first 40

Replays the step calls a run recorded (`benchmarks/llm_steps.py --record`): each prompt is read
first (not timed), then answered three ways, each timed and counted by llama.cpp itself (tokens
decoded after the prompt):
- grammar: the choices as a GBNF grammar (`prag.llm.base.choice_grammar`), sampled greedily
  by llama-cpp-python: what a llama.cpp server is sent, and what prag's own model server ran
  before it took the choices themselves (its generation reads the prompt's last token again:
  one token more);
- text: one of the choices picked token by token (`prag.llm.choice_decoding`), the model read
  only where they branch: what prag runs in process and in its model server;
- number: the same pick over "1".."n" (`PromptLimits.numbered`): the answer's cost alone, the
  prompt unchanged (a numbered list costs a few more prompt tokens an action, not counted here).
Prints seconds and tokens decoded per answer for each, and how often grammar and text agree.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prag.llm import make_llm
from prag.llm.base import choice_grammar, choice_token_budget
from prag.llm.local import LocalLLM, _llama_cpp


def _decoded(llm: LocalLLM) -> int:
    perf = _llama_cpp().llama_perf_context(llm._llama._ctx.ctx)
    return int(perf.n_p_eval + perf.n_eval)


def _timed(llm: LocalLLM, messages: list[dict[str, str]], **options: Any) -> tuple[str, float, int]:
    """The second of two same calls: the prompt is read by the first, and only the answer is
    timed (llama-cpp-python's own generation, the grammar's, reads the prompt's last token again)."""
    llm.complete(messages, **options)
    before, start = _decoded(llm), time.perf_counter()
    text = llm.complete(messages, **options).text
    return text, time.perf_counter() - start, _decoded(llm) - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("calls", type=Path, help="a --record file of benchmarks/llm_steps.py")
    parser.add_argument("--llm", default="local", help="the local model (local, local:0.5b)")
    parser.add_argument("--first", type=int, default=40, help="replay the first N step calls")
    args = parser.parse_args()
    recorded = [json.loads(line) for line in args.calls.read_text().splitlines()]
    steps = [call for call in recorded if call.get("choices")][: args.first]
    llm = make_llm(args.llm, n_threads=1)
    assert isinstance(llm, LocalLLM)
    rows: dict[str, list[tuple[float, int]]] = {"grammar": [], "text": [], "number": []}
    agree = 0
    for call in steps:
        messages, choices = call["messages"], call["choices"]
        numbers = [str(n) for n in range(1, len(choices) + 1)]
        text, seconds, decoded = _timed(llm, messages, choices=choices)
        rows["text"].append((seconds, decoded))
        grammar, seconds, decoded = _timed(llm, messages, grammar=choice_grammar(choices),
                                           max_tokens=choice_token_budget(choices, 24))
        rows["grammar"].append((seconds, decoded))
        agree += grammar == text
        _, seconds, decoded = _timed(llm, messages, choices=numbers)
        rows["number"].append((seconds, decoded))
    sizes = sorted(len(call["choices"]) for call in steps)
    print(f"{len(steps)} step calls of {args.calls.name}, {sizes[0]}-{sizes[-1]} admissible actions "
          f"(median {statistics.median(sizes):.0f}), model {llm.name}, 1 thread")
    print("| answer | s median | s mean | s max | tokens decoded (mean) |")
    print("|---|---|---|---|---|")
    for name, values in rows.items():
        seconds = [s for s, _ in values]
        print(f"| {name} | {statistics.median(seconds):.2f} | {statistics.mean(seconds):.2f} | {max(seconds):.2f} "
              f"| {statistics.mean(d for _, d in values):.1f} |")
    print(f"grammar and text picked the same action in {agree} of {len(steps)}")


if __name__ == "__main__":
    main()
