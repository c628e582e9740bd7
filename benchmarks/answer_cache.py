"""Measure the LLM answer cache: a re-run of an identical round, and cold vs cached model calls.

    python benchmarks/answer_cache.py [--model 0.5b] [--calls 20] [--no-model]

Part 1 plays one small grid round twice into one store, as two runs with the same settings, with
a scripted stand-in (it takes the first admissible action) behind `cached(...)`, and counts the
calls that reach the stand-in in each run. Part 2 sends the first `--calls` prompts the agent
wrote in part 1 to the real local model three times: cold through the cache (the model runs and
its answers are stored), again through the cache (served from the store), and again straight to
the model, which has only llama.cpp's own prefix cache (for comparison).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prag.agent.config import AgentConfig
from prag.llm import LLM, Message, make_llm
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.embed import Encoder
from prag.run.config import ExperimentConfig, RetrievalConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store
from prag.store.answers import cached

SPEC = """name = "cache-bench"
env = "grid"
max_steps = 8
[params]
tasks = ["throw_away_trash", "collect_toys", "water_plants"]
per_task = 1
seed = 0
"""


def first_action(messages: list[Message]) -> str:
    """Stand-in policy: the first admissible action the prompt lists (folded `verb: a, b`)."""
    listed = messages[-1]["content"].split("Admissible actions: ")[1].split("\n")[0]
    verb, _, rests = listed.split("; ")[0].partition(": ")
    return f"{verb} {rests.split(', ')[0]}" if rests else verb


def rerun_round(directory: Path) -> list[list[Message]]:
    """Part 1: print the stand-in's calls per run; return the prompts the agent wrote."""
    spec = directory / "cache-bench.toml"
    spec.write_text(SPEC)
    config = RunConfig(ExperimentConfig(spec=str(spec), rounds=1), RetrievalConfig(mode="prag", k=2))
    stand_in = ScriptedLLM(first_action)
    encoder = Encoder(config.retrieval.embedding_model)
    with Store(directory / "rerun.db") as store:
        for name in ("first", "again"):
            before, start = len(stand_in.calls), time.perf_counter()
            record = start_run(store, config, name)
            Runner(store, record, config, llm=cached(stand_in, store), encoder=encoder).play()
            agent_calls = sum(e.llm_calls for e in store.episodes(record.id))
            print(
                f"run {name:5}: {agent_calls:3d} agent calls, {len(stand_in.calls) - before:3d} reached "
                f"the stand-in, {time.perf_counter() - start:5.1f} s"
            )
        print(f"answer cache after both runs: {store.answers.stats()}")
    return [call["messages"] for call in stand_in.calls]


def timed(llm: LLM, prompts: list[list[Message]]) -> tuple[list[float], list[str]]:
    """Wall seconds and answer of each call, as the agent makes it (one action, one line)."""
    seconds, texts = [], []
    for messages in prompts:
        start = time.perf_counter()
        texts.append(llm.complete(messages, max_tokens=AgentConfig().action_tokens, stop=["\n"]).text)
        seconds.append(time.perf_counter() - start)
    return seconds, texts


def model_calls(directory: Path, size: str, prompts: list[list[Message]]) -> None:
    """Part 2: the same calls to the real model, cold and cached."""
    model = make_llm(f"local:{size}")
    model.complete(prompts[0][:1], max_tokens=1)  # pages the weights in; not part of any figure
    with Store(directory / "model.db") as store:
        passes: list[tuple[str, Callable[[], tuple[list[float], list[str]]]]] = [
            ("cold, through the cache", lambda: timed(cached(model, store), prompts)),
            ("again, through the cache", lambda: timed(cached(model, store), prompts)),
            ("again, model only", lambda: timed(model, prompts)),
        ]
        results = {name: run() for name, run in passes}
        stats = store.answers.stats()[model.name]
    print(f"{len(prompts)} agent prompts to {model.name} ({os.cpu_count()} cores):")
    print(f"{'pass':26} {'total s':>8} {'mean ms':>9} {'median ms':>10} {'max ms':>8}")
    for name, (seconds, _) in results.items():
        print(
            f"{name:26} {sum(seconds):8.2f} {1000 * statistics.mean(seconds):9.1f} "
            f"{1000 * statistics.median(seconds):10.1f} {1000 * max(seconds):8.1f}"
        )
    cold, served, direct = (texts for _, texts in results.values())
    print(
        f"served answers equal to cold ones: {sum(a == b for a, b in zip(cold, served))}/{len(cold)}; "
        f"model-only answers equal to cold ones: {sum(a == b for a, b in zip(cold, direct))}/{len(cold)}"
    )
    print(f"answer cache: {stats}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="0.5b", help="local model size for part 2 (0.5b or 1.5b)")
    parser.add_argument("--calls", type=int, default=20, help="prompts sent to the model in part 2")
    parser.add_argument("--no-model", action="store_true", help="part 1 only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prag-answer-cache-") as scratch:
        prompts = rerun_round(Path(scratch))
        if not args.no_model:
            if len(prompts) < args.calls:
                parser.error(f"part 1 wrote only {len(prompts)} prompts: ask for --calls {len(prompts)} or fewer")
            model_calls(Path(scratch), args.model, prompts[: args.calls])


if __name__ == "__main__":
    main()
