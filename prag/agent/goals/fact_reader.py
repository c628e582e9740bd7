"""Goals read in open vocabulary: an instruction read into the facts that hold once it is done,
over the relations every family's scene graph has and the words of the instruction, for a family
that gives no goal schema (or whose schema's readers read nothing).

A reading is a sentence of facts, "apple is clean; apple in fridge", one of three shapes (a thing
in or on a place, a thing in a state, a thing held), its things and states words of the
instruction or kinds of what the room shows. It is read, in order:

- from a verified reading of a wording of the same template: the words that differ between the
  two wordings, phrase for phrase ("put a clean apple in fridge" / "put a clean mug in cabinet":
  `prag.agent.plans.reworded`), replaced in its facts, with no model;
- else by the LLM, under a grammar of those facts (or "none": the words ask for no state of
  things, and the agent plays on with no goal read rather than a wrong one).

What the facts mean as a goal (`as_goal_facts`) is what search plans to: with the family's own
action model where it plans to facts (`Domain.facts_model`), else with the one learned from the
store. A facts reading is verified as any reading is, by a win ending on one of its things.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from prag.agent.goals.readers import ACT_ON, ARTICLES, EXAMPLES, Context, Reading, Recall
from prag.agent.plans import reword, reworded
from prag.agent.protocol import Usage
from prag.envs.facts import NONE, SEPARATOR, read_facts
from prag.llm.base import LLM, Message

MOST_FACTS = 4
CONFIDENCE = 0.6  # the LLM's reading, as sure as the schema reader's
REWORDED = ACT_ON  # a verified reading re-worded: acted on with no model


def phrases(instruction: str) -> list[str]:
    """The instruction's words and pairs of words, articles left out: what a thing may be called."""
    words = [w for w in re.findall(r"[a-z0-9]+", instruction.lower()) if w not in ARTICLES]
    return list(dict.fromkeys([*words, *(" ".join(pair) for pair in zip(words, words[1:]))]))


def facts_grammar(things: Sequence[str], states: Sequence[str]) -> str:
    """A GBNF grammar of one line: "none", or up to MOST_FACTS facts over `things` and `states`."""
    def alternatives(options: Sequence[str]) -> str:
        return " | ".join(json.dumps(o) for o in dict.fromkeys(options))

    more = f'("{SEPARATOR}" fact)?' * (MOST_FACTS - 1)
    return "\n".join([
        f'root ::= "{NONE}" | fact {more}',
        'fact ::= ("two ")? thing " in " thing | thing " is " state | "you hold " thing',
        f"thing ::= {alternatives(things)}",
        f"state ::= {alternatives(states)}",
    ]) + "\n"


# Worked examples in abstract words only (the agent holds no world's vocabulary): the shapes are
# what they teach; small models follow examples given as turns of the chat far better than rules.
SHAPES = (
    ("place a warm X on the Y.", "X is warm; X in Y"),
    ("bring both Zs to the W.", "two Zs in W"),
    ("hold the X while the Y is on.", "you hold X; Y is on"),
    ("go to the X and put the Y there.", "Y in X"),
    ("say hello.", NONE),
)


def facts_prompt(context: Context, examples: Sequence[tuple[str, str]]) -> list[Message]:
    """The reader's prompt: the fact shapes, worked examples (verified readings after the abstract
    ones), what the room shows, the instruction."""
    system = (
        "Read each instruction into the facts that hold once it is done, on one line, separated by '; ': "
        "'THING in PLACE' (in or on), 'two THINGs in PLACE', 'THING is STATE', 'you hold THING'; "
        "or 'none'. Use the instruction's own words."
    )
    messages: list[Message] = [{"role": "system", "content": system}]
    for wording, sentence in [*SHAPES, *examples]:
        messages += [{"role": "user", "content": f"Instruction: {wording}"}, {"role": "assistant", "content": sentence}]
    seen = f"In view: {', '.join(dict.fromkeys(context.room_kinds))}.\n" if context.room_kinds else ""
    wrong = f"Not: {' | '.join(context.dropped)}.\n" if context.dropped else ""
    messages.append({"role": "user", "content": f"{seen}{wrong}Instruction: {context.instruction}"})
    return messages


@dataclass
class FactsReader:
    """The instruction read into facts (see the module's doc): a verified reading re-worded, else
    the LLM under a grammar of facts; only where no earlier reader read anything, and only a goal
    of one sentence (a task text of several, "Your task is to boil water. First, focus on the
    substance. ...", is instructions, read as such: prag.agent.skills.instructed)."""

    llm: LLM
    recall: Recall
    usage: Usage
    seed: int = 0
    name: str = "facts"

    def offer(self, context: Context, so_far: Sequence[Reading]) -> list[Reading]:
        if so_far or len(re.split(r"(?<=[.!?])\s+", context.instruction.strip())) > 1:
            return []
        verified = [hit for hit in self.recall(context.instruction) if read_facts(hit.sentence) is not None]
        for hit in verified:
            binding = reworded(hit.wording, context.instruction, hit.wording.lower())
            sentence = reword(hit.sentence, binding) if binding is not None else None
            if sentence is not None and sentence not in context.dropped:
                why = f"re-worded from the reading verified for {hit.wording!r}"
                return [Reading(sentence, self.name, REWORDED, why=why)]
        things = [*phrases(context.instruction), *context.room_kinds, *context.seen_kinds]
        states = [p for p in phrases(context.instruction) if " " not in p]
        if not things:
            return []
        examples = [(hit.wording, hit.sentence) for hit in verified[:EXAMPLES]]
        constrained = self.llm.supports_choices
        completion = self.llm.complete(
            facts_prompt(context, examples), max_tokens=48, seed=self.seed, stop=["\n"],
            grammar=facts_grammar(things, states) if constrained else None)
        self.usage.add(completion)
        sentence = " ".join(completion.text.strip().lower().split()).rstrip(".")
        if read_facts(sentence) is None or sentence in context.dropped:
            return []
        return [Reading(sentence, self.name, CONFIDENCE, why=f"read by {self.llm.name}")]
