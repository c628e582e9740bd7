"""How well instructions in people's words are read into ALFWorld goals, before any step is played.

For every game of a real ALFWorld split, the instruction in the chosen wording is read by prag's
goal readers (`prag.agent.goals.readers`: template, experience, LLM) in the room the game sets up (its
receptacle kinds, from the game's PDDL problem, as the game's first observation lists them), and
the reading is compared with the game's own goal (task type and slots from `traj_data.json`).
Two passes: the first on an empty store; the second after the first pass's right readings were
stored as verified (what a won episode does), so that it shows what experience saves. With
`--train-split`, the readings verified on that split come first (prag's `--train`); with `--after
STORE --include RUN...`, those a store's runs verified by playing (a copy of the store is read).

The reading alone is measured here; whether the game is then won is `prag run`'s to measure.

    python benchmarks/goal_reading.py --wording refined --limit 20
    python benchmarks/goal_reading.py --wording turk --train-split valid_train
    python benchmarks/goal_reading.py --wording refined --after TRAIN.db --include valid_train-turk
    ALFWORLD_DATA=/tmp/alfworld-data/alfworld python benchmarks/goal_reading.py --wording korean_command

Wordings (`prag.envs.alfworld.wording`): template (the game's own sentence), turk (one of ALFRED's
crowd annotations, chosen with --seed), people (prag's own phrasings), or a field of a Revisiting ALFRED commands file (--commands, default the one in
../shared/data/alfworld): refined, paraphras1_command, paraphras2_command, contextual_command,
korean_command.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prag.agent.goals.readers import (  # noqa: E402
    EXAMPLE_SIMILARITY,
    Context,
    ExperienceReader,
    LLMReader,
    TemplateReader,
    WordsReader,
    read,
)
from prag.agent.protocol import Usage  # noqa: E402
from prag.envs.alfworld.env import find_games  # noqa: E402
from prag.envs.alfworld.goals import TEMPLATES  # noqa: E402
from prag.envs.alfworld.wording import FIELDS, Wording, instructions  # noqa: E402
from prag.envs.domain import ALFWORLD  # noqa: E402
from prag.envs.goals import FormalGoal  # noqa: E402
from prag.llm import make_llm  # noqa: E402
from prag.retrieval.embed import EmbeddingCache, Encoder  # noqa: E402
from prag.retrieval.index import Visibility  # noqa: E402
from prag.retrieval.readings import ReadingMemory  # noqa: E402
from prag.store import Store  # noqa: E402
from prag.store.episode_extra import EpisodeExtra, GoalReading
from prag.store.records import EpisodeRecord, RunRecord, StepRecord  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld"


@dataclass(frozen=True)
class Case:
    task_id: str
    instruction: str
    truth: str  # the canonical sentence of the game's own goal
    room: list[str]


def truth_of(traj: dict) -> str:
    params = traj["pddl_params"]
    slots = {"obj": params["object_target"].lower(), "recep": params["parent_target"].lower(),
             "toggle": params["toggle_target"].lower()}
    return TEMPLATES[traj["task_type"]].format(**slots)


def room_of(game_file: Path) -> list[str]:
    problem = json.loads(game_file.read_text())["pddl_problem"]
    return sorted({t.lower() for t in re.findall(r"\(receptacleType \S+ (\w+)Type\)", problem)})


def cases(split_dir: Path, wording: str, commands: Path, seed: int, limit: int | None) -> list[Case]:
    games = find_games(split_dir)
    chosen = Wording(wording, commands if wording in FIELDS else None, seed)
    worded = instructions(chosen, {game.task_id: game.game_file.parent for game in games})
    found = []
    for game in games:
        truth = truth_of(json.loads((game.game_file.parent / "traj_data.json").read_text()))
        found.append(Case(game.task_id, worded.get(game.task_id, truth), truth, room_of(game.game_file)))
    return found[:limit]


def settled(goal: FormalGoal, truth: str) -> bool:
    """Whether a reading differs from the game's goal only in slots people leave unsaid (the lamp),
    which play settles with no LLM call: the room's own kind is taken when it shows (readers' `unsaid`)."""
    schema = ALFWORLD.schema()
    right = schema.read(truth) if schema is not None else None
    if schema is None or right is None or right.task != goal.task:
        return False
    return all(value == dict(right.slots)[slot] for slot, value in goal.slots if slot not in schema.unsaid)


def verify(store: Store, run_id: str, round_: int, case: Case, sentence: str, n: int) -> None:
    """Store a won stand-in episode under the reading (what a won game does to its reading)."""
    step = StepRecord(0, None, "", "")
    store.add_episode(EpisodeRecord(
        run_id=run_id, round=round_, task_id=f"{case.task_id}#{n}", task_type="", goal=case.instruction, won=True,
        steps=[step], extra=EpisodeExtra(reading=GoalReading(case.instruction, sentence, "llm")),
    ))


def play_pass(cases_: list[Case], readers, memory: ReadingMemory, store: Store, run_id: str, round_: int,
              usage: Usage) -> tuple[Counter, list[tuple[Case, str | None, str]]]:
    tally: Counter = Counter()
    wrong = []
    for n, case in enumerate(cases_):
        before = usage.cost.calls
        hypotheses = read(readers(Visibility(run_id, round_)), Context(case.instruction, ALFWORLD, case.room))
        best = hypotheses[0] if hypotheses else None
        right = best is not None and best.goal is not None and best.goal.sentence == case.truth
        place = next((n for n, h in enumerate(hypotheses) if h.goal is not None and settled(h.goal, case.truth)), None)
        tally["among hypotheses"] += place is not None
        tally["hypotheses needed"] += (place + 1) if place is not None else 0
        tally["games"] += 1
        tally["right"] += right
        tally["settled"] += right or (best is not None and best.goal is not None and settled(best.goal, case.truth))
        tally[f"by {best.source if best else 'none'}"] += 1
        tally["llm calls"] += usage.cost.calls - before
        if right:
            verify(store, run_id, round_, case, best.sentence if best.source != "template" else case.truth, n)
        else:
            wrong.append((case, best.goal.sentence if best and best.goal else None, best.source if best else "none"))
    return tally, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="valid_seen")
    parser.add_argument("--wording", default="refined", choices=("template", "turk", "people", *FIELDS))
    parser.add_argument("--commands", type=Path, default=SHARED / "refined_valid_seen_commands.json")
    parser.add_argument("--train-split", help="read this split (turk wording) first and keep what was verified")
    parser.add_argument("--after", type=Path, help="read with the readings this store's runs --include verified")
    parser.add_argument("--include", nargs="*", default=[], help="the runs of --after whose readings are visible")
    parser.add_argument("--llm", default="local")
    parser.add_argument("--readers", default="template,experience,words,llm", help="the goal readers, in order")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show-wrong", type=int, default=15)
    parser.add_argument("--example-similarity", type=float, default=EXAMPLE_SIMILARITY,
                        help="the least similarity of a verified reading shown to the LLM as an example")
    args = parser.parse_args()
    root = Path(os.environ.get("ALFWORLD_DATA", "/tmp/alfworld-data/alfworld")) / "json_2.1.1"

    llm = make_llm(args.llm)
    usage = Usage()
    encoder = Encoder()
    with tempfile.TemporaryDirectory() as tmp:
        if args.after is not None:
            shutil.copy(args.after, Path(tmp) / "readings.db")
        store = Store(Path(tmp) / "readings.db")
        cache = EmbeddingCache(store, encoder)
        memory = ReadingMemory(store, cache)
        store.add_run(RunRecord("bench", "goal-reading", llm.name, "prag", 0, 1))

        def readers(visibility: Visibility):
            recall = memory.recaller(replace(visibility, include_runs=tuple(args.include)))
            made = {"template": TemplateReader(), "experience": ExperienceReader(recall), "words": WordsReader(recall),
                    "llm": LLMReader(llm, recall, usage, args.seed, example_similarity=args.example_similarity)}
            return [made[name] for name in args.readers.split(",")]

        round_ = 0
        if args.train_split:
            train = cases(root / args.train_split, "turk", args.commands, args.seed, None)
            start = time.perf_counter()
            tally, _ = play_pass(train, readers, memory, store, "bench", 0, usage)
            print(f"train {args.train_split} (turk): {tally['right']}/{tally['games']} right, "
                  f"{tally['llm calls']} LLM calls, {time.perf_counter() - start:.0f} s")
            round_ = 1
        test = cases(root / args.split, args.wording, args.commands, args.seed, args.limit)
        print(f"{args.split}, wording {args.wording}: {len(test)} games; LLM {llm.name}; examples from similarity {args.example_similarity}")
        for pass_ in range(2):
            start = time.perf_counter()
            tally, wrong = play_pass(test, readers, memory, store, "bench", round_ + pass_, usage)
            n = tally["games"]
            sources = ", ".join(f"{k[3:]} {v}" for k, v in sorted(tally.items()) if k.startswith("by "))
            print(f"pass {pass_}: {tally['right']}/{n} read right ({100 * tally['right'] / n:.1f}%; "
                  f"{tally['settled']}/{n} ({100 * tally['settled'] / n:.1f}%) right but for the lamp, which play settles), "
                  f"LLM calls {tally['llm calls'] / n:.2f} per game, readings by {sources}; "
                  f"{tally['among hypotheses']}/{n} right but for the lamp among the hypotheses, "
                  f"{tally['hypotheses needed'] / max(tally['among hypotheses'], 1):.2f} tried on average; "
                  f"{time.perf_counter() - start:.0f} s")
            for case, got, source in wrong[: args.show_wrong]:
                print(f"    {case.instruction!r}: read {got!r} ({source}), truth {case.truth!r}")
        store.close()


if __name__ == "__main__":
    main()
