"""The goal's conditional instructions, decided by what was measured or by what the LLM knows.

ScienceWorld's "If the unknown substance B temperature is above -50.0 degrees celsius, place it in
the blue box. If the unknown substance B temperature is below -50.0 degrees celsius, place it in
the orange box." Each sentence "If <condition>, <instruction>" is a branch; one of them is to be
taken, once the goal's unconditional instructions are done. Which one:

- **measured**: a condition comparing a quantity of a thing with a bound ("the unknown substance b
  temperature is above -50.0 degrees celsius") is decided by the latest observation, after an
  action naming the thing, that reads that quantity in the bound's unit ("the thermometer measures
  a temperature of 28 degrees celsius"): a comparison of numbers, no model. Where none was read
  yet, the LLM is asked which admissible action measures it, among those naming the thing
  (and, where some also name a thing the instructions had the agent focus on, the thermometer,
  those alone), or none; where the action it names reads nothing, it is asked again without that
  action's verb (the 1.5B model named "connect thermometer to unknown substance" first), at most
  `MEASURE_ASKS` times;
- **ruled out**: where every branch but one names a thing an irrevocable step on which failed
  this very task before (a lost episode's fatal `focus on the red box`), the one left;
- **known**: otherwise, where a gamble may be taken (prag.agent.skills.irrevocable.gambling: the last
  tenth of the budget, with less score held than one of the branches left in 100), the LLM is
  asked once whether the first branch's condition holds ("Is the melting point of water above
  150.0 degrees celsius? Answer yes, no or unknown."), "it" read as the last thing the
  instructions named; "yes" takes it, "no" takes the other where there are two;
- **drawn**: where it says "unknown", a branch drawn at random among those left. A wrong draw
  fails the task, and the next round rules its branch out.

The branch taken is an instruction like the unconditional ones: a focus on the purple box
(prag.agent.skills.instructed) or a carry of what was focused on (prag.agent.skills.carry).
"""
from __future__ import annotations

import random
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from prag.agent.protocol import Usage
from prag.agent.skills.instructed import names
from prag.envs.base import Triple
from prag.envs.domain import Domain
from prag.llm import LLM, Message
from prag.text import without_article

_IF = re.compile(r"if (?P<condition>.+?), (?P<then>.+)")
_COMPARISON = re.compile(r"(?P<subject>.+?) is (?P<side>above|below) (?P<bound>-?\d+(?:\.\d+)?) (?P<units>(?P<unit>\w+).*)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")

# "the thermometer measures a temperature of 28 degrees celsius": one word for the quantity.
_READING = re.compile(r"(?P<quantity>\w+) of (?P<value>-?\d+(?:\.\d+)?) (?P<unit>\w+)")
_IT = re.compile(r"\bit\b")
UNKNOWN = "unknown"
NONE = "none"
MEASURE_ASKS = 3  # how many actions the LLM may name to measure one quantity
_SYSTEM = "You know the science of everyday things."


@dataclass(frozen=True)
class Comparison:
    """A condition comparing a quantity of a thing with a bound."""

    subject: str  # "the unknown substance b temperature"
    above: bool
    bound: float
    unit: str  # "degrees": the bound's unit, by its first word
    units: str = ""  # "degrees celsius": as the condition says it

    def holds(self, value: float) -> bool | None:
        """Whether `value` meets it; None at the bound itself (neither branch says)."""
        return None if value == self.bound else (value > self.bound) == self.above

    def read(self, called: set[str], observation: str) -> float | None:
        """The quantity as an observation reads it after an action naming things `called` so
        (prag.agent.skills.instructed.names): one of them is the thing, the observation's quantity is a
        word of the subject, in the bound's unit."""
        words = set(re.findall(r"\w+", self.subject))
        found = _READING.search(observation.lower())
        if found is None or found["unit"] != self.unit or found["quantity"] not in words:
            return None
        return float(found["value"]) if self.thing(found["quantity"]) in called else None

    @property
    def things(self) -> set[str]:
        """What the thing may be called, a word of the subject being the quantity's."""
        return {self.thing(word) for word in self.subject.split()} - {self.subject}

    def thing(self, quantity: str) -> str:
        """The subject without its article and the quantity's word: "unknown substance b"."""
        return without_article(" ".join(word for word in self.subject.split() if word != quantity))


