"""Can the local model tell which thing in a room is of the kind a ScienceWorld find-X task names?

    OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/kind_questions.py [--model local] [--thing-by-thing]
        [--states] [--verify] [--house]

For each of the four find-X tasks ("find a(n) animal", "plant", "living thing", "non-living
thing"), in its test variation drawn as `sciworld-test` draws it and in train variation 0, every
room of the house is read from the simulator's object tree (what stands there and what is in open
containers, terminals, air and doors left out) and the model is asked, with one constrained
choice over the room's things and "none", "Which one of them is a(n) {kind}?". Prints the answer,
the seconds, the things the simulator holds alive (its `propLife`: the truth for "living thing")
and the room's things. With --thing-by-thing, asks instead "Is a {thing} a(n) {kind}?" (yes/no)
of each thing. With --states the things alive are shown so ("moth (alive)"), with --verify the
thing named is confirmed ("Is the moth (alive) a(n) living thing?", a "no" counting as none), as
prag.agent.skills.described asks; with --house one question is asked over the whole house. This
is the evidence for "A kind the task names" in docs/records/sciworld-learning.md: a focus on the
wrong thing fails the task, so a kind is read from the words first, and asked as the agent asks.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Mapping
from typing import Any

from prag.envs.sciworld.engine import simulator
from prag.envs.sciworld.env import variations
from prag.llm import make_llm

KINDS = {"find-animal": "animal", "find-plant": "plant", "find-living-thing": "living thing",
         "find-non-living-thing": "non-living thing"}
SYSTEM = "You know what kinds of thing there are in the world."


def things(room: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """(name, alive) of what stands in the room and in its open containers."""
    found: list[tuple[str, bool]] = []

    def walk(node: Mapping[str, Any]) -> None:
        for child in node["contents"].values():
            name = child["name"]
            if child.get("isDeleted") or name.startswith("terminal") or name in ("agent", "air", "anode", "cathode") \
                    or "door" in name:
                continue
            found.append((name, child.get("propLife") is not None))
            container = child.get("propContainer")
            if container and container.get("isOpen"):
                walk(child)

    walk(room)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="a --llm spec (default: local, the 1.5B model)")
    parser.add_argument("--thing-by-thing", action="store_true", help="ask yes/no of each thing instead")
    parser.add_argument("--house", action="store_true",
                        help="ask once over the whole house's things, with no \"none\"")
    parser.add_argument("--states", action="store_true",
                        help="show the things alive as the scene reads them: \"bee (alive)\" (as prag.agent.skills.described does)")
    parser.add_argument("--verify", action="store_true",
                        help="ask \"Is the {thing} a(n) {kind}?\" (yes/no) of the thing named, and count \"no\" as none")
    args = parser.parse_args()
    llm = make_llm(args.model, n_threads=1)
    sim = simulator()
    for task, kind in KINDS.items():
        test = sorted(random.Random(f"0/{task}").sample(variations(task, "test"), 1))  # as sciworld-test draws
        for variation in test + [variations(task, "train")[0]]:
            sim.load(task, variation, "")
            tree = sim.getObjectTree()
            tree = json.loads(tree) if isinstance(tree, str) else tree
            rooms = [(room["name"], things(room)) for room in tree["contents"].values()]
            if args.house:
                rooms = [("the house", [found for _, seen in rooms for found in seen])]
            for where, seen in rooms:
                names = sorted({name for name, _ in seen})
                if not names:
                    continue
                alive = sorted({name for name, living in seen if living})
                shown = [f"{name} (alive)" if args.states and name in alive else name for name in names]
                start = time.perf_counter()
                if args.thing_by_thing:
                    said = [name for name in names if ask(llm, f"Is a {name} a(n) {kind}? Answer yes or no.",
                                                          ["yes", "no"]) == "yes"]
                    answer = f"yes to {said}"
                else:
                    none = "" if args.house else ", or none"
                    answer = ask(llm, f"Things {'seen' if args.house else 'here'}: {', '.join(shown)}.\n"
                                      f"Which one of them is a(n) {kind}? Answer with its name{none}.",
                                 names + ([] if args.house else ["none"]))
                    if args.verify and answer in names:
                        shown_answer = shown[names.index(answer)]
                        if ask(llm, f"Is the {shown_answer} a(n) {kind}? Answer yes or no.", ["yes", "no"]) == "no":
                            answer = f"none (said {answer}, then no)"
                print(f"{task} variation {variation}, {where}: {answer} ({time.perf_counter() - start:.1f} s)"
                      f"  alive: {alive}  things: {names}", flush=True)


def ask(llm: Any, question: str, choices: list[str]) -> str:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    return str(llm.complete(messages, choices=choices, max_tokens=16).text)


if __name__ == "__main__":
    main()
