"""A person at `prag console`, measured as KIT measures incremental learning from interaction.

Bärmann et al. (2024) report, over repeated tasks, the initial success rate (before any feedback),
the turnout success rate (after feedback) and the number of interactions until success; Soar ITL
(Kirk et al.) counts the person's effort as instructions, words and yes/no answers. This script:

1. plays the chosen crowd-worded `valid_seen` games once with no person (`prag run`): the initial SR;
2. for each game, drives `prag console` in a real terminal (tmux send-keys / capture-pane) with a
   scripted person who says yes to a right reading of the crowd's words and types the goal in words
   to a wrong one, says yes to an LLM proposal that names the goal's thing or place and no to others,
   and presses Enter otherwise; sessions repeat until one is won (at most --sessions): the
   interactions until success, and the person's effort before learning;
3. plays the games again with no person (`prag run`, seeing the console's runs): the turnout SR;
4. drives the console once more on each game with the same person: the effort after learning.

    ALFWORLD_DATA=/tmp/alfworld-data/alfworld taskset -c 0 python benchmarks/kit_console.py --llm random

ALFWORLD_DATA must hold the full `valid_seen` split; the chosen games are copied into a data folder
of their own so that `prag run` plays only them (a task's annotation is chosen by its id: the same).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from prag.store import Store

ROOT = Path(__file__).resolve().parents[1]
SPEC = "alfworld-valid-seen-turk"
# Games whose crowd words name another thing or place than the game's goal, or that prag misreads
# (docs/records/goals_in_words.md, "The crowd annotations judged wrong"): feedback is what can win them.
# Each with what the scripted person types when the agent's reading is wrong.
GAMES = {
    "pick_and_place_simple-Candle-None-Toilet-429": "put a candle on the toilet",
    "pick_and_place_simple-SprayBottle-None-Cabinet-413": "put the spray bottle in a cabinet",
    "pick_and_place_simple-ToiletPaper-None-ToiletPaperHanger-406": "put the toilet paper on the toilet paper hanger",
    "pick_cool_then_place_in_recep-Egg-None-Microwave-24": "cool an egg and put it in the microwave",
    "pick_two_obj_and_place-AlarmClock-None-Dresser-305": "put two alarm clocks on the dresser",
}
VERBS = {"pick_cool": "cool", "pick_heat": "heat", "pick_clean": "clean", "pick_two": "two", "look_at": "look"}
# The console's prompts, as a person reads them; the answer to each is the person's choice.
READING, SAY_GOAL = "Right? [y/n, or type the goal in words]", "Say it as one:"
PROPOSAL, ASKED = "OK? [y/n, or type an instruction]", "what should it do next?"
NEXT, FEEDBACK, KEEP = "(Enter: next action;", "(your feedback;", "Store it anyway"
PROMPTS = (READING, SAY_GOAL, PROPOSAL, ASKED, NEXT, FEEDBACK, KEEP)
DONE = "KIT-CONSOLE-DONE"


@dataclass
class Session:
    won: bool
    instructions: int
    words: int
    answers: int


class Person:
    """A scripted person who knows the game's goal (from its folder name) and the words for it."""

    def __init__(self, game: str) -> None:
        self.task, self.thing, _, self.place, _ = game.split("-")
        self.words = GAMES[game]

    def right(self, sentence: str) -> bool:
        """Whether a reading names this game's thing, place and change."""
        said = set(re.findall(r"\w+", sentence.lower()))
        verb = next((v for prefix, v in VERBS.items() if self.task.startswith(prefix)), None)
        return {self.thing.lower(), self.place.lower()} <= said and (verb is None or verb in said)

    def answer(self, prompt: str, line: str) -> str:
        if prompt == READING:
            sentence = line.rsplit(" as: ", 1)[-1].split(". Right?")[0]
            return "y" if self.right(sentence) else self.words
        if prompt == SAY_GOAL:
            return self.words
        if prompt == PROPOSAL:
            action = line.split("The agent proposes: ", 1)[-1].split(". OK?")[0].lower().replace(" ", "")
            return "y" if self.thing.lower() in action or self.place.lower() in action else "n"
        if prompt in (FEEDBACK, KEEP):
            return "quit" if prompt == FEEDBACK else "n"
        return ""  # Enter: let the agent go on; asked for a step, the person has none to give


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def console(store: Path, task: int, person: Person, env: dict[str, str], args: argparse.Namespace) -> Session:
    """One `prag console` session in a tmux pane, the person answering each prompt it shows."""
    name = f"kit-{os.getpid()}-{task}"
    command = (f"taskset -c {args.cpus} {sys.executable} {ROOT / 'cli.py'} console {SPEC} --task {task} "
               f"--store {store} --llm {args.llm} --ask hard-coded --sources experience,search,llm,person; "
               f"echo {DONE}")
    tmux("new-session", "-d", "-s", name, "-x", "220", "-y", "50", "-c", str(args.work),
         "env", *[f"{k}={v}" for k, v in env.items()], "bash", "-c", command + "; sleep 3600")
    tmux("set-option", "-t", name, "history-limit", "100000")
    answered, deadline = 0, time.monotonic() + args.timeout
    try:
        while time.monotonic() < deadline:
            time.sleep(0.3)
            # -J joins wrapped lines: a prompt and its line read whole.
            pane = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name)
            if DONE in pane:
                return parse(pane)
            shown = [(p, line) for line in pane.splitlines() for p in PROMPTS if p in line
                     for _ in range(line.count(p))]
            if len(shown) > answered:
                prompt, line = shown[answered]
                if said := person.answer(prompt, line):
                    tmux("send-keys", "-t", name, "-l", said)
                tmux("send-keys", "-t", name, "Enter")
                answered += 1
        raise SystemExit(f"console session for task {task} did not end in {args.timeout} s:\n{pane[-2000:]}")
    finally:
        tmux("kill-session", "-t", name)


