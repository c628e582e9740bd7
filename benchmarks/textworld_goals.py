"""TextWorld goals as ordered sub-goals: SR, steps and LLM calls per step, with and without them.

Plays a spec's generated games (or the same challenge with other seeds) as `prag run` plays round 0
(ask hard-coded; sources experience, search, llm; an empty store), with no model: the LLM's place
is taken by a stand-in that picks uniformly among the admissible actions it is offered (seeded),
so the figures show what the sub-goals themselves win and how many steps still fall to the LLM.
`--readers experience,llm` leaves out the template reader, so the objective is not read into
sub-goals: prag as it played TextWorld before.

`--rounds N` plays N rounds of self-iteration as `prag run` does (its runner, a store in a temporary
directory unless `--store`, the stand-in in the LLM's place, no answer cache: a random answer is no
greedy one), so round r follows the plans of rounds < r's wins; it prints SR and LLM calls per step
for each round. `--thing-only` cuts each objective to its last step's command ("take coin"): the
route is no longer spelled, so the agent must find the way itself.

    python benchmarks/textworld_goals.py textworld-treasure
    python benchmarks/textworld_goals.py textworld-coin --seeds 100-107 --readers experience,llm
    python benchmarks/textworld_goals.py textworld-cooking --rounds 3
    python benchmarks/textworld_goals.py textworld-treasure --thing-only
"""
from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prag.agent.agent import PragAgent, parse_readers
from prag.agent.config import AgentConfig
from prag.envs.base import Observation
from prag.envs.registry import domain as domain_of
from prag.envs.spec import load_spec
from prag.envs.textworld.goals import subgoals
from prag.llm.scripted import RandomChoiceLLM
from prag.retrieval.index import Visibility
from prag.run.config import ExecutionConfig, ExperimentConfig, RunConfig
from prag.run.episode import play_episode
from prag.run.runner import Runner, start_run
from prag.store import Store


@dataclass
class ThingOnly:
    """A game whose objective is cut to its last step's command, in the objective and in the first
    text alike ("Welcome to TextWorld! First off, venture north. ... pick up the coin from the floor
    of the canteen. ..." -> "take coin.")."""

    env: Any

    def reset(self) -> Observation:
        observation = self.env.reset()
        last = (subgoals(observation.goal) or [observation.goal])[-1]
        return replace(observation, goal=f"{last}.", text=observation.text.replace(observation.goal, f"{last}."))

    def step(self, action: str) -> Observation:
        observation: Observation = self.env.step(action)
        return observation


def seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("--seeds", help="other seeds of the spec's challenge, e.g. 100-107")
    parser.add_argument("--readers", default="template,experience,llm")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of self-iteration, through prag run's runner")
    parser.add_argument("--store", help="the store of --rounds (default: one in a temporary directory)")
    parser.add_argument("--thing-only", action="store_true", help="objectives cut to their last step's command")
    args = parser.parse_args()
    spec = load_spec(args.spec)
    if args.seeds:
        params = {k: v for k, v in spec.params.items() if k not in ("seed", "num_tasks", "seeds")}
        spec = replace(spec, params={**params, "seeds": seeds(args.seeds)})
    config = AgentConfig(ask="hard-coded", sources=("experience", "search", "llm"), readers=parse_readers(args.readers))
    if args.rounds > 1:
        if args.seeds or args.thing_only:
            parser.error("--rounds plays the spec's own games as prag run does: leave out --seeds and --thing-only")
        with tempfile.TemporaryDirectory() as tmp:
            rounds(args.spec, args.rounds, config, Path(args.store or Path(tmp) / "bench.db"))
        return
    source, domain = spec.open(), domain_of(spec.env)
    won = steps = calls = 0
    tasks = source.tasks()
    for task in tasks:
        llm = RandomChoiceLLM(task.seed)
        agent = PragAgent(llm, None, Visibility("bench", 0, ()), config, seed=task.seed, domain=domain)  # type: ignore[arg-type]
        env = source.make(task)
        try:
            record, success, trace = play_episode(ThingOnly(env) if args.thing_only else env, agent)  # type: ignore[arg-type]
        finally:
            env.close()
        met = sum(goal.met_at is not None for goal in trace.report.subgoals)
        print(f"{task.task_id}: {'won' if success else 'lost'} in {len(record) - 1} steps, {llm.calls} LLM calls, "
              f"sub-goals met {met}/{len(trace.report.subgoals)}", flush=True)
        won, steps, calls = won + success, steps + len(record) - 1, calls + llm.calls
    print(f"{args.spec}{' thing only' if args.thing_only else ''} readers={args.readers}: SR {won}/{len(tasks)} = {won / len(tasks):.0%}, "
          f"{steps / len(tasks):.1f} steps a game, {calls / max(steps, 1):.2f} LLM calls a step")


def rounds(spec: str, count: int, agent: AgentConfig, path: Path) -> None:
    """`count` rounds of `spec` as `prag run` plays them, the stand-in in the LLM's place."""
    config = RunConfig(ExperimentConfig(spec=spec, rounds=count, llm="random-choice"), agent=agent,
                       execution=ExecutionConfig(answer_cache=False))

    def told(event: str, data: dict[str, Any]) -> None:
        if event == "episode":
            print(f"round {data['round']} {data['task_id']}: {'won' if data['won'] else 'lost'} in "
                  f"{data['n_steps']} steps, {data['llm_calls']} LLM calls", flush=True)

    with Store(path) as store:
        run = start_run(store, config)
        Runner(store, run, config, told, llm=RandomChoiceLLM()).play()  # type: ignore[arg-type]
        episodes = store.outcomes([run.id])
    for round_ in range(count):
        played = [e for e in episodes if e.round == round_]
        won, steps = sum(e.won for e in played), sum(e.n_actions for e in played)
        calls = sum(e.llm_calls for e in played)
        print(f"{spec} round {round_} readers={','.join(agent.readers)}: SR {won}/{len(played)} = "
              f"{won / len(played):.0%}, {steps / len(played):.1f} steps a game, {calls / max(steps, 1):.2f} LLM calls a step")


if __name__ == "__main__":
    main()
