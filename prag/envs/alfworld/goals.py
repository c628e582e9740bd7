"""ALFWorld's formal goals: its six task types with ALFWorld's own first goal template each
(`alfworld.gen.goal_library`), an object kind, a receptacle kind and a lamp kind.

The canonical sentences are the ones ALFWorld writes, so the action model (`prag.envs.alfworld.model`)
and `Domain.needs` read them as they read a game's own goal. Object and lamp kinds are ALFRED's
(`alfworld.gen.constants`); receptacle kinds are those the game lists at its start, when it does.
"""
from __future__ import annotations

import re
from functools import cache

from prag.envs.alfworld import lexicon
from prag.envs.facts import AT, HOLDS, PLACED, Fact, GoalFacts, state_predicate
from prag.envs.goals import FormalGoal, GoalSchema

LAMPS = ("desklamp", "floorlamp")

TEMPLATES = {
    "pick_and_place_simple": "put a {obj} in {recep}",
    "look_at_obj_in_light": "look at {obj} under the {toggle}",
    "pick_clean_then_place_in_recep": "put a clean {obj} in {recep}",
    "pick_heat_then_place_in_recep": "put a hot {obj} in {recep}",
    "pick_cool_then_place_in_recep": "put a cool {obj} in {recep}",
    "pick_two_obj_and_place": "put two {obj} in {recep}",
}


@cache
def _kinds() -> dict[str, list[str]]:
    from alfworld.gen.constants import RECEPTACLES, VAL_RECEPTACLE_OBJECTS

    # What a goal can ask to move is what the world places somewhere (a bowl is both an object and
    # a receptacle); sliced kinds are no goal of the games prag plays.
    placed = {o for objects in VAL_RECEPTACLE_OBJECTS.values() for o in objects}
    objects = sorted({o.lower() for o in placed if not o.endswith("Sliced")} - set(LAMPS))
    return {"obj": objects, "recep": sorted({r.lower() for r in RECEPTACLES}), "toggle": list(LAMPS)}


# How people's words read as goals, one of each task type (written for prag; rooms and kinds of no
# particular game).
EXAMPLES = (
    ("Rinse off a mug and leave it on the shelf.", "put a clean mug in shelf"),
    ("Warm up the potato, then put it on the table.", "put a hot potato in diningtable"),
    ("Put a chilled can of wine in the cupboard.", "put a cool winebottle in cabinet"),
    ("Carry both pillows over to the armchair.", "put two pillow in armchair"),
    ("Switch on the floor lamp and look at the vase.", "look at vase under the floorlamp"),
    ("Pick up the book and turn the desk lamp on.", "look at book under the desklamp"),
    ("Throw the empty soap bottle in the bin.", "put a soapbottle in garbagecan"),
)


# What the LLM reader is told of the slots, and how to choose among the six forms.
SLOT_WORDS = "with {obj} a kind of object, {recep} a kind of place in the room and {toggle} a kind of lamp"
READING_RULES = (
    "Use 'clean' when the instruction asks to wash, rinse or clean the object or calls it clean, washed "
    "or wet; 'hot' when it asks to heat, warm or cook it or calls it hot, heated or warm; 'cool' when "
    "it asks to chill, cool or freeze it or calls it cold, chilled, cool or frozen. "
    "Use 'two' when it asks for two objects. Use 'look at' when it asks to look at or examine an "
    "object by the light of a lamp, or to hold, carry or pick up an object and turn or switch on a lamp or "
    "light. Otherwise use 'put a'."
)


@cache
def _spoken() -> dict[str, tuple[str, ...]]:
    """Kinds as words: ALFRED's type names split at their capitals ("AlarmClock" -> "alarm clock"),
    and each word of such a name alone where it is in one kind's name only and is no kind itself
    ("clock", "counter", "sink"; not "lamp", "table" or "paper", each in several names)."""
    from alfworld.gen.constants import OBJECTS, RECEPTACLES

    names = {t.lower(): re.sub(r"(?<=[a-z])(?=[A-Z])", " ", t).lower() for t in [*OBJECTS, *RECEPTACLES]}
    owners: dict[str, set[str]] = {}
    for kind, words in names.items():
        for word in words.split():
            owners.setdefault(word, set()).add(kind)
    spoken: dict[str, tuple[str, ...]] = {kind: (words,) if words != kind else () for kind, words in names.items()}
    for word, kinds in sorted(owners.items()):
        (kind,) = kinds if len(kinds) == 1 else ("",)
        if kind and word not in names and word != names[kind]:
            spoken[kind] += (word,)
    return spoken


@cache
def schema() -> GoalSchema:
    from alfworld.gen import goal_library

    # ALFWorld's other goal sentence of each type ("put some mug on desk", "examine the ...").
    aliases = {task: tuple(goal_library.gdict[task]["templates"]) for task in TEMPLATES}
    return GoalSchema(TEMPLATES, _kinds, room_slots=frozenset({"recep"}), aliases=aliases, spoken=_spoken,
                      examples=EXAMPLES, unsaid=frozenset({"toggle"}),
                      finishing={"look_at_obj_in_light": ("toggle", "obj")},
                      cues=lexicon.CUES, slot_words=SLOT_WORDS, reading_rules=READING_RULES,
                      lexicon=_lexicon, leaving=lexicon.LEAVING, near=lexicon.NEAR,
                      plural_task="pick_two_obj_and_place", changers=lexicon.CHANGERS)


def _lexicon() -> dict[str, tuple[str, ...]]:
    return {kind: (*lexicon.ENGLISH.get(kind, ()), *lexicon.KOREAN.get(kind, ()))
            for kind in dict.fromkeys([*lexicon.ENGLISH, *lexicon.KOREAN])}


def as_facts(goal: FormalGoal) -> GoalFacts | None:
    """A formal goal in the shared vocabulary of learned models (prag.envs.facts), as ALFWorld's
    own goal formulas (`alfworld.gen.goal_library`) state it: the thing of the goal's kind in or
    on a receptacle of its kind, in the state the task asks; for a look, the thing held and a lamp
    of its kind on, at the receptacle where the agent stands."""
    slots = dict(goal.slots)
    obj, recep, toggle = slots.get("obj", ""), slots.get("recep", ""), slots.get("toggle", "")
    if goal.task == "look_at_obj_in_light":
        return GoalFacts((("o", obj), ("l", toggle), ("r", "")),
                         ((HOLDS, "o"), (state_predicate("on"), "l"), (PLACED, "l", "r"), (AT, "r")))
    if goal.task == "pick_two_obj_and_place":
        return GoalFacts((("o", obj), ("p", obj), ("r", recep)), ((PLACED, "o", "r"), (PLACED, "p", "r")),
                         distinct=(("o", "p"),))
    state = {"pick_clean_then_place_in_recep": "clean", "pick_heat_then_place_in_recep": "hot",
             "pick_cool_then_place_in_recep": "cool"}.get(goal.task)
    if goal.task != "pick_and_place_simple" and state is None:
        return None
    facts: tuple[Fact, ...] = ((PLACED, "o", "r"),) + (((state_predicate(state), "o"),) if state else ())
    return GoalFacts((("o", obj), ("r", recep)), facts)
