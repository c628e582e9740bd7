"""TextWorld's formal goals: the objective's steps as ordered sub-goals, each a command the game admits.

TextWorld writes its quests from a grammar (`textworld/generator/data/text_grammars/
house_instruction.twg`): a welcome, then one clause per action joined by separators ("First off,",
"With that over with,", "And then,"), then an epilogue. Each action is worded from a few synonyms:
"try to venture west", "make an attempt to take a trip south", "recover the passkey from the
bench", "lift the chocolate bar from the floor of the chamber", "open the gate inside the garage".
`subgoals` reads each clause's action back into the command that performs it ("go west", "take
passkey from bench", "take chocolate bar", "open gate"); the canonical sentence ("go west, then
open gate, then ...") reads back the same. tw-cooking's objective names only the cookbook and
the meal ("Check the cookbook in the kitchen for the recipe. Once done, enjoy your meal!"): read
as examining the cookbook, then eating the meal; the recipe the cookbook shows (`recipe`) adds its
steps between them: take each ingredient, then each direction ("fry the red potato": "cook red
potato with stove"; "slice the yellow bell pepper": "slice yellow bell pepper with knife").

Nothing here imports the engine: the words are all it reads.
"""
from __future__ import annotations

import re
from functools import cache

from prag.envs.goals import SUBGOALS, GoalSchema

_THE = r"(?:the |a |an )?"
_THING = r"(?P<x>[a-z][a-z' -]*?)"
_WHERE = r"(?: (?:in|within|inside) the [a-z' -]+)?"  # "the gate inside the garage": the room is no part of it
_SURE = r"(?:ensure|make sure|assure|make it so|doublecheck|look and see|make absolutely sure) that "

# (pattern over one clause, lower case, without its full stop; the command it means), first match
# wins: moves before takes ("take a trip east"), drops before puts ("place the x on the floor").
_ACTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), command) for pattern, command in (
        (r"\b(?:go|head|venture|travel|move|go to the|take a trip)(?: through the)? (?P<d>north|south|east|west)\b",
         "go {d}"),
        (rf"\b(?:pick-up|pick up|retrieve|recover|lift|take) {_THE}{_THING} from the floor of the .+", "take {x}"),
        (rf"\b(?:place|drop|ditch|throw|toss|deposit) {_THE}{_THING} on the floor of the .+", "drop {x}"),
        (rf"\bdrop {_THE}{_THING}$", "drop {x}"),
        (rf"\b(?:pick-up|pick up|retrieve|recover|lift|take) {_THE}{_THING} (?:from|in|that's in) {_THE}"
         rf"(?P<y>[a-z][a-z' -]*?){_WHERE}$", "take {x} from {y}"),
        (rf"\b(?:pick-up|pick up|retrieve|recover|lift|take) {_THE}{_THING}$", "take {x}"),
        (rf"\b(?:insert|put|place|deposit) {_THE}{_THING} (?:into|inside) {_THE}(?P<y>[a-z][a-z' -]*?){_WHERE}$",
         "insert {x} into {y}"),
        (rf"\b(?:put|place|sit|rest) {_THE}{_THING} on {_THE}(?P<y>[a-z][a-z' -]*?){_WHERE}$", "put {x} on {y}"),
        (rf"\bunlock {_THE}{_THING}{_WHERE} with {_THE}(?P<y>[a-z][a-z' -]*?)$", "unlock {x} with {y}"),
        (rf"\bopen {_THE}{_THING}{_WHERE}$", "open {x}"),
        (rf"\b{_SURE}the {_THING}{_WHERE} is (?:opened|open|wide open|ajar)$", "open {x}"),
        (rf"\bclose {_THE}{_THING}{_WHERE}$", "close {x}"),
        (rf"\b{_SURE}the {_THING}{_WHERE} is (?:closed|shut)$", "close {x}"),
        (rf"\beat {_THE}{_THING}$", "eat {x}"),
        # tw-cooking: "Check the cookbook in the kitchen for the recipe. Once done, enjoy your meal!"
        (r"\b(?:check|examine|read) (?:the )?cookbook\b", "examine cookbook"),
        (r"\benjoy your meal\b", "eat meal"),
    )
)


def _command(clause: str) -> str | None:
    """The command a clause's action means, None when it names none."""
    for pattern, command in _ACTIONS:
        match = pattern.search(clause)
        if match is not None:
            return command.format(**{name: value.strip() for name, value in match.groupdict().items()})
    return None


def subgoals(objective: str) -> list[str] | None:
    """The commands of the objective's ordered sub-goals, None when it spells no action.

    Clauses are the objective's sentences cut at commas (the separators end in one: "If you can
    manage that, head west"); each clause holds at most one action."""
    clauses = [c.strip() for c in re.split(r"[.!?;]\s+|[.!?;]$|,\s*", objective.lower().replace("\n", " "))]
    commands = [command for clause in clauses if clause and (command := _command(clause)) is not None]
    return commands or None


# tw-cooking's directions (textworld.challenges.tw_cooking: TYPES_OF_COOKING_VERBS, TYPES_OF_CUTTING_VERBS)
_HEATS = {"fry": "stove", "roast": "oven", "grill": "BBQ"}
_CUTS = ("chop", "slice", "dice")
_RECIPE = re.compile(r"ingredients:\s*\n(?P<ingredients>.*?)\n\s*directions:\s*\n(?P<directions>.*?)(?:\n\s*\n|$)",
                     re.IGNORECASE | re.DOTALL)


def _direction(line: str) -> str | None:
    verb, _, rest = line.partition(" ")
    thing = re.sub(r"^the ", "", rest)
    if line == "prepare meal":
        return line
    if verb in _HEATS and thing:
        return f"cook {thing} with {_HEATS[verb]}"
    return f"{verb} {thing} with knife" if verb in _CUTS and thing else None


def recipe(text: str) -> list[str]:
    """The sub-goals a cookbook's recipe spells out: take each ingredient, then each direction; []
    when the text shows no recipe, or one with a direction of no known kind (the LLM plays it)."""
    match = _RECIPE.search(text)
    if match is None:
        return []
    lines = [" ".join(line.split()).lower() for line in match["ingredients"].splitlines() if line.strip()]
    directions = [_direction(" ".join(line.split()).lower()) for line in match["directions"].splitlines() if line.strip()]
    if not lines or None in directions:
        return []
    return [f"take {ingredient}" for ingredient in lines] + [d for d in directions if d is not None]


@cache
def schema() -> GoalSchema:
    # One task type, whose slot takes no listed values: the LLM reader has no grammar to read a
    # route into, so a route the words do not spell is left to the LLM playing the game.
    return GoalSchema({SUBGOALS: "{steps}"}, dict, ordered=subgoals, revealed=recipe)
