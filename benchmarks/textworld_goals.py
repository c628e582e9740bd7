"""TextWorld goals as ordered sub-goals: SR, steps and LLM calls per step, with and without them.

Plays a spec's generated games (or the same challenge with other seeds) as `prag run` plays round 0
(ask hard-coded; sources experience, search, llm; an empty store), with no model: the LLM's place
is taken by a stand-in that picks uniformly among the admissible actions it is offered (seeded),
so the figures show what the sub-goals themselves win and how many steps still fall to the LLM.
`--readers experience,llm` leaves out the template reader, so the objective is not read into
sub-goals: prag as it played TextWorld before.

    python benchmarks/textworld_goals.py textworld-treasure
    python benchmarks/textworld_goals.py textworld-coin --seeds 100-107 --readers experience,llm
"""
from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field, replace
from typing import Any

from prag.agent.agent import AgentConfig, PragAgent, parse_readers
from prag.envs.registry import domain as domain_of
from prag.envs.spec import load_spec
from prag.llm.base import Completion, Message
from prag.retrieval.index import Visibility
from prag.run.episode import play_episode


@dataclass
class RandomChoiceLLM:
    """Stand-in for an LLM: one of the offered choices, uniformly at random (no model is run)."""

    seed: int = 0
    name: str = "random-choice"
    supports_choices: bool = True
    calls: int = 0
    _random: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def complete(self, messages: list[Message], *, choices: list[str] | None = None, **_: Any) -> Completion:
        self.calls += 1
        return Completion(self._random.choice(choices) if choices else "look", 0, 0, 0, 0.0)


def seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("--seeds", help="other seeds of the spec's challenge, e.g. 100-107")
    parser.add_argument("--readers", default="template,experience,llm")
    args = parser.parse_args()
    spec = load_spec(args.spec)
    if args.seeds:
        params = {k: v for k, v in spec.params.items() if k not in ("seed", "num_tasks", "seeds")}
        spec = replace(spec, params={**params, "seeds": seeds(args.seeds)})
    source, domain = spec.open(), domain_of(spec.env)
    config = AgentConfig(ask="hard-coded", sources=("experience", "search", "llm"), readers=parse_readers(args.readers))
    won = steps = calls = 0
    tasks = source.tasks()
    for task in tasks:
        llm = RandomChoiceLLM(task.seed)
        agent = PragAgent(llm, None, Visibility("bench", 0, ()), config, seed=task.seed, domain=domain)  # type: ignore[arg-type]
        env = source.make(task)
        try:
            record, success, trace = play_episode(env, agent)
        finally:
            env.close()
        met = sum(goal["met_at"] is not None for goal in trace.extra["subgoals"])
        print(f"{task.task_id}: {'won' if success else 'lost'} in {len(record) - 1} steps, {llm.calls} LLM calls, "
              f"sub-goals met {met}/{len(trace.extra['subgoals'])}", flush=True)
        won, steps, calls = won + success, steps + len(record) - 1, calls + llm.calls
    print(f"{args.spec} readers={args.readers}: SR {won}/{len(tasks)} = {won / len(tasks):.0%}, "
          f"{steps / len(tasks):.1f} steps a game, {calls / max(steps, 1):.2f} LLM calls a step")


if __name__ == "__main__":
    main()
