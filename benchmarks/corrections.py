"""How often an improvement LLM turns a person's feedback into a verified correction.

For the failed episodes of a run (all, or the first of each task type with --per-type), a
scripted person gives feedback: the key steps of the planner's plan for that task, in one
sentence ("you have to open microwave 1, then take apple 1 from microwave 1, then ..."), which
is what a person who knows the room would say. `correct_episode` runs learn_from_interaction
with the improvement model and replays its transcript from the episode's start. Printed per
episode: kept or discarded (why), verified, where the replay failed, seconds; then the rates.

    python benchmarks/corrections.py STORE RUN --improver local:0.5b [--per-type] [--keep-unverified]
        [--examples] [--attempts N] [--dry]

--examples loads the shipped prior transcripts into the store first (they are shown to the
improvement model as an example of a good transcript); --dry works on a copy of the store.
--person-edits: the scripted person writes the transcript themselves, as `prag correct --edit`
lets a person do: the planner's plan, every action, replayed and stored like any edit.

Before and after (issue 5's benchmark, with plans): correct RUN's round-0 failures, play the
next round from RUN's round 0 with the corrections in the store, then read what became of
each corrected task:

    python benchmarks/corrections.py STORE r0 --per-type --person-edits
    prag run SPEC --store STORE --rounds 2 --round0-from r0 --ask hard-coded --sources experience,llm --name after
    python benchmarks/corrections.py STORE r0 --after after
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from prag.corrections.learn import correct_episode
from prag.corrections.prior import load_prior
from prag.corrections.replay import episode_spec, open_task
from prag.envs.registry import domain
from prag.envs.spec import load_spec
from prag.llm import make_llm
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.store import Store
from prag.store.transcripts import Entry, Transcript


def planner_plan(spec_ref: str, task_id: str) -> list[str]:
    _, _, env = open_task(spec_ref, task_id)
    try:
        env.reset()
        return env.oracle_plan()
    finally:
        env.close()


def scripted_feedback(plan: list[str]) -> str:
    """The planner's plan, without the walking, said as one sentence."""
    return "you have to " + ", then ".join(step for step in plan if not step.startswith("go to "))


def scripted_edit(goal: str, plan: list[str]) -> Transcript:
    """The transcript a person who knows the room writes: the goal, then the plan's actions
    (the replay fills in what happens)."""
    return Transcript((Entry.utterance(goal),) + tuple(Entry.action(step, "") for step in plan))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path)
    parser.add_argument("run")
    parser.add_argument("--improver", default="local:0.5b")
    parser.add_argument("--per-type", action="store_true", help="only the first failed episode of each task type")
    parser.add_argument("--keep-unverified", action="store_true", help="store corrections whose replay failed too")
    parser.add_argument("--examples", action="store_true", help="load the prior transcripts (examples for the improver)")
    parser.add_argument("--dry", action="store_true", help="work on a copy of the store")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--attempts", type=int, default=1, help="tries per episode until a replay wins")
    parser.add_argument("--person-edits", action="store_true", help="the person writes the transcript (the plan)")
    parser.add_argument("--after", metavar="RUN2", help="report only: RUN's corrected tasks in RUN2's round 1")
    args = parser.parse_args()
    if args.after:
        report_after(args.store, args.run, args.after)
        return

    path = args.store
    if args.dry:
        path = Path(tempfile.mkdtemp(prefix="prag-corrections-")) / args.store.name
        shutil.copy(args.store, path)
    llm = None if args.person_edits else make_llm(args.improver)
    encoder = Encoder()
    counts: Counter[str] = Counter()
    with Store(path, create=False) as store:
        cache = EmbeddingCache(store, encoder)
        failed = [e for e in store.episodes(args.run) if not e.won]
        if args.per_type:
            types = [e.task_type for e in failed]
            failed = [e for i, e in enumerate(failed) if e.task_type not in types[:i]]
        if args.examples and failed:
            load_prior(store, cache, domain=domain(load_spec(episode_spec(store, failed[0])).env).name)
        author = "the person (edits)" if llm is None else f"improver {llm.name}"
        print(f"{len(failed)} failed episodes of {args.run}; {author}")
        for episode in failed:
            plan = planner_plan(episode_spec(store, episode), episode.task_id)
            start = time.perf_counter()
            outcome = correct_episode(
                store, episode.id, cache, feedback=scripted_feedback(plan), llm=llm,
                edited=scripted_edit(episode.goal, plan) if llm is None else None,
                keep_unverified=lambda replay: args.keep_unverified, max_tokens=args.max_tokens,
                attempts=args.attempts,
            )
            seconds = time.perf_counter() - start
            if outcome.replay is None:
                kind = "discarded"
            elif outcome.replay.won:
                kind = "verified"
            else:
                kind = "replay failed"
            counts[kind] += 1
            print(f"{episode.id:>5} {episode.task_id:<36} {kind:<14} {seconds:6.1f}s  {outcome.message}")
    total = sum(counts.values()) or 1
    print(
        f"\n{author}: {counts['verified']}/{total} verified ({counts['verified'] / total:.0%}), "
        f"{counts['replay failed']} replay failed, {counts['discarded']} discarded by the learning rules"
    )


def report_after(path: Path, run: str, after: str) -> None:
    """Each task with a verified correction of RUN's episodes: won in RUN's round 0, in AFTER's
    round 1, and where round 1's steps came from (a correction's plan, the LLM, ...)."""
    with Store(path, create=False) as store:
        corrected = {c.source_episode: c for c in store.corrections.list(prior=False) if c.verified}
        before = {e.task_id: e for e in store.episodes(run) if e.round == 0}
        next_round = {e.task_id: e for e in store.episodes(after) if e.round == 1}
    tasks = [e.task_id for e in before.values() if e.id in corrected]
    print(f"{'task':<36} {'round 0':<8} {'round 1':<8} {'steps':>5} {'LLM calls':>9}  steps by source")
    won = 0
    for task in tasks:
        episode = next_round.get(task)
        if episode is None:
            print(f"{task:<36} {'lost':<8} {'not played':<8}")
            continue
        won += episode.won
        sources = Counter(decision.source for decision in episode.extra.decisions)
        print(
            f"{task:<36} {'won' if before[task].won else 'lost':<8} {'won' if episode.won else 'lost':<8} "
            f"{episode.n_actions:>5} {episode.llm_calls:>9}  {', '.join(f'{k} {v}' for k, v in sources.most_common())}"
        )
    others = [e for task, e in next_round.items() if task not in tasks]
    print(
        f"\ncorrected tasks won in round 1: {won}/{len(tasks)}; "
        f"the other tasks: {sum(e.won for e in others)}/{len(others)}"
    )


if __name__ == "__main__":
    main()
