"""Soar ITL's Table 4 on prag (issue 13): which knowledge sources complete the tasks, and what they
cost the person, in instructions, words and yes/no answers per task.

The person is scripted (`PlanKnowingPerson`): they know the planner's plan of the task from the
start, as the person of benchmarks/corrections.py does, and follow it as the agent goes. Their
next step is the plan's first step not yet done, with the walking re-done: a "go to" where the
agent already stands is done; a step that cannot be taken where it happens, with the agent
standing there, is done too (the receptacle is open already); with the agent elsewhere, the
next step is to go to where it happens. They answer yes to a proposal iff it is that one step
(not any step of some other winning continuation), and, asked in words, they say it.

Conditions (each in a fresh store, the same tasks, ask policy hard-coded so that search plans
are followed): instruction only (the person instructs every step: no LLM, no search) /
instruction + search / search + LLM (no person) / instruction + LLM / all sources. Per task:
completion rate, instructions, words, yes/no answers; and which source chose how many steps.

    python benchmarks/soar_itl.py [--spec alfworld-mini] [--difficulty tiny|easy|medium|hard]
        [--llm local|scripted|SPEC] [--limit N] [--per-type N] [--max-steps N] [--rounds N] [--conditions 1,2,...] [--json]

--difficulty plays the spec's generated set at another room size (prag.envs.alfworld.gen).

--llm scripted is a quick check with `random_proposer()`, a scripted stand-in LLM proposing a
random admissible action; the default is the local 1.5B model. Run it niced and pinned, e.g.
`OMP_WAIT_POLICY=PASSIVE nice taskset -c 0 python benchmarks/soar_itl.py --limit 6`.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from prag.agent.config import AgentConfig
from prag.agent.protocol import Agent
from prag.envs.base import Observation, Task, TaskSource
from prag.envs.spec import load_spec
from prag.llm.base import LLM, Message
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.embed import Encoder
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.runner import Phase, Runner, build_llm, start_run
from prag.store import Store
from prag.store.episode_extra import Effort
from prag.store.records import StepRecord

# name -> (sources, a person is present)
CONDITIONS: dict[str, tuple[tuple[str, ...], bool]] = {
    "instruction only": (("person",), True),
    "instruction + search": (("search", "person"), True),
    "search + LLM": (("search", "llm"), False),
    "instruction + LLM": (("llm", "person"), True),
    "all sources": (("experience", "search", "llm", "person"), True),
}


@dataclass
class PlanKnowingPerson:
    """A scripted person who knows the planner's plan of the task (see the module's docstring):
    yes iff a proposal is their next step of the plan; asked in words, that step."""

    plan: list[str] = field(default_factory=list)
    done: int = 0  # plan steps before this one are done

    def begin(self, plan: list[str]) -> None:
        """A new task and its plan."""
        self.plan, self.done = list(plan), 0

    def saw(self, action: str) -> None:
        """The agent took `action`: a step of the plan (other than walking) moves the plan on to
        after it, wherever in the rest of the plan it is."""
        rest = self.plan[self.done :]
        if rest and action == rest[0]:
            self.done += 1
        elif action in rest and not action.startswith("go to "):
            self.done += rest.index(action) + 1

    def next_step(self, observation: Observation) -> str | None:
        """The plan's next step from where the agent is, None when the plan has no step left."""
        for index in range(self.done, len(self.plan)):
            step = self.plan[index]
            if step.startswith("go to "):
                if step.removeprefix("go to ") != observation.location:
                    return step
                continue  # already there
            if step in observation.admissible:
                return step
            place = self._place_of(index)
            if place is not None and place != observation.location:
                return f"go to {place}"
        return None

    def _place_of(self, index: int) -> str | None:
        """Where plan step `index` happens: the place the plan last went to before it."""
        walks = [s for s in self.plan[:index] if s.startswith("go to ")]
        return walks[-1].removeprefix("go to ") if walks else None

    def confirm(self, action: str, observation: Observation) -> bool | str:
        return action == self.next_step(observation)

    def confirm_reading(self, instruction: str, sentence: str | None) -> bool | str:
        return True

    def instruct(self, observation: Observation) -> str | None:
        return self.next_step(observation)


def random_proposer(seed: int = 0) -> ScriptedLLM:
    """A scripted stand-in LLM for a quick check: a random one of the prompt's admissible actions."""
    rng = random.Random(seed)

    def answer(messages: list[Message]) -> str:
        text = messages[-1]["content"]
        line = next(line for line in reversed(text.splitlines()) if line.startswith("Admissible actions: "))
        return rng.choice(unfold(line.removeprefix("Admissible actions: ")))

    return ScriptedLLM(answer, name="scripted-random-proposer")


def unfold(listed: str) -> list[str]:
    """The actions of `prag.agent.asking.prompt.action_list`'s folded text."""
    actions = []
    for group in listed.split("; "):
        verb, colon, rests = group.partition(": ")
        actions += [f"{verb} {rest}" for rest in rests.split(", ")] if colon else [group]
    return actions


def oracle_plan(source: TaskSource, task: Task) -> list[str]:
    env = source.make(task)
    try:
        env.reset()
        return env.oracle_plan()
    finally:
        env.close()


