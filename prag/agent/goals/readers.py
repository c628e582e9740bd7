"""Goal readers: a person's instruction read into a formal goal, by a chain of sources.

People do not speak in templates: "Put a clean bowl in a cabinet.", "rinse the bowl and put it
away". Search, find-X and plans need a formal goal (`prag.envs.goals`), so before the first step
the instruction is read by a chain of readers, each offering readings with its name and a
confidence, in order (the mediator's pattern, here for goals):

- `template`: the family's own goal sentence, read exactly (free);
- `experience`: a reading verified before (an episode won under it, or a person confirmed it) for
  a wording this near (P-RAG's retrieval, here for goals); a near-identical wording is read as it
  was then, with no LLM call;
- `llm`: the instruction, the room's kinds and the nearest verified readings as examples, decoded
  under a grammar of the family's goal sentences with the values this room allows;
- `facts`: where none of these read anything (a family with no goal schema), the instruction in
  open vocabulary, as the facts that hold once it is done (prag.agent.goals.fact_reader);
- `person`: "I read this as: ... Right?" yes, no, or the right words (Soar ITL's yes/no).

The chain stops at the first reading confident enough to act on; the readings it gathered are
the hypotheses, best first. When the episode shows the reading cannot be right, the agent drops
it with the reason and takes the next (`Readings.revise`), asking the chain again, with what was
dropped and the kinds seen in the room, when none is left.
"""
from __future__ import annotations

import functools
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from prag.agent.person import Person
from prag.agent.protocol import Usage
from prag.envs.domain import Domain
from prag.envs.facts import read_facts
from prag.envs.goals import FormalGoal, GoalSchema, Mention
from prag.llm.base import LLM, Message
from prag.retrieval.readings import ReadingHit
from prag.store.episode_extra import Effort, GoalReading, Hypothesis

READERS = ("template", "experience", "words", "llm", "facts", "person")
REWARD = "reward"  # the reader of a goal a win showed the meaning of (prag.agent.goals.milestones.won_reading)
IN_FACTS = ("facts", REWARD)  # readings in open vocabulary: a family's own sentences reuse none of them
ACT_ON = 0.9  # a reading this confident ends the chain: the template, a near-identical wording, a person
ARTICLES = ("a", "an", "the", "some")
EXAMPLES = 3  # verified readings shown to the LLM reader
# ... whose wording is at least this near (MiniLM cosine): by default any not opposed to it. A floor of
# 0.8 (paraphrases only) read 9 fewer of valid_seen's 140 crowd wordings right after training on
# valid_train (71 against 80; docs/records/goals_in_words.md). A floor stays settable to measure it again.
EXAMPLE_SIMILARITY = 0.0
LLM_CONFIDENCE = 0.6
LLM_READINGS = 2  # the LLM reader's readings per call: its best, then the next it could mean
NEXT_LLM_READING = 0.7  # each later reading of a call is this much less sure than the one before
OR = "Or: "  # how the LLM reader's next reading begins its line
WORDS_CONFIDENCE = 0.5  # below the LLM's: the words reader knows no grammar of the sentence
SIMILAR_CONFIDENCE = 0.45  # another wording's verified reading, where these words name no kind
WORD_READINGS = 4  # the most readings the words reader offers
RULED_OUT = 3  # readings the world's rules rule out dropped in a row, at most (past them one is played)
MEANT = 2  # verified readings in which words naming several kinds meant one, for that one to be read with no LLM call
# What words meant is learned from the nearest verified readings whose wordings use such words (or
# such cues), up to SENSES of them, found among the POOL nearest of all: of the nearest 5 wordings
# overall few share a given word, so after training on valid_train's crowd "pan" went unlearned.
SENSES = 5
ODDS = 3  # ... and as many times as all other meanings together: what is left stays a hypothesis for revision
POOL = 100


@dataclass(frozen=True)
class Reading:
    """One hypothesis of what an instruction asks: its canonical sentence (what search, find-X
    and plans read), its formal goal (None where the family has no schema), who read it and how
    sure they were."""

    sentence: str
    source: str
    confidence: float
    goal: FormalGoal | None = None
    why: str = ""

    def as_dict(self) -> dict[str, Any]:
        formal = self.goal.as_dict() if self.goal else {}
        return {"sentence": self.sentence, "source": self.source, "confidence": round(self.confidence, 3),
                "task": formal.get("task"), "slots": formal.get("slots"), "why": self.why}

    def hypothesis(self, dropped: str | None = None) -> Hypothesis:
        """The reading as the episode keeps it, with why it was dropped (None: it was not)."""
        return Hypothesis(**self.as_dict(), dropped=dropped)