@dataclass(frozen=True)
class Branch:
    condition: str  # "the melting point of water is above 150.0 degrees celsius"
    instruction: str  # "focus on the yellow box"
    compared: Comparison | None = None  # the condition as a comparison, where it is one


def _called(action: str, domain: Domain, triples: Sequence[Triple]) -> set[str]:
    """What the things an action names are called: its words for them and their own names."""
    return {name for thing in domain.entities(action) for name in names(thing, domain, triples)}


def branches(sentences: Sequence[str]) -> list[Branch]:
    """The goal's conditional sentences (lower case, their lead removed), as branches."""
    found = [_IF.fullmatch(sentence) for sentence in sentences]
    return [Branch(match["condition"], match["then"], comparison(match["condition"]))
            for match in found if match is not None]


def comparison(condition: str) -> Comparison | None:
    match = _COMPARISON.fullmatch(condition) or _COMPARISON.match(condition)
    if match is None:
        return None
    return Comparison(match["subject"], match["side"] == "above", float(match["bound"]), match["unit"], match["units"])


def question(condition: str, it: str | None) -> str:
    """The condition asked as a question: "it is electrically conductive" of sodium chloride is
    "Is sodium chloride electrically conductive?"."""
    subject, _, predicate = condition.partition(" is ")
    if it is not None:
        subject = _IT.sub(it, subject)
    return f"Is {subject} {predicate}?" if predicate else f"Is it true that {condition}?"


