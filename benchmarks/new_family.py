"""A new family, three rounds, the action model learned as it plays: SR and LLM calls per step.

Registers the pantry of tests/families/pantry.py (no action model, no placement table given) or the
tidy family of tests/families/tidy.py (a thin family: no goal schema either; the score says what to
achieve), plays its spec round after round through `prag run`'s runner into a store in a temporary directory, with a
stand-in in the LLM's place that picks uniformly among the admissible actions (seeded; no model is
run, no answer cache). Prints each round's SR, steps and LLM calls per step, and who chose the steps
(find: the find-X skill; search: means-ends search on the model learned from the rounds before;
episode: a plan from a stored success; llm: the stand-in).

    PYTHONPATH=. python benchmarks/new_family.py                       # every source
    PYTHONPATH=. python benchmarks/new_family.py --sources search,llm  # the learned model alone
    PYTHONPATH=. python benchmarks/new_family.py --family tidy         # sub-goals learned from the score
"""
from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from prag.agent.agent import parse_sources
from prag.agent.config import AgentConfig
from prag.envs import registry
from prag.llm.scripted import RandomChoiceLLM
from prag.run.config import ExecutionConfig, ExperimentConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store
from tests.families import pantry, tidy

FAMILIES = {"pantry": pantry, "tidy": tidy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--family", choices=sorted(FAMILIES), default="pantry")
    parser.add_argument("--sources", default="experience,search,progress,llm")
    parser.add_argument("--seed", type=int, default=0, help="the stand-in's seed")
    parser.add_argument("--llm-budget", type=int, default=6, help="LLM calls a game, past which steps are drawn (as `prag run`)")
    parser.add_argument("--explore", default="novel", help="what draws them: novel or uniform")
    args = parser.parse_args()
    family = FAMILIES[args.family]
    registry.register(args.family, family.from_params, family.DOMAIN)
    spec = Path(__file__).resolve().parents[1] / "tests" / "families" / f"{args.family}.toml"
    agent = AgentConfig(ask="hard-coded", sources=parse_sources(args.sources), llm_budget=args.llm_budget,
                        explore=args.explore)
    config = RunConfig(ExperimentConfig(spec=str(spec), rounds=args.rounds, llm="random-choice"), agent=agent,
                       execution=ExecutionConfig(answer_cache=False))
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        run = start_run(store, config)
        Runner(store, run, config, llm=RandomChoiceLLM(args.seed)).play()  # type: ignore[arg-type]
        episodes = list(store.episodes(run.id))
    print(f"{args.family}, {len(episodes) // args.rounds} tasks, sources {args.sources}, random stand-in seed {args.seed}, "
          f"LLM budget {args.llm_budget}, exploration {args.explore}")
    print("| round | won | mean score | steps / game | LLM calls / step | steps chosen by |")
    print("|---|---|---|---|---|---|")
    for round_ in range(args.rounds):
        played = [e for e in episodes if e.round == round_]
        steps = sum(e.n_actions for e in played)
        chosen = Counter(d.source for e in played for d in e.extra.decisions)
        scores = [e.score for e in played if e.score is not None]
        score = f"{sum(scores) / len(scores):.1f}" if scores else "-"
        print(f"| {round_} | {sum(e.won for e in played)}/{len(played)} | {score} | {steps / len(played):.1f} | "
              f"{sum(e.llm_calls for e in played) / max(steps, 1):.2f} | "
              + ", ".join(f"{source} {n}" for source, n in chosen.most_common()) + " |")


if __name__ == "__main__":
    main()