class Recall(Protocol):
    """instruction -> the `k` (by default the store's own number) nearest verified readings, best
    first; the runner binds the store and visibility."""

    def __call__(self, instruction: str, k: int | None = None) -> Sequence[ReadingHit]: ...


def no_recall(instruction: str, k: int | None = None) -> list[ReadingHit]:
    return []


@dataclass
class Context:
    """What readers read from: the instruction, the family, the room's kinds, what was dropped
    and why, and what the episode has seen (kinds of thing), for a revision."""

    instruction: str
    domain: Domain
    room_kinds: list[str]
    dropped: dict[str, str] = field(default_factory=dict)  # sentence -> why it was dropped
    excluded: dict[str, set[str]] = field(default_factory=dict)  # slot -> values shown wrong
    seen_kinds: list[str] = field(default_factory=list)  # kinds of thing seen in this room so far

    @property
    def schema(self) -> GoalSchema | None:
        return self.domain.schema()


class GoalReader(Protocol):
    """A source of readings: offers its readings of the context's instruction, seeing those the
    readers before it offered (`so_far`, best first)."""

    name: str

    def offer(self, context: Context, so_far: Sequence[Reading]) -> list[Reading]: ...


@dataclass
class TemplateReader:
    """The family's own goal sentences, read exactly. The sentence acted on is the instruction
    itself where the family reads it as the canonical sentence (every later reader of goals reads
    the family's sentences as they are); else, for words only the schema reads (the grid's "stick
    the milk and eggs in the fridge and shut it", a plural, a kind in words), the canonical one."""

    name: str = "template"

    def offer(self, context: Context, so_far: Sequence[Reading]) -> list[Reading]:
        schema = context.schema
        if schema is not None:
            goal = schema.read(context.instruction)  # the family's own sentence names what its room has
            if goal is None:
                return []
            needs = context.domain.needs
            as_given = needs(context.instruction) == needs(goal.sentence)
            return [Reading(context.instruction if as_given else goal.sentence, self.name, 1.0, goal)]
        if context.domain.needs(context.instruction):
            return [Reading(context.instruction, self.name, 1.0)]
        return []


@dataclass
class ExperienceReader:
    """Verified readings of wordings like this one: reused as they are for a near-identical wording
    (the same words but for case, punctuation and articles) whose values fit this room. Others are
    hypotheses as sure as the wordings are similar where the words name no kind (else what such
    words meant orders the words reader's readings): wordings that differ in one noun ("the bowl"
    / "the box") are near in any sentence embedding."""

    recall: Recall
    name: str = "experience"

    def offer(self, context: Context, so_far: Sequence[Reading]) -> list[Reading]:
        readings = []
        schema = context.schema
        named = schema is not None and bool(schema.mentions(context.instruction))
        for hit in self.recall(context.instruction):
            if hit.reader in IN_FACTS:
                continue  # the facts reader's to re-word, for a goal of one sentence alone
            goal = _fitting(context, hit.sentence)
            if goal is None and schema is not None:
                continue  # a receptacle this room does not have, or a reading shown wrong here
            why = f"verified for {hit.wording!r} (similarity {hit.similarity:.2f})"
            if words(hit.wording) == words(context.instruction):
                readings.append(Reading(hit.sentence, self.name, 1.0, goal, why))
            elif not named:  # where the words name kinds, what they meant before orders the words reader's readings
                readings.append(Reading(hit.sentence, self.name, hit.similarity * SIMILAR_CONFIDENCE, goal, why))
        return readings


