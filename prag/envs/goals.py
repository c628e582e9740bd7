"""Formal goals: what a task asks for as a task type and slots, and the family's sentence for it.

People word a goal in many ways ("Put a clean bowl in a cabinet.", "rinse the bowl and put it
away"); the planner needs one reading of it. A family's `GoalSchema` says what a formal goal is
(its task types, each with a canonical sentence of named slots), which values each slot may take
(the kinds the family knows, or those in this room), and reads its own canonical sentences back.
Search, find-X, plans and hints take the canonical sentence of the reading, never the raw words
(`prag.agent.goals.readers` reads words into goals).

Some families' goals are no fixed sentence but a route: TextWorld's objectives spell out their
steps ("head south, then east, then pick up the teaspoon"). Such a schema reads the words into
ordered sub-goals itself (`ordered`): the formal goal's task is `SUBGOALS` and its slots are the
commands meeting each sub-goal, in order ("1": "go south", "2": "go east", ...).

Some families' goals name several things at once: the grid's "put away the groceries: put the
milk, the butter and the eggs in the fridge, ...". Such a slot is a list (`lists`): its value is
the family's own writing of the list ("the milk, the butter and the eggs"), each thing in it one of
the slot's kinds, as people's words name them ("milk and eggs" reads as "the milk and the eggs").
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

_SLOT = re.compile(r"\{(\w+)\}")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
SUBGOALS = "subgoals"  # the task type of a goal read as ordered sub-goals


@dataclass(frozen=True)
class FormalGoal:
    """One reading of an instruction: a task type, its slots' values, and its canonical sentence."""

    task: str
    slots: tuple[tuple[str, str], ...]
    sentence: str

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task, "slots": dict(self.slots), "sentence": self.sentence}

    @property
    def subgoals(self) -> list[str]:
        """The commands meeting the goal's ordered sub-goals, in order ([] for a goal of slots)."""
        return [command for _, command in self.slots] if self.task == SUBGOALS else []


def ordered_goal(commands: Sequence[str]) -> FormalGoal:
    """The formal goal of ordered sub-goals: one slot per command, its sentence "a, then b"."""
    return FormalGoal(SUBGOALS, tuple((str(i), c) for i, c in enumerate(commands, 1)), ", then ".join(commands))


@dataclass(frozen=True)
class Mention:
    """Words of an instruction that name kinds: where they are, the kinds they may name (likeliest
    first), whether they name a place something is taken from ("from the shelf") or one beside
    the place meant, and whether they are plural."""

    start: int
    end: int
    words: str
    kinds: tuple[str, ...]
    leaving: bool = False
    near: bool = False  # named to say where another place is ("the cabinet under the sink")
    plural: bool = False
    own: bool = False  # the words are the first kind's own name ("pot"), not only a word people use for it