@dataclass
class Conditions:
    """One episode's conditional branches and which was taken."""

    llm: LLM
    usage: Usage
    branches: list[Branch]
    seed: int = 0
    taken: Branch | None = None
    answers: dict[str, str] = field(default_factory=dict)  # question -> the LLM's (last) answer
    tried: dict[str, list[str]] = field(default_factory=dict)  # measuring question -> the verbs it named

    @property
    def open(self) -> bool:
        return bool(self.branches) and self.taken is None

    def measured(self, steps: Sequence[tuple[str | None, str, Sequence[Triple]]], domain: Domain) -> Branch | None:
        """The branch the latest reading of a compared quantity decides, taken; None without one.
        `steps`: (action, the observation after it, the scene's triples then)."""
        for action, observation, triples in reversed(steps):
            if not action or _READING.search(observation.lower()) is None:
                continue  # no reading: the things the action names need not be looked up
            called = _called(action, domain, triples)
            for branch in self.branches:
                compared = branch.compared
                value = compared.read(called, observation) if compared is not None else None
                if compared is not None and value is not None and compared.holds(value):
                    self.taken = branch
                    return branch
        return None

    def measuring(self, admissible: Sequence[str], instructed: Sequence[str], domain: Domain,
                  triples: Sequence[Triple]) -> str | None:
        """The action the LLM says measures a compared quantity, among the admissible ones naming
        the thing, irrevocable ones left out (those also naming an instructed thing, where any
        do). Asked again while no reading came (this is called only then), without the verbs
        already tried ("connect" read nothing either way round), until it says none, nothing is
        left, or `MEASURE_ASKS` were asked. Things are known by their names (`_called`): the
        actions say "unknown substance" for the goal's "unknown substance B"."""
        for compared in (branch.compared for branch in self.branches if branch.compared is not None):
            asked = f"Which action measures {compared.subject}?"
            tried = self.tried.setdefault(asked, [])
            if self.answers.get(asked) == NONE or len(tried) >= MEASURE_ASKS:
                continue
            called = {action: _called(action, domain, triples) for action in admissible if domain.aimed_at(action) is None}
            naming = [a for a, names_ in called.items() if names_ & compared.things]
            tooled = [a for a in naming if called[a] & (set(instructed) - compared.things)]
            offered = [a for a in tooled or naming if a.split()[0] not in tried]
            if not offered:
                continue
            answer = self._ask(asked, f"Actions: {'; '.join(offered)}.\n{asked} Answer with the action, or {NONE}.",
                               choices=[*offered, NONE])
            chosen = next((a for a in offered if a.lower() == answer), None)
            tried.append(chosen.split()[0] if chosen is not None else NONE)
            return chosen
        return None

    def left(self, failed: Collection[str]) -> list[Branch]:
        """The branches not ruled out: one is ruled out where its instruction names a thing an
        irrevocable step `failed` this very task on before (prag.agent.sources.past_episodes.fatal_things: the
        other box was the right one)."""
        return [b for b in self.branches
                if not any(re.search(rf"\b{re.escape(thing)}\b", b.instruction) for thing in failed)]

    def ruled_out(self, failed: Collection[str]) -> Branch | None:
        """The branch left where every other was ruled out (`left`), taken; None otherwise."""
        left = self.left(failed)
        if len(left) == 1 and len(self.branches) > 1:
            self.taken = left[0]
            return self.taken
        return None

    def won_by(self, won: Collection[str]) -> Branch | None:
        """The branch a win of this very task took (its instruction names a thing that win's
        answer was: prag.agent.sources.past_episodes.won_things), taken; None where none or more did."""
        took = [b for b in self.branches if any(re.search(rf"\b{re.escape(thing)}\b", b.instruction) for thing in won)]
        if len(took) == 1:
            self.taken = took[0]
            return self.taken
        return None

    def drawn(self, left: Sequence[Branch], goal: str) -> Branch:
        """A branch drawn at random among those `left`, where nothing else decided one and a
        gamble pays (prag.agent.skills.irrevocable.gambling): seeded by the goal, so that a later round
        draws alike unless its draw was ruled out."""
        self.taken = random.Random(f"{self.seed}:{goal}").choice(list(left))
        return self.taken

    def known(self, it: str | None) -> Branch | None:
        """The branch the LLM's knowledge takes, asked once; None for "unknown". A compared
        quantity is asked as a number and compared here ("What is the melting point of water,
        in degrees celsius?"); another condition as yes or no."""
        first = self.branches[0]
        if first.compared is not None:
            return self._known_quantity(first.compared, it)
        asked = question(first.condition, it)
        if asked in self.answers:
            return None
        answer = self._ask(asked, f"{asked} Answer yes, no or {UNKNOWN}.", choices=["yes", "no", UNKNOWN])
        if answer == "yes":
            self.taken = first
        elif answer == "no" and len(self.branches) == 2:
            self.taken = self.branches[1]
        return self.taken

    def _known_quantity(self, compared: Comparison, it: str | None) -> Branch | None:
        subject = _IT.sub(it, compared.subject) if it is not None else compared.subject
        asked = f"What is {subject}, in {compared.units}?"
        if asked in self.answers:
            return None
        # In its own words: held to a number, the 1.5B model began with the likeliest digit (water
        # "100"); free, it said "The melting point of water is 0 degrees Celsius."
        answer = self._ask(asked, f"{asked} Answer in one short sentence, or say {UNKNOWN}.")
        said = _NUMBER.search(answer.partition(" is ")[2] or answer)
        if UNKNOWN in answer or said is None:
            return None
        value = float(said[0])
        for branch in self.branches:
            other = branch.compared
            if other is not None and other.subject == compared.subject and other.holds(value):
                self.taken = branch
        return self.taken

    def _ask(self, asked: str, prompt: str, choices: list[str] | None = None) -> str:
        messages: list[Message] = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]
        completion = self.llm.complete(messages, choices=choices, max_tokens=48, seed=self.seed)
        self.usage.add(completion)
        answer = completion.text.strip().rstrip(".").lower()  # read as words, never evaluated
        self.answers[asked] = answer
        return answer