@dataclass
class WordsReader:
    """The kinds the instruction's words name (the schema's lexicon, `GoalSchema.mentions`) put
    into the forms its cue words ask for, with no model: the thing is the first kind of thing
    named, the place the last place named that nothing is taken from ("from the sink") nor
    named to say where another is ("the cabinet under the sink"); a slot
    people leave unsaid (the lamp) takes each of the kinds allowed. Words naming several kinds
    ("table") give a reading for each kind this room has, likeliest first: first the kind such
    words meant in the verified readings of the nearest wordings (`recall`; KIT's learning from
    its dialogues), and where they meant one kind far more often than any other (`MEANT`,
    `ODDS`), that one as read. Cue words naming several tasks are learned the same way."""

    recall: Recall = no_recall
    name: str = "words"

    def offer(self, context: Context, so_far: Sequence[Reading]) -> list[Reading]:
        schema = context.schema
        if schema is None or schema.lists or schema.ordered is not None:
            return []
        values = _allowed(schema, context)
        named_here = {kind for kinds in values.values() for kind in kinds}
        found = schema.mentions(context.instruction)
        cued = schema.cued(context.instruction)
        # the nearest verified readings, each as the kinds its words name, the tasks its cues name and its goal
        verified = [Verified(schema.mentions(hit.wording), schema.cued(hit.wording), goal)
                    for hit in self.recall(context.instruction, POOL) if (goal := schema.read(hit.sentence)) is not None]
        mentions, decided = _as_verified(found, verified, named_here)
        unnamed = functools.partial(self._unnamed, context, values, [v.goal for v in verified])
        tasks, task_decided = _tasks_as_verified(cued, verified) if cued else (list(schema.templates)[:1], False)
        tasks += [task for task in _on_the_way(schema, mentions) if task not in tasks]
        things = [m for m in mentions if not m.leaving]
        # "put the knives in a drawer" asks for more than one; "books go on the shelf: put the book there", one
        if (schema.plural_task and things and schema.plural_task not in tasks
                and all(m.plural for m in things if m.kinds == things[0].kinds)):
            tasks = [*tasks, schema.plural_task] if cued else [schema.plural_task]
        readings: list[Reading] = []
        named = ", ".join(m.words for m in mentions)
        meant = [f"{m.words!r} {m.kinds[0]}" for m, d, f in zip(mentions, decided, found) if d.kinds != f.kinds]
        if task_decided:
            meant.append(f"the cues {tasks[0]}")
        learned = f"; in verified readings of the nearest wordings {', '.join(meant)}" if meant else ""
        for task in tasks:
            slots = schema.slots_of(task)
            choices = _choices(slots, mentions, values, unnamed, beside=True)
            if choices is None:
                continue
            # One task (or the one verified readings gave the cues), and one kind for every slot but
            # those play settles (the lamp), or the kind verified readings gave the words: acted on
            # with no LLM call.
            as_read = _choices(slots, decided, values, unnamed)
            sure = (len(tasks) == 1 or task_decided and task == tasks[0] and set(tasks) == set(cued)) and as_read is not None and all(
                len(kinds) == 1 for slot, kinds in zip(slots, as_read) if slot not in schema.unsaid)
            for combination in itertools.product(*choices):
                goal = _fitting(context, schema.sentence(task, dict(zip(slots, combination))))
                if goal is not None and len(readings) < WORD_READINGS:
                    confidence = ACT_ON if sure and not readings else WORDS_CONFIDENCE * 0.9 ** len(readings)
                    readings.append(Reading(goal.sentence, self.name, confidence, goal, f"the words name {named}{learned}"))
        return readings

    @staticmethod
    def _unnamed(context: Context, values: Mapping[str, Sequence[str]], verified: Sequence[FormalGoal], slot: str,
                 chosen: list[list[str]]) -> list[str]:
        """The values of a slot the words leave unnamed: every one, for a slot people leave
        unsaid (the lamp); for a place ("put the mug away"), the room's places the world may keep
        such a thing in (the family's placement rules), which play tries in turn, first those
        the `verified` readings of the nearest wordings put such a thing in, the most often first."""
        schema = context.schema
        if schema is not None and slot in schema.unsaid:
            return list(values.get(slot, ()))
        if schema is None or slot not in schema.room_slots or not chosen:
            return []
        thing = chosen[0][0]
        such = [goal for goal in verified if goal.slots and goal.slots[0][1] == thing][:SENSES]
        put = Counter(dict(goal.slots).get(slot) for goal in such)
        places = [place for place in values.get(slot, ()) if context.domain.search_cost(place, thing) != 2]
        return sorted(places, key=lambda place: -put[place])


