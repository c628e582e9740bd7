"""Does the local model know which branch of a ScienceWorld goal's conditional instructions holds?

    OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/condition_questions.py [--split dev] [--per-task 10]

For each task whose goal branches ("If the melting point of water is above 150.0 degrees celsius,
focus on the yellow box. If ... below ..., focus on the purple box."), variations drawn from
`--split` (seed 0) are loaded with their gold path; the branch the gold path takes (the box its
last action names) is the truth. The model is asked as prag asks it (prag.agent.skills.conditions:
"Is the melting point of water above 150.0 degrees celsius? Answer yes, no or unknown.", one
constrained answer). Prints each answer against the truth, then per task how often the model was
right, wrong, or said unknown. A wrong branch fails the task (-100), losing the partial score the
instructed focuses earned (60-82 of 100): this is the evidence for which conditions prag asks
the model about.
"""
from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from prag.agent.protocol import Usage
from prag.agent.skills.conditions import Conditions, branches
from prag.agent.skills.instructed import instructed, sentences
from prag.envs.sciworld.domain import SCIWORLD
from prag.envs.sciworld.engine import simulator
from prag.envs.sciworld.env import variations
from prag.llm import make_llm

TASKS = ("measure-melting-point-known-substance", "measure-melting-point-unknown-substance", "use-thermometer",
         "test-conductivity", "test-conductivity-of-unknown-substances")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="a --llm spec (default: local, the 1.5B model)")
    parser.add_argument("--split", default="dev", choices=("train", "dev", "test"))
    parser.add_argument("--per-task", type=int, default=10)
    args = parser.parse_args()
    llm = make_llm(args.model, n_threads=1)
    sim = simulator()
    tally: dict[str, Counter[str]] = {}
    for task in TASKS:
        drawn = random.Random(f"0/{task}").sample(variations(task, args.split), args.per_task)
        for variation in sorted(drawn):
            sim.load(task, variation, "", generateGoldPath=True)
            goal = sim.get_task_description()
            found = branches(sentences(goal))
            last = next(a for a in reversed(sim.get_gold_action_sequence()) if "box" in a)
            truth = [b for b in found if b.instruction.split(" the ")[-1] in last.lower()]
            asker = Conditions(llm, Usage(), found)
            start = time.perf_counter()
            taken = asker.known(instructed(goal, SCIWORLD)[-1])
            seconds = time.perf_counter() - start
            verdict = "unknown" if taken is None else "right" if truth and taken == truth[0] else "wrong"
            tally.setdefault(task, Counter())[verdict] += 1
            print(f"{task} {variation}: {verdict} ({seconds:.1f} s) {asker.answers}; "
                  f"truth {truth[0].instruction if truth else '?'!r}", flush=True)
    for task, counts in tally.items():
        print(f"{task}: right {counts['right']}, wrong {counts['wrong']}, unknown {counts['unknown']}")


if __name__ == "__main__":
    main()