def parse(pane: str) -> Session:
    effort = re.search(r"your effort: (\d+) instructions \((\d+) words\), (\d+) yes/no answers", pane)
    if effort is None:
        raise SystemExit(f"the console ended without its effort line:\n{pane[-2000:]}")
    return Session(re.search(r"^won after \d+ actions", pane, re.M) is not None, *map(int, effort.groups()))


def play(store: Path, name: str, include: list[str], env: dict[str, str], args: argparse.Namespace) -> dict[str, bool]:
    """The games played once with no person (`prag run`, one round): won per task id."""
    command = ["taskset", "-c", args.cpus, sys.executable, str(ROOT / "cli.py"), "run", SPEC, "--store", str(store),
               "--llm", args.llm, "--rounds", "1", "--name", name]
    for run in include:
        command += ["--include", run]
    subprocess.run(command, check=True, env=env, cwd=args.work, stdout=subprocess.DEVNULL)
    with Store(store) as opened:
        return {e.task_id: e.won for e in opened.episodes(name)}


def games_data(source: Path, into: Path) -> Path:
    """A data folder holding only the chosen games of `valid_seen`, and the logic files."""
    root = into / "alfworld"
    shutil.copytree(source / "logic", root / "logic")
    for game in GAMES:
        shutil.copytree(source / "json_2.1.1" / "valid_seen" / game, root / "json_2.1.1" / "valid_seen" / game)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", default="random", help="the agent's LLM source (random: the person's words are what matter)")
    parser.add_argument("--cpus", default="0", help="taskset CPU list for every prag process")
    parser.add_argument("--sessions", type=int, default=3, help="console sessions per game at most, until one is won")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a console session may take")
    args = parser.parse_args()
    if "ALFWORLD_DATA" not in os.environ:
        raise SystemExit("set ALFWORLD_DATA to the folder holding json_2.1.1/valid_seen (see tests/conftest.py)")
    args.work = Path(tempfile.mkdtemp(prefix="kit-console-"))
    data = games_data(Path(os.environ["ALFWORLD_DATA"]), args.work)
    env = {"ALFWORLD_DATA": str(data), "PYTHONPATH": str(ROOT), "COLUMNS": "220", "PATH": os.environ["PATH"],
           "HOME": os.environ.get("HOME", "/tmp")}
    store = args.work / "kit.db"
    print(f"work folder {args.work}; LLM {args.llm}")

    initial = play(store, "initial", [], {**os.environ, **env}, args)
    tasks = sorted(initial)  # the spec's order: by task id
    before: dict[str, list[Session]] = {}
    for index, task in enumerate(tasks):
        person, sessions = Person(task.split("/")[0]), []
        while len(sessions) < args.sessions and not (sessions and sessions[-1].won):
            sessions.append(console(store, index, person, env, args))
        before[task] = sessions
        print(f"{task}: initial {'won' if initial[task] else 'lost'}; with the person "
              f"{['won' if s.won else 'lost' for s in sessions]}")
    with Store(store) as opened:
        taught = [run.id for run in opened.runs() if run.id.startswith("console-")]
    turnout = play(store, "turnout", taught, {**os.environ, **env}, args)
    after = {task: console(store, index, Person(task.split("/")[0]), env, args) for index, task in enumerate(tasks)}
    report(tasks, initial, before, turnout, after)


def report(tasks: list[str], initial: dict[str, bool], before: dict[str, list[Session]],
           turnout: dict[str, bool], after: dict[str, Session]) -> None:
    n = len(tasks)
    won_with = [t for t in tasks if before[t][-1].won]
    until = [len(before[t]) for t in won_with]
    print(f"\n| game | initial | sessions until won | turnout | effort before (instr/words/yes-no) | effort after |")
    print("|---|---|---|---|---|---|")
    for t in tasks:
        first, later = before[t][0], after[t]
        print(f"| {t.split('/')[0]} | {'won' if initial[t] else 'lost'} | "
              f"{len(before[t]) if before[t][-1].won else '-'} | {'won' if turnout[t] else 'lost'} | "
              f"{first.instructions}/{first.words}/{first.answers} | {later.instructions}/{later.words}/{later.answers} |")
    total = lambda sessions, f: sum(getattr(s, f) for s in sessions)  # noqa: E731
    firsts = [before[t][0] for t in tasks]
    all_before = [s for t in tasks for s in before[t]]
    lasts = list(after.values())
    print(f"\ninitial success rate: {sum(initial.values())}/{n}")
    print(f"turnout success rate: {sum(turnout.values())}/{n}")
    print(f"interactions until success: {sum(until) / len(until):.2f} sessions a game ({len(won_with)}/{n} games won with the person)"
          if until else f"interactions until success: none won with the person in {n} games")
    for label, sessions in (("first session", firsts), ("all sessions before learning", all_before), ("after learning", lasts)):
        print(f"person's effort, {label}: {total(sessions, 'instructions')} instructions, "
              f"{total(sessions, 'words')} words, {total(sessions, 'answers')} yes/no answers "
              f"over {len(sessions)} sessions ({sum(s.won for s in sessions)} won)")


if __name__ == "__main__":
    main()