@dataclass(frozen=True)
class Verified:
    """A verified reading as the words reader learns from it: the kinds its wording's words name,
    the tasks its cues name, and the goal it was read as."""

    mentions: list[Mention]
    cued: list[str]
    goal: FormalGoal


def _as_verified(mentions: list[Mention], verified: Sequence[Verified],
                 allowed: set[str]) -> tuple[list[Mention], list[Mention]]:
    """The mentions with the kinds of words naming several ordered by how often the same words
    meant each in the nearest `SENSES` verified readings whose wordings use them, the most first,
    but for a kind whose own name the words are; and the mentions as read where the words meant
    their first kind, allowed here, in at least `MEANT` of them and `ODDS` times as many as all others."""
    ordered, decided = list(mentions), list(mentions)
    for n, mention in enumerate(mentions):
        if len(mention.kinds) < 2:
            continue
        using = [v for v in verified if any(m.kinds == mention.kinds for m in v.mentions)][:SENSES]
        meant = Counter(kind for v in using for kind in {value for _, value in v.goal.slots} & set(mention.kinds))
        if not meant:
            continue
        # a kind's own name ("pot") keeps that kind first, whatever else people meant by it
        first = mention.kinds[:1] if mention.own else ()
        ordered[n] = replace(mention, kinds=(*first, *sorted(mention.kinds[len(first):], key=lambda kind: -meant[kind])))
        kind = _decisive(meant)
        decided[n] = (replace(mention, kinds=(kind,)) if kind is not None and kind in allowed
                      and kind == ordered[n].kinds[0] else ordered[n])
    return ordered, decided


def _tasks_as_verified(cued: list[str], verified: Sequence[Verified]) -> tuple[list[str], bool]:
    """The tasks cue words name ("heated ... to cool down": heat, cool) ordered by how often the
    nearest `SENSES` verified readings whose wordings cue the same tasks were each, the most first;
    and whether one was, in at least `MEANT` of them and `ODDS` times as many as all others."""
    if len(cued) < 2:
        return list(cued), False
    meant = Counter(v.goal.task for v in [v for v in verified if v.cued == cued][:SENSES] if v.goal.task in cued)
    ordered = sorted(cued, key=lambda task: -meant[task])
    return ordered, _decisive(meant) is not None


def _decisive(meant: Counter[str]) -> str | None:
    """The meaning verified readings gave at least `MEANT` times and `ODDS` times as often as all
    others together, if one was."""
    if not meant:
        return None
    (best, times), *others = meant.most_common()
    return best if times >= MEANT and times >= ODDS * sum(t for _, t in others) else None


def _on_the_way(schema: GoalSchema, mentions: Sequence[Mention]) -> list[str]:
    """The task types asked for by places that change things (`GoalSchema.changers`) named on the
    way to the last place, neither taken from nor named beside another: "put it in the fridge,
    then back in the microwave" cools."""
    kept = [m for m in mentions if not m.leaving and not m.near]
    return list(dict.fromkeys(schema.changers[m.kinds[0]] for m in kept[:-1] if m.kinds[0] in schema.changers))


def _choices(slots: Sequence[str], mentions: Sequence[Mention], values: Mapping[str, Sequence[str]],
             unnamed: Callable[[str, list[list[str]]], list[str]], beside: bool = False) -> list[list[str]] | None:
    """The kinds each of a task's slots may take from the kinds mentioned: the first slot (the
    thing) from the first mention naming a kind it allows, each later one (the place) from the
    last other mention not left, then (`beside`) the places named beside it, which people also
    mix up ("the lotion on the sink underneath the cabinet" was in the cabinet); a slot no
    mention fills takes the `unnamed` values, and when there are none the words fill no goal of
    the task (None)."""
    used: set[int] = set()
    choices: list[list[str]] = []
    for n, slot in enumerate(slots):
        allowed = set(values.get(slot, ()))
        # the place: one named for itself, else one named beside another ("put it by the toilet")
        order = list(enumerate(mentions)) if n == 0 else sorted(
            reversed(list(enumerate(mentions))), key=lambda pair: pair[1].near)
        found = next(((i, [k for k in m.kinds if k in allowed]) for i, m in order
                      if i not in used and (n == 0 or not m.leaving) and any(k in allowed for k in m.kinds)), None)
        if found is not None:
            used.add(found[0])
            near = [k for i, m in order if beside and n > 0 and m.near and i not in used and not m.leaving
                    for k in m.kinds if k in allowed] if not mentions[found[0]].near else []
            choices.append(list(dict.fromkeys([*found[1], *near])))
        elif kinds := unnamed(slot, choices):
            choices.append(kinds)
        else:
            return None
    return choices


