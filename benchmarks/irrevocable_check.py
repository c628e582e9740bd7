"""Can the local model tell the right thing to focus on from the wrong one? The probe behind
prag.agent.skills.irrevocable's choice not to ask it.

    OMP_WAIT_POLICY=PASSIVE taskset -c 1 python benchmarks/irrevocable_check.py --store zs.db [--spec sciworld-test]

For each stored ScienceWorld episode that ended on its first action, a `focus on` (the wrong
thing the model chose), and the simulator's gold focus of the same variation (the right thing),
the model is shown the task and the first room and asked whether the thing is exactly what the
task asks for; printed is its logit for "yes" minus its logit for "no". A model that could check
its own choice would give the right things clearly higher margins than the wrong ones.
"""
from __future__ import annotations

import argparse
import re
import sqlite3

import numpy as np

from prag.envs.spec import load_spec
from prag.llm.local import LocalLLM
from prag.llm.model_files import MODELS, model_path

FOCUS = re.compile(r"focus on (?P<x>.+)")


def margin(llm: LocalLLM, goal: str, room: str, thing: str) -> float:
    messages = [{"role": "system", "content": "You are playing a text game.\nTask: " + goal},
                {"role": "user", "content": f"{room[:1500]}\n\nIs {thing} exactly the thing the task asks for? Answer yes or no."}]
    llama = llm._llama
    llama.reset()
    llama.eval(llm.prompt_tokens(messages))  # type: ignore[arg-type]
    logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))
    yes, no = (llama.tokenize(word, add_bos=False, special=False)[0] for word in (b"yes", b"no"))
    return float(logits[yes] - logits[no])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", required=True)
    parser.add_argument("--spec", default="sciworld-test")
    parser.add_argument("--model", default="1.5b", choices=("0.5b", "1.5b"))
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.store}?mode=ro", uri=True)
    ended = db.execute(
        "select e.task_id, e.goal, s0.observation, s1.action from episodes e "
        "join steps s0 on s0.episode_id = e.id and s0.t = 0 join steps s1 on s1.episode_id = e.id and s1.t = 1 "
        "where e.n_steps = 1 and s1.action like 'focus on %'").fetchall()
    source = load_spec(args.spec).open_unwrapped()
    tasks = {task.task_id: task for task in load_spec(args.spec).open().tasks()}
    llm = LocalLLM(model_path(MODELS[args.model]), n_ctx=4096)
    print("| task | wrong thing (chosen) | margin | right thing (gold) | margin |\n|---|---|---|---|---|")
    for task_id, goal, room, action in ended:
        gold = next((m["x"] for a in source.make(tasks[task_id]).oracle_plan() if (m := FOCUS.fullmatch(a))), None)
        wrong = FOCUS.fullmatch(action)["x"]  # type: ignore[index]
        right = f"{margin(llm, goal, room, gold):.2f}" if gold else "-"
        print(f"| {task_id} | {wrong} | {margin(llm, goal, room, wrong):.2f} | {gold or 'none'} | {right} |", flush=True)


if __name__ == "__main__":
    main()
