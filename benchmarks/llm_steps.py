"""Seconds per LLM call in real episodes, call by call and round by round: the steps the LLM chose
and the questions.

    OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/llm_steps.py sciworld-mini --llm-budget none
    OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/llm_steps.py sciworld-test --limit 5 --rounds 2

Plays SPEC's tasks for `--rounds` rounds (round 0 from an empty store in a temporary folder, or in
`--store`; round r retrieves rounds < r) with the local model and prag's default sources, and times
every call to the model: a step (the admissible actions were its choices, after the family's rules)
or a question (which thing, which action measures, what the model knows). Prints, per round, the
calls (median and 90th percentile seconds, prompt tokens a call, the share the prefix cache
covered), the seconds an episode took in all and in the LLM, and the share of steps drawn at random
past the LLM budget; then per round and kind of call, the first call of each episode apart from the
later ones (a new goal and room: nothing of the episode is cached yet).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prag.cli.run_cmd import DEFAULT, _llm_budget
from prag.envs import registry
from prag.envs.spec import load_spec
from prag.llm import make_llm
from prag.llm.base import Completion, Message
from prag.run.config import ExperimentConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.sources import StepSource
from prag.store import Store


@dataclass
class Call:
    round: int
    kind: str  # "step" or "question"
    first: bool  # the episode's first call
    seconds: float
    prompt_tokens: int
    cached_tokens: int


@dataclass
class Timed:
    """The local model, every call recorded with the round it was made in."""

    model: Any
    rules: str
    calls: list[Call] = field(default_factory=list)
    goal: str | None = None
    round: int = 0
    record: IO[str] | None = None  # every call's prompt, choices and cost, a JSON line each

    @property
    def name(self) -> str:
        return str(self.model.name)

    @property
    def supports_choices(self) -> bool:
        return bool(self.model.supports_choices)

    def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        done: Completion = self.model.complete(messages, **kwargs)
        if self.record is not None:
            self.record.write(json.dumps({"round": self.round, "messages": messages, "choices": kwargs.get("choices"),
                                          "seconds": done.cost.seconds, "prompt_tokens": done.cost.prompt_tokens,
                                          "cached_tokens": done.cost.cached_tokens, "text": done.text}) + "\n")
        step = messages[0]["content"] == self.rules
        goal = _goal(messages) if step else None
        first = step and (self.goal is None or goal != self.goal)
        if step:
            self.goal = goal
        self.calls.append(Call(self.round, "step" if step else "question", first, done.cost.seconds,
                               done.cost.prompt_tokens, done.cost.cached_tokens))
        return done

    def heard(self, event: str, data: dict) -> None:
        if event == "round":
            self.round = data["round"]
            self.goal = None


def _goal(messages: list[Message]) -> str | None:
    # The episode's goal line, wherever the layout puts it: a new one starts a new episode.
    for message in messages:
        for line in message["content"].splitlines():
            if line.startswith("Your goal: "):
                return line
    return None


def _seconds(calls: list[Call]) -> tuple[float, float]:
    seconds = sorted(c.seconds for c in calls)
    return statistics.median(seconds), seconds[min(len(seconds) - 1, int(0.9 * len(seconds)))]


def _cached(calls: list[Call]) -> float:
    prompt = sum(c.prompt_tokens for c in calls)
    return sum(c.cached_tokens for c in calls) / prompt if prompt else 0.0


def report(calls: list[Call], episodes: dict[int, list[Any]]) -> None:
    print("| round | episodes | LLM calls | s a call (median) | s a call (p90) | s a call (mean) | prompt tokens a call "
          "| cached | s an episode | LLM s an episode | steps drawn at random |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for round_, played in sorted(episodes.items()):
        group = [c for c in calls if c.round == round_]
        steps = sum(e.n_actions for e in played)
        drawn = sum(e.sources.get(StepSource.RANDOM, 0) for e in played)
        n = len(played)
        if group:
            median, p90 = _seconds(group)
            mean = statistics.mean(c.seconds for c in group)
            tokens = statistics.mean(c.prompt_tokens for c in group)
            timing = f"{median:.2f} | {p90:.2f} | {mean:.2f} | {tokens:.0f} | {_cached(group):.0%}"
        else:
            timing = "- | - | - | - | -"
        print(f"| {round_} | {n} | {len(group)} | {timing} | {sum(e.seconds for e in played) / n:.1f} "
              f"| {sum(e.cost.seconds for e in played) / n:.1f} | {drawn / steps if steps else 0:.0%} |")
    print("\n| round | calls | n | s min | s median | s p90 | s max | prompt tokens (median) | cached |")
    print("|---|---|---|---|---|---|---|---|---|")
    for round_ in sorted(episodes):
        groups = {
            "steps, first of an episode": [c for c in calls if c.round == round_ and c.kind == "step" and c.first],
            "steps, later": [c for c in calls if c.round == round_ and c.kind == "step" and not c.first],
            "questions": [c for c in calls if c.round == round_ and c.kind == "question"],
        }
        for label, group in groups.items():
            if not group:
                continue
            median, p90 = _seconds(group)
            print(f"| {round_} | {label} | {len(group)} | {min(c.seconds for c in group):.2f} | {median:.2f} | {p90:.2f} "
                  f"| {max(c.seconds for c in group):.2f} | {statistics.median(c.prompt_tokens for c in group):.0f} "
                  f"| {_cached(group):.0%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", help="a task-set spec (a name under envs/, or a .toml path)")
    parser.add_argument("--llm", default="local", help="the local model (local, local:0.5b)")
    parser.add_argument("--llm-budget", default=None,
                        help="N calls or Ns seconds a step a game ('none': every step no other source gives); default: prag run's")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--max-steps", type=int, default=None, help="the step cap (default: the spec's)")
    parser.add_argument("--store", type=Path, default=None, help="keep the store here (default: a temporary one)")
    parser.add_argument("--round0-from", default=None, help="start from this run's round 0 (in --store)")
    parser.add_argument("--retrieve-at", default=None, help="when the examples are retrieved (default: prag run's)")
    parser.add_argument("--record", type=Path, default=None, help="write every call (prompt, choices, cost) here, as JSON lines")
    args = parser.parse_args()
    spec = load_spec(args.spec)
    timed = Timed(make_llm(args.llm), registry.domain(spec.env).rules)
    calls, seconds = _llm_budget(args.llm_budget, DEFAULT.agent.ask)
    agent = replace(DEFAULT.agent, llm_budget=calls, llm_seconds=seconds,
                    limits=replace(DEFAULT.agent.limits, retrieve=args.retrieve_at or DEFAULT.agent.limits.retrieve))
    timed.record = args.record.open("w") if args.record else None
    # `prag run`'s own settings (every source, asked only where no other has a step), its budget unless given
    config = RunConfig(ExperimentConfig(spec=args.spec, rounds=args.rounds, llm=args.llm, limit=args.limit,
                                        max_steps=args.max_steps, round0_from=args.round0_from), agent=agent)
    with tempfile.TemporaryDirectory() as folder, Store(args.store or Path(folder) / "steps.db") as store:
        run = start_run(store, config)
        Runner(store, run, config, timed.heard, llm=timed).play()  # type: ignore[arg-type]
        outcomes = store.outcomes([run.id])
    episodes: dict[int, list[Any]] = {}
    for outcome in outcomes:
        episodes.setdefault(outcome.round, []).append(outcome)
    steps = sum(o.n_actions for o in outcomes)
    budget = agent.llm_budget if agent.llm_budget is not None else f"{agent.llm_seconds:g}s" if agent.llm_seconds else "none"
    print(f"{args.spec}: {len(outcomes)} episodes, {steps} steps, {len(timed.calls)} LLM calls, model {timed.name}, "
          f"budget {budget}, run {run.id}")
    report(timed.calls, episodes)


if __name__ == "__main__":
    main()