def words(text: str) -> list[str]:
    """A wording's words as compared for reuse: lower case, no punctuation, no articles."""
    return [w for w in re.findall(r"[^\W_]+", text.lower()) if w not in ARTICLES]


@dataclass
class LLMReader:
    """The LLM reads the instruction into one of the family's goal sentences, under a grammar of
    them with the values this room allows, the nearest verified readings as examples."""

    llm: LLM
    recall: Recall
    usage: Usage
    seed: int = 0
    name: str = "llm"
    example_similarity: float = EXAMPLE_SIMILARITY

    def offer(self, context: Context, so_far: Sequence[Reading]) -> list[Reading]:
        schema = context.schema
        if schema is None:
            return []
        mentions = schema.mentions(context.instruction)
        values = _allowed(schema, context, mentions)
        if not all(values.get(slot) for slot in _slots_of(schema.templates)):
            return []
        examples = [hit for hit in self.recall(context.instruction) if hit.similarity >= self.example_similarity][:EXAMPLES]
        prompt = reading_prompt(schema, context, values, examples, mentions)
        # Under the grammar the model writes its best reading, then the next it could mean ("Or: ...");
        # a server that cannot enforce a grammar gives its best only.
        grammar = goal_grammar(_forms(schema, context), values, schema.spoken(), frozenset(schema.lists), LLM_READINGS)
        constrained = self.llm.supports_choices
        completion = self.llm.complete(prompt, max_tokens=32 * (LLM_READINGS if constrained else 1),
                                       grammar=grammar if constrained else None, stop=None if constrained else ["\n"],
                                       seed=self.seed)
        self.usage.add(completion)
        first, *others = completion.text.split("\n")
        readings: list[Reading] = []
        for n, sentence in enumerate([first, *(line.removeprefix(OR) for line in others if line.startswith(OR))]):
            goal = _fitting(context, sentence)
            if goal is not None and all(goal.sentence != r.sentence for r in readings):
                why = f"read by {self.llm.name}" + (f", its reading {n + 1}" if n else "")
                readings.append(Reading(goal.sentence, self.name, LLM_CONFIDENCE * NEXT_LLM_READING ** n, goal, why))
        return readings


@dataclass
class PersonReader:
    """A person confirms the best reading so far ("I read this as: ... Right?"): yes, no, or the
    right words, read by the `words` chain; their yes or words make a reading to act on."""

    person: Person
    effort: Effort
    words: Callable[[Context], list[Reading]]
    name: str = "person"

    def offer(self, context: Context, so_far: Sequence[Reading]) -> list[Reading]:
        best = next((r for r in so_far if r.sentence not in context.dropped), None)
        reply = self.person.confirm_reading(context.instruction, best.sentence if best else None)
        if reply is True and best is not None:
            self.effort.answered()
            return [Reading(best.sentence, self.name, 1.0, best.goal, f"confirmed ({best.source})")]
        if isinstance(reply, str) and reply.strip():
            self.effort.said(reply)
            told = Context(reply.strip(), context.domain, context.room_kinds)
            readings = self.words(told)
            return [Reading(r.goal.sentence if r.goal else r.sentence, self.name, 1.0, r.goal, f"told: {reply.strip()!r}")
                    for r in readings[:1]]
        if reply is False:
            self.effort.answered()
            if best is not None:
                context.dropped[best.sentence] = "the person said no"
        return []


def read(readers: Sequence[GoalReader], context: Context) -> list[Reading]:
    """The chain: each reader offers in turn until a reading is confident enough to act on.
    The readings offered, without repeats or dropped ones, best first: those to act on first,
    then in the chain's order."""
    offered: list[Reading] = []
    for reader in readers:
        offered += [r for r in reader.offer(context, _ranked(offered, context)) if r.sentence not in context.dropped]
        if any(r.confidence >= ACT_ON for r in offered):
            break
    return _ranked(offered, context)