def play_condition(
    name: str, spec: str, tasks: list[Task], source: TaskSource, llm: LLM, encoder: Encoder, args: argparse.Namespace,
    directory: Path,
) -> dict[str, object]:
    """Every task once per round under one condition, in a store of its own; the figures."""
    sources, with_person = CONDITIONS[name]
    config = RunConfig(
        ExperimentConfig(spec=spec, rounds=args.rounds, llm=llm.name, max_steps=args.max_steps),
        RetrievalConfig(prior=False),
        AgentConfig(ask="hard-coded", sources=sources),
        execution=ExecutionConfig(answer_cache=False),
    )
    person = PlanKnowingPerson() if with_person else None
    plans = {task.task_id: oracle_plan(source, task) for task in tasks}
    won, effort, chose, steps = 0, Effort(), Counter[str](), 0
    start = time.perf_counter()
    with Store(directory / f"{name.replace(' ', '')}.db") as store:
        run = start_run(store, config, name.replace(" ", "-").replace("+", "and"))
        runner = Runner(store, run, config, llm=llm, encoder=encoder, person=person)
        phase_spec = load_spec(spec)
        for round_ in range(args.rounds):
            for task in tasks:
                if person is not None:
                    person.begin(plans[task.task_id])

                def before_act(step: StepRecord, observation: Observation, agent: Agent) -> bool:
                    if person is not None and step.action is not None:
                        person.saw(step.action)
                    return True

                record = runner.play_one(Phase(round_, phase_spec, tasks, source), task, before_act)
                won += record.won
                effort += record.extra.effort
                chose.update(d.source for d in record.extra.decisions)
                steps += record.n_actions
                print(
                    f"  {name} r{round_} {task.task_id:<36} {'won ' if record.won else 'lost'} {record.n_actions:>3} steps "
                    f"effort {record.extra.effort} sources {dict(Counter(d.source for d in record.extra.decisions))}",
                    flush=True,
                )
    episodes = len(tasks) * args.rounds
    return {
        "condition": name, "episodes": episodes, "completed": won / episodes,
        "instructions": effort.instructions / episodes, "words": effort.words / episodes,
        "answers": effort.answers / episodes, "steps": steps / episodes, "sources": dict(chose),
        "minutes": (time.perf_counter() - start) / 60,
    }


def at_difficulty(spec: str, difficulty: str, directory: Path) -> str:
    """A copy of a generated spec at another difficulty, written to `directory`; its path."""
    text = Path(load_spec(spec).path).read_text()
    text, found = re.subn(r"(?m)^difficulty = .*$", f'difficulty = "{difficulty}"', text)
    if not found:
        raise SystemExit(f"{spec} sets no difficulty: give a generated ALFWorld spec such as alfworld-mini")
    path = directory / f"{spec}-{difficulty}.toml"
    path.write_text(re.sub(r"(?m)^name = .*$", f'name = "{spec}-{difficulty}"', text))
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default="alfworld-mini")
    parser.add_argument("--llm", default="local", help="a --llm spec, or `scripted` (a random admissible action)")
    parser.add_argument("--difficulty", default=None, help="the generated set at this room size")
    parser.add_argument("--limit", type=int, default=None, help="the first N tasks of the spec")
    parser.add_argument("--per-type", type=int, default=None, help="the first N tasks of each task type")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--conditions", default=",".join(str(i) for i in range(1, len(CONDITIONS) + 1)),
                        help="which conditions, by number (1 = instruction only ... 5 = all sources)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="prag-soar-") as directory:
        ref = at_difficulty(args.spec, args.difficulty, Path(directory)) if args.difficulty else args.spec
        spec = load_spec(ref)
        source = spec.open(max_steps=args.max_steps)
        tasks = source.tasks()
        if args.per_type is not None:
            tasks = [t for i, t in enumerate(tasks) if [u.task_type for u in tasks[:i]].count(t.task_type) < args.per_type]
        tasks = tasks[: args.limit]
        llm = random_proposer() if args.llm == "scripted" else build_llm(args.llm, ExecutionConfig())
        encoder = Encoder(RetrievalConfig().embedding_model)
        names = [list(CONDITIONS)[int(i) - 1] for i in args.conditions.split(",")]
        print(f"{spec.name}: {len(tasks)} tasks, LLM {llm.name}, conditions: {', '.join(names)}", flush=True)
        rows = [play_condition(n, ref, tasks, source, llm, encoder, args, Path(directory)) for n in names]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("\ncondition | completed | instructions/task | words/task | yes/no/task | steps/task | steps by source | min")
    print("---|---|---|---|---|---|---|---")
    for row in rows:
        by_source = ", ".join(f"{k} {v}" for k, v in sorted(row["sources"].items()))  # type: ignore[union-attr]
        print(
            f"{row['condition']} | {row['completed']:.0%} | {row['instructions']:.1f} | {row['words']:.1f} | "
            f"{row['answers']:.1f} | {row['steps']:.1f} | {by_source} | {row['minutes']:.1f}"
        )


if __name__ == "__main__":
    main()
