"""Seconds per LLM call in real episodes, call by call: the steps the LLM chose and the questions.

    OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/llm_steps.py sciworld-mini --llm-budget none

Plays SPEC's tasks once (round 0, an empty store in a temporary folder) with the local model and
prag's default sources, and times every call to the model: a step (the admissible actions were its
choices, after the family's rules) or a question (which thing, which action measures, what the
model knows). Prints, for each kind, how many calls, their seconds (min, median, 90th percentile,
max), the share of prompt tokens the prefix cache covered, and the first call of each episode apart
from the later ones (a new goal and room: nothing of the episode is cached yet).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prag.cli.run_cmd import DEFAULT
from prag.envs import registry
from prag.envs.spec import load_spec
from prag.llm import make_llm
from prag.llm.base import Completion, Cost, Message
from prag.run.config import ExperimentConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store


@dataclass
class Call:
    kind: str  # "step" or "question"
    first: bool  # the episode's first call
    cost: Cost


@dataclass
class Timed:
    """The local model, every call recorded."""

    model: Any
    rules: str
    calls: list[Call] = field(default_factory=list)
    goal: str | None = None

    @property
    def name(self) -> str:
        return str(self.model.name)

    @property
    def supports_choices(self) -> bool:
        return bool(self.model.supports_choices)

    def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        done: Completion = self.model.complete(messages, **kwargs)
        step = messages[0]["content"] == self.rules
        goal = messages[-1]["content"] if step else None
        first = step and (self.goal is None or not _same_episode(self.goal, goal))
        if step:
            self.goal = goal
        self.calls.append(Call("step" if step else "question", first, done.cost))
        return done


def _same_episode(before: str | None, now: str | None) -> bool:
    # An episode's prompt only grows: the last one's opening (its goal) starts this one too.
    return before is not None and now is not None and now[:400] == before[:400]


def report(calls: list[Call]) -> None:
    print("| calls | n | s min | s median | s p90 | s max | prompt tokens (median) | cached |")
    print("|---|---|---|---|---|---|---|---|")
    groups = {
        "steps, first of an episode": [c for c in calls if c.kind == "step" and c.first],
        "steps, later": [c for c in calls if c.kind == "step" and not c.first],
        "all steps": [c for c in calls if c.kind == "step"],
        "questions": [c for c in calls if c.kind == "question"],
    }
    for label, group in groups.items():
        if not group:
            continue
        seconds = sorted(c.cost.seconds for c in group)
        p90 = seconds[min(len(seconds) - 1, int(0.9 * len(seconds)))]
        prompt = sum(c.cost.prompt_tokens for c in group)
        cached = sum(c.cost.cached_tokens for c in group) / prompt if prompt else 0.0
        print(f"| {label} | {len(group)} | {seconds[0]:.2f} | {statistics.median(seconds):.2f} | {p90:.2f} "
              f"| {seconds[-1]:.2f} | {statistics.median(c.cost.prompt_tokens for c in group):.0f} | {cached:.0%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", help="a task-set spec (a name under envs/, or a .toml path)")
    parser.add_argument("--llm-budget", default="6", help="LLM calls a game ('none': every step no other source gives)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    args = parser.parse_args()
    spec = load_spec(args.spec)
    timed = Timed(make_llm("local"), registry.domain(spec.env).rules)
    budget = None if args.llm_budget == "none" else int(args.llm_budget)
    # `prag run`'s own settings (every source, asked only where no other has a step), with the budget given
    config = RunConfig(ExperimentConfig(spec=args.spec, rounds=1, llm="local", limit=args.limit),
                       agent=replace(DEFAULT.agent, llm_budget=budget))
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "steps.db") as store:
        run = start_run(store, config)
        Runner(store, run, config, llm=timed).play()  # type: ignore[arg-type]
        steps = sum(len(e.steps) - 1 for e in store.episodes(run.id))
    print(f"{args.spec}: {steps} steps, {len(timed.calls)} LLM calls, model {timed.name}")
    report(timed.calls)


if __name__ == "__main__":
    main()