def _ranked(offered: Sequence[Reading], context: Context) -> list[Reading]:
    """Readings offered, one per sentence, best first, without those dropped."""
    unique: dict[str, Reading] = {}
    for reading in offered:
        if reading.sentence in context.dropped:  # a later reader (the person) may drop one
            continue
        other = unique.get(reading.sentence)
        if other is None:
            unique[reading.sentence] = reading
            continue
        # Readers that agree make a reading surer than either, as independent evidence would; it
        # is the surer reader's.
        base, second = (other, reading) if other.confidence >= reading.confidence else (reading, other)
        unique[reading.sentence] = replace(
            base, confidence=1 - (1 - base.confidence) * (1 - second.confidence),
            why=f"{base.why}; {second.source} agrees" if base.source != second.source else base.why)
    return sorted(unique.values(), key=lambda r: -r.confidence)


@dataclass
class Readings:
    """An episode's hypotheses about its goal: the one acted on, and the history of each dropped
    one with why (kept in the episode's extra)."""

    readers: Sequence[GoalReader]
    context: Context
    hypotheses: list[Reading] = field(default_factory=list)
    history: list[Hypothesis] = field(default_factory=list)

    def start(self) -> Reading | None:
        self.hypotheses = read(self.readers, self.context)
        ruled_out = self._ruled_out()
        if ruled_out:  # the next reading, or the chain read again told why
            self.revise(ruled_out, {}, [])
        return self.current

    def _ruled_out(self) -> str | None:
        """Why the world never has the current reading's goal, if it never does: its thing is never
        in or on its place (ALFWorld's placement rules: a key chain is never in a cabinet), or never
        changed as the goal asks (a soap bottle is never cleaned), so that "hold the key chain and
        switch on the lamp" read as putting it in a cabinet is dropped before a step is played."""
        current, schema, domain = self.current, self.context.schema, self.context.domain
        if current is None or current.goal is None or schema is None:
            return None
        slots = schema.slots_of(current.goal.task)
        values = dict(current.goal.slots)
        thing = values.get(slots[0]) if slots else None
        if thing is not None and (done := domain.never_done_to(current.goal.task, thing)) is not None:
            return f"a {thing} is never {done}"
        if len(slots) < 2 or slots[-1] not in schema.room_slots:
            return None
        thing, place = values[slots[0]], values[slots[-1]]
        return f"a {thing} is never in or on a {place}" if domain.search_cost(place, thing) == 2 else None

    @property
    def current(self) -> Reading | None:
        return self.hypotheses[0] if self.hypotheses else None

    def revise(self, why: str, wrong: dict[str, str], seen_kinds: Sequence[str], *,
               rules_left: int = RULED_OUT) -> Reading | None:
        """Drop the current reading for `why` (`wrong`: its slot values shown wrong), and take the
        next hypothesis: the same goal with the one kind of a wrong slot the room shows, where only
        one fits; else the next reading kept; else a new reading with what was dropped and what
        the room shows. A next one the world's rules rule out is dropped in turn, `rules_left`
        times at most (each may cost a reading)."""
        dropped = self.hypotheses.pop(0) if self.hypotheses else None
        if dropped is not None:
            self.context.dropped[dropped.sentence] = why
            self.history.append(dropped.hypothesis(why))
        for slot, value in wrong.items():
            self.context.excluded.setdefault(slot, set()).add(value)
        self.context.seen_kinds = list(seen_kinds)
        shown = self._seen_instead(dropped, wrong)
        self.hypotheses = ([shown] if shown else []) + [
            r for r in self.hypotheses if _fitting(self.context, r.sentence) is not None or _facts_reading(r, self.context)
        ]
        if not self.hypotheses:
            self.hypotheses = read([r for r in self.readers if r.name != "template"], self.context)
        ruled_out = self._ruled_out()
        if ruled_out and rules_left > 0:  # a reading the world never has is no step's worth
            return self.revise(ruled_out, {}, seen_kinds, rules_left=rules_left - 1)
        return self.current

    def unsaid(self, seen_kinds: Sequence[str]) -> dict[str, str]:
        """Slots people leave unsaid (`GoalSchema.unsaid`) whose kind in the current reading the
        room does not show while it shows another of the slot's kinds: slot -> the kind read."""
        schema, current = self.context.schema, self.current
        if schema is None or current is None or current.goal is None:
            return {}
        kinds = schema.kinds()
        return {
            slot: value for slot, value in current.goal.slots
            if slot in schema.unsaid and value not in seen_kinds and any(k in seen_kinds for k in kinds[slot])
        }

    def _seen_instead(self, dropped: Reading | None, wrong: dict[str, str]) -> Reading | None:
        """The dropped reading with each wrong slot given the one kind of it the room showed."""
        schema = self.context.schema
        if schema is None or dropped is None or dropped.goal is None or not wrong:
            return None
        slots = dict(dropped.goal.slots)
        for slot in wrong:
            shown = [k for k in schema.kinds().get(slot, ()) if k in self.context.seen_kinds
                     and k not in self.context.excluded.get(slot, set())]
            if len(shown) != 1:
                return None
            slots[slot] = shown[0]
        goal = schema.goal(dropped.goal.task, slots)
        if _fitting(self.context, goal.sentence) is None:
            return None
        return Reading(goal.sentence, dropped.source, dropped.confidence, goal, "the kind the room shows")

    def fits(self, last_action: str | None) -> bool:
        """Whether a win ending with `last_action` bears the current reading out: the action names
        what finishes the reading's goal (its sentence's last slot, the receptacle; for a look,
        the lamp or the thing). A game won while the
        LLM played another goal ("hold the key chain and switch on the lamp" read as putting it in a
        cabinet, won by turning on the lamp) verifies nothing about the words. A reading with no
        formal goal is the family's own sentence: a win bears it out."""
        current, schema = self.current, self.context.schema
        facts = read_facts(current.sentence) if current is not None and current.goal is None else None
        if facts is not None:
            kinds = facts.kinds  # a facts reading: its win ends on one of its things
        elif current is None or current.goal is None or schema is None:
            return True
        else:
            kinds = schema.finishing_values(current.goal)
        return last_action is not None and any(
            re.search(rf"\b{re.escape(kind)}\b", last_action.lower()) is not None for kind in kinds)

    def record(self, last_action: str | None = None) -> GoalReading:
        """The readings as the episode keeps them, the current one first among its fields."""
        current = self.current
        return GoalReading(
            instruction=self.context.instruction,
            **(current.as_dict() if current else {}),
            fits=self.fits(last_action),
            hypotheses=self.history + [r.hypothesis() for r in self.hypotheses],
        )