@dataclass(frozen=True)
class GoalSchema:
    """A family's formal goals: `templates` maps each task type to its canonical sentence with
    `{slot}` places; `kinds` maps a slot to the values the family knows for it; `room_slots` are
    the slots whose values must be among the kinds a room shows at the start (the places listed
    in an ALFWorld game's first observation); `aliases` are a task type's other sentences, read
    as its canonical one. "in" and "on" read as one link word, and an article before a slot's
    value is no part of it ("in a cabinet")."""

    templates: Mapping[str, str]
    kinds: Callable[[], Mapping[str, Sequence[str]]]
    room_slots: frozenset[str] = frozenset()
    aliases: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # kind -> the words people write for it ("alarmclock" -> "alarm clock", "clock"), read as the kind
    spoken: Callable[[], Mapping[str, Sequence[str]]] = dict
    # (words, canonical sentence): how the family's goals are read, shown to an LLM reader always
    examples: Sequence[tuple[str, str]] = ()
    # Slots whose kind people leave unsaid ("turn on a lamp": desk or floor lamp): the one of its
    # kinds the room shows is meant.
    unsaid: frozenset[str] = frozenset()
    # task type -> the slots whose kind the action winning it may name, where that is not only the
    # sentence's last (the lamp): an ALFWorld look is won by turning on the lamp, or by taking the
    # thing when the lamp is already on.
    finishing: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # (regex, task type): words that only goals of that type can mean, in this family's world
    # (ALFWorld: a lamp is never moved nor put on, so words of a lamp or a light ask for a look)
    cues: Sequence[tuple[str, str]] = ()
    # A family whose goals are routes: words -> the commands of their ordered sub-goals, None when
    # the words spell none (read before any template; TextWorld's objectives).
    ordered: Callable[[str], Sequence[str] | None] | None = None
    # observed text -> sub-goals it spells out (tw-cooking's recipe, shown by the cookbook), to be
    # met before the current one; None: the family's observations add none.
    revealed: Callable[[str], Sequence[str]] | None = None
    # Slots whose value is a list of the slot's kinds -> how the family writes such a list (the
    # grid: "the milk, the butter and the eggs"); words list things with commas and "and".
    lists: Mapping[str, Callable[[Sequence[str]], str]] = field(default_factory=dict)
    # What the LLM reader is told of the slots ("with {obj} a kind of object, ...") and how to
    # choose among the forms (ALFWorld: "Use 'clean' when ..."), around the list of forms.
    slot_words: str = ""
    reading_rules: str = ""
    # kind -> more words people use for it, in any language ("nightstand" for a side table, "국자"
    # for a ladle); a word may name several kinds (`mentions`)
    lexicon: Callable[[], Mapping[str, Sequence[str]]] = dict
    # Patterns of words marking a place something is taken from, with `{mention}` where the
    # place's words go ("from the {mention}", "{mention}에서").
    leaving: Sequence[str] = ()
    # ... and of words naming a place only to say where another is ("by the {mention}")
    near: Sequence[str] = ()
    # The task type of goals asking for several things of a kind (words naming a kind in the
    # plural ask for it: "put the knives in a drawer")
    plural_task: str | None = None
    # Place kinds that change a thing left in them -> the task type asking for that change (a
    # fridge cools): named on the way to another place, they ask for it ("put it in the fridge,
    # then back in the microwave")
    changers: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def _own(self) -> dict[str, tuple[str, ...]]:
        """Kind -> its own names: the kind and its spoken words of more than one word (a spoken
        word alone, "top" of countertop, is no mention; the lexicon says which are)."""
        known = [kind for kinds in self.kinds().values() for kind in kinds]
        return {kind: tuple(f.lower() for f in (kind, *(form for form in self.spoken().get(kind, ()) if " " in form)))
                for kind in dict.fromkeys([*known, *self.lexicon()])}

    @cached_property
    def _forms(self) -> dict[str, tuple[str, ...]]:
        """Words -> the kinds they may name: a kind's own name and spoken words first, then the
        lexicon's, a kind whose word comes earlier in its list before one where it comes later."""
        ranked: dict[str, list[tuple[int, int, str]]] = {}
        order = {kind: n for n, kind in enumerate(self._own)}
        for kind, own in self._own.items():
            for n, form in enumerate(own):
                ranked.setdefault(form, []).append((0, n, kind))
        for kind, forms in self.lexicon().items():
            for n, form in enumerate(forms):
                ranked.setdefault(form.lower(), []).append((1, n, kind))
        return {form: tuple(dict.fromkeys(kind for *_, kind in sorted(entries, key=lambda e: (e[0], e[1], order[e[2]]))))
                for form, entries in ranked.items()}

    @cached_property
    def _plurals(self) -> dict[str, str]:
        """Plurals that adding -s or -es misses -> their singular word: "knives", "boxes of tissue"."""
        plurals: dict[str, str] = {}
        for form in self._forms:
            head, of, tail = form.partition(" of ")
            for singular, plural in (("fe", "ves"), ("f", "ves"), ("y", "ies"), ("x", "xes"), ("", "s")):
                if head.endswith(singular) and not (singular == "y" and head[-2:-1] in "aeiou") and head.isascii():
                    if of or singular:
                        plurals.setdefault(head[: len(head) - len(singular)] + plural + of + tail, form)
                    break
        return {p: f for p, f in plurals.items() if p not in self._forms}

    @cached_property
    def _mention_pattern(self) -> re.Pattern[str] | None:
        if not self._forms:
            return None
        forms = sorted([*self._forms, *self._plurals], key=len, reverse=True)  # the longest first: "coffee table", not "table"
        # Korean words carry their particles after them ("국자를"), so only the start is bounded.
        alternatives = [rf"(?<![\uac00-\ud7a3]){re.escape(f)}" if _HANGUL.search(f)
                        else rf"(?<![a-z0-9]){re.escape(f)}(?:e?s)?(?![a-z0-9])" for f in forms]
        return re.compile("|".join(alternatives), re.IGNORECASE)

    @cached_property
    def _mentions_read(self) -> dict[str, tuple[Mention, ...]]:
        return {}  # text -> its mentions: the words reader reads the same verified wordings game after game

    def mentions(self, text: str) -> list[Mention]:
        """The words in `text` that name kinds, in order, the longest where they overlap; a plural
        is read as its singular; Korean words carry their particles after them."""
        if text not in self._mentions_read:
            self._mentions_read[text] = tuple(self._mentions(text))
        return list(self._mentions_read[text])

    def _mentions(self, text: str) -> list[Mention]:
        pattern = self._mention_pattern
        if pattern is None:
            return []
        found = []
        for match in pattern.finditer(text):
            words = match.group(0).lower()
            form = words if words in self._forms else self._plurals.get(words) or next(
                words[: -len(end)] for end in ("es", "s") if words[: -len(end)] in self._forms)

            def marked(patterns: Sequence[str]) -> bool:
                return any(m.start() <= match.start() and match.end() <= m.end() for p in patterns
                           for m in re.finditer(p.format(mention=re.escape(match.group(0))), text, re.IGNORECASE))

            kinds = self._forms[form]
            found.append(Mention(match.start(), match.end(), words, kinds, marked(self.leaving),
                                 marked(self.near), form != words, form in self._own.get(kinds[0], ())))
        return found

    def cued(self, words: str) -> list[str]:
        """The task types the words' cues name (none: any type)."""
        return list(dict.fromkeys(task for pattern, task in self._cue_patterns if pattern.search(words)))

    @cached_property
    def _cue_patterns(self) -> list[tuple[re.Pattern[str], str]]:
        return [(re.compile(pattern, re.IGNORECASE), task) for pattern, task in self.cues]

    def finishing_values(self, goal: FormalGoal) -> list[str]:
        """The values one of which the action winning `goal` names: the last sub-goal's command,
        or the kinds in its finishing slots (a name there that is no slot of the task is a kind
        its sentence fixes: the grid's groceries are won by closing the fridge)."""
        if goal.subgoals:
            return goal.subgoals[-1:]
        named = dict(goal.slots)
        return [named.get(slot, slot) for slot in self.finishing_slots(goal.task)]

    def finishing_slots(self, task: str) -> list[str]:
        """The slots (or kinds the sentence fixes) whose kind the action winning a goal of `task`
        names (one of them)."""
        return list(self.finishing.get(task, self.slots_of(task)[-1:]))

    def slots_of(self, task: str) -> list[str]:
        """A task type's slots in the order its sentence names them."""
        return _SLOT.findall(self.templates[task])

    def sentence(self, task: str, slots: Mapping[str, str]) -> str:
        return self.templates[task].format(**slots)

    def goal(self, task: str, slots: Mapping[str, str]) -> FormalGoal:
        ordered = tuple((name, slots[name]) for name in self.slots_of(task))
        return FormalGoal(task, ordered, self.sentence(task, slots))

    def values(self, room_kinds: Sequence[str]) -> dict[str, list[str]]:
        """Slot -> the values it may take in a room whose places are of `room_kinds` (all the
        family's kinds of such a slot when the room shows none of them)."""
        known = self.kinds()
        values: dict[str, list[str]] = {}
        for slot, kinds in known.items():
            present = [k for k in dict.fromkeys(room_kinds) if k in set(kinds)] if slot in self.room_slots else []
            values[slot] = present or list(kinds)
        return values

    @cached_property
    def _by_form(self) -> dict[str, str]:
        return {form: kind for kind, forms in self.spoken().items() for form in forms}

    @cached_property
    def _known(self) -> set[str]:
        return {kind for kinds in self.kinds().values() for kind in kinds}

    @cached_property
    def _sentence_patterns(self) -> list[tuple[str, list[str], re.Pattern[str]]]:
        """Each task's sentences (canonical, then aliases) as (task, slot names, pattern)."""
        patterns = []
        for task, template in self.templates.items():
            for form in (template, *self.aliases.get(task, ())):
                names = _SLOT.findall(form)
                pattern = re.sub(r"\\ (?:in|on)\\ ", r" (?:in|on) ", re.escape(form))
                for name in names:
                    value = r"[a-z][a-z,&' ]*?" if name in self.lists else r"[a-z0-9]+(?: [a-z0-9]+)*?"
                    pattern = pattern.replace(re.escape("{" + name + "}"), f"(?:(?:a|an|the|some) )?(?P<{name}>{value})", 1)
                patterns.append((task, names, re.compile(pattern)))
        return patterns

    def kind_of(self, words: str) -> str:
        """The kind that words people write name ("alarm clock" -> "alarmclock"; a plural, "soap
        bars", as its singular when the words are no kind themselves)."""
        for form in (words, *(words[: -len(end)] for end in ("es", "s") if words.endswith(end))):
            # a kind of two words keeps its space where the family spells it so (the grid's "soda can")
            for kind in (self._by_form.get(form, form.replace(" ", "")), form):
                if kind in self._known:
                    return kind
        return words.replace(" ", "")

    def listed(self, slot: str, words: str, allowed: Sequence[str]) -> str | None:
        """A list slot's value as the family writes it, read from words listing its things ("milk,
        butter and eggs"; articles and plurals as people write them), None when a thing is not
        among the `allowed` kinds."""
        kinds = []
        for item in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*", words):
            kind = self.kind_of(re.sub(r"^(?:a|an|the|some) ", "", item.strip()))
            if kind not in allowed:
                return None
            kinds.append(kind)
        return self.lists[slot](list(dict.fromkeys(kinds)))

    def read(self, text: str, room_kinds: Sequence[str] = ()) -> FormalGoal | None:
        """The formal goal a canonical sentence (any case, a final full stop) states, or None when
        the text is no sentence of this schema with values it knows (in this room, for room slots)."""
        if self.ordered is not None:
            commands = self.ordered(text)
            if commands:
                return ordered_goal(commands)
        words = " ".join(text.lower().strip().rstrip(".").split())
        values = self.values(room_kinds)
        for task, names, pattern in self._sentence_patterns:
            match = pattern.fullmatch(words)
            slots = {
                name: self.listed(name, value, values.get(name, ())) if name in self.lists else self.kind_of(value)
                for name, value in (match.groupdict() if match else {}).items()
            }
            if match and all(slots[name] is not None and (name in self.lists or slots[name] in values.get(name, ()))
                             for name in names):
                return self.goal(task, {name: str(slots[name]) for name in names})
        return None