# --- the LLM reader's prompt and grammar -------------------------------------------------------


def _forms(schema: GoalSchema, context: Context) -> dict[str, str]:
    """The goal forms a reading may take: those of the task types the instruction's words cue
    (`GoalSchema.cues`; the prompt's rules said so too, and the 1.5B model still read "pick up the
    pen and turn on the lamp" as putting the pen away), unless a reading of those types was
    already shown wrong; else every form."""
    cued = schema.cued(context.instruction)
    dropped = {goal.task for sentence in context.dropped if (goal := schema.read(sentence)) is not None}
    if not cued or dropped & set(cued):
        return dict(schema.templates)
    return {task: form for task, form in schema.templates.items() if task in cued}


def _allowed(schema: GoalSchema, context: Context, mentions: Sequence[Mention] = ()) -> dict[str, list[str]]:
    """Slot -> the values a reading may give it here: the room's (for room slots), those the
    words name where they name any (`mentions`: "the night stand" leaves a side table, not the
    drawer a 1.5B model guessed), less those shown wrong; in a revision after a thing was
    nowhere, the kinds of thing the room showed."""
    values = schema.values(context.room_kinds)
    if context.seen_kinds and "obj" in context.excluded:
        values["obj"] = [k for k in context.seen_kinds if k in set(values["obj"])]
    allowed = {}
    for slot, vs in values.items():
        kept = [v for v in vs if v not in context.excluded.get(slot, set())] or vs
        named = list(dict.fromkeys(k for m in mentions for k in m.kinds if k in set(kept)))
        allowed[slot] = named or kept
    return allowed


def _facts_reading(reading: Reading, context: Context) -> bool:
    """A reading in open vocabulary (prag.agent.goals.fact_reader), not one shown wrong."""
    return reading.goal is None and reading.sentence not in context.dropped and read_facts(reading.sentence) is not None


def _fitting(context: Context, sentence: str) -> FormalGoal | None:
    """The formal goal of a sentence when it is one of the schema's with values allowed here."""
    schema = context.schema
    if schema is None:
        return None
    goal = schema.read(sentence, context.room_kinds)
    if goal is None or goal.sentence in context.dropped:
        return None
    if any(value in context.excluded.get(slot, set()) for slot, value in goal.slots):
        return None
    return goal


def goal_grammar(
    templates: Mapping[str, str], values: Mapping[str, Sequence[str]], spoken: Mapping[str, Sequence[str]] | None = None,
    lists: frozenset[str] = frozenset(), readings: int = 1,
) -> str:
    """A GBNF grammar of `readings` lines, the first a sentence, each other `OR` and one, whose
    sentences are the templates with each slot one of its values, or the
    words people write for it (`spoken`: "alarm clock" for alarmclock, read back as the kind),
    singular or plural ("put two soap bars": without the plural the model went on to "soap
    bottle"); a slot in `lists` is one or more of them, "a, b and c" (the grid's groceries),
    read back item by item. A sentence may begin with a capital, as models write one."""
    spoken = spoken or {}
    alternatives = []
    for template in templates.values():
        parts = [part for part in re.split(r"(\{\w+\})", template) if part]
        first = parts[0]
        opening = f"[{first[0]}{first[0].upper()}] {json.dumps(first[1:])}" if not first.startswith("{") else first[1:-1]
        alternatives.append(" ".join(
            [opening] + [part[1:-1] if part.startswith("{") else json.dumps(part) for part in parts[1:]]
        ))
    rules = ["root ::= reading" + f" {json.dumps(chr(10) + OR)} reading" * (readings - 1),
             "reading ::= " + " | ".join(f"({a})" for a in alternatives)]
    # Models write an article before a noun ("look at a bowl"): without room for it the grammar
    # turned the article's "a" into the first kind beginning with it (alarmclock).
    articles = " | ".join(json.dumps(f"{a} ") for a in ARTICLES)
    for slot in _slots_of(templates):
        forms = dict.fromkeys(form for v in values[slot] for form in (v, *spoken.get(v, ())))
        one = f"({articles})? ({' | '.join(json.dumps(f) for f in forms)}) (\"s\" | \"es\")?"
        if slot in lists:
            rules.append(f'{slot} ::= {slot}-item ((", " {slot}-item)* " and " {slot}-item)?')
            rules.append(f"{slot}-item ::= {one}")
        else:
            rules.append(f"{slot} ::= {one}")
    return "\n".join(rules) + "\n"


def _slots_of(templates: Mapping[str, str]) -> list[str]:
    return list(dict.fromkeys(re.findall(r"\{(\w+)\}", " ".join(templates.values()))))


def reading_prompt(
    schema: GoalSchema, context: Context, values: dict[str, list[str]], examples: Sequence[ReadingHit],
    mentions: Sequence[Mention] = (),
) -> list[Message]:
    """The LLM reader's prompt: the goal forms, this room's places, examples, the instruction.
    The system part is the same for every instruction, so a backend reuses its prefix."""
    forms = "\n".join(f"- {t}" for t in schema.templates.values())
    slot_words = f", {schema.slot_words}" if schema.slot_words else ""
    rules = f"\n{schema.reading_rules}" if schema.reading_rules else ""
    system = f"You read a person's household instruction into exactly one goal sentence of these forms{slot_words}:\n{forms}{rules}"
    system += "".join(f"\n\nInstruction: {words}\nGoal: {sentence}" for words, sentence in schema.examples)
    lines = [f"Places in this room: {', '.join(values.get(slot, []))}." for slot in sorted(schema.room_slots)]
    if context.seen_kinds and "obj" in values:
        lines.append(f"Objects seen in this room: {', '.join(values.get('obj', []))}.")
    if context.dropped:
        lines.append("Not these (shown wrong): " + "; ".join(context.dropped) + ".")
    for hit in examples:
        lines.append(f"Instruction: {hit.wording}\nGoal: {hit.sentence}")
    if mentions:  # what the words can mean, for words a small model may not know ("국자": ladle)
        lines.append("Words naming kinds: " + "; ".join(f"{m.words!r}: {' or '.join(m.kinds)}" for m in mentions) + ".")
    lines.append(f"Instruction: {context.instruction}\nGoal:")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(lines)}]
