"""SPL's reference for an ALFWorld game: textworld's planner's search, on the part of the game
its goal can use.

textworld's planner (`replan`) runs Fast Downward's search, ordered by the cost so far alone, on
the whole game: a kitchen holds dozens of receptacles and things, and the search meets every
state reachable in fewer actions than the plan's (any cabinet opened, any thing moved anywhere):
on the 200 `valid_train` games, 9.6 s of CPU a game with the engine it plans in (median 3.0 s,
146 s for one). A user's first run paid that for every game it had never seen.

The same search here plans on a smaller problem: the game's PDDL problem with only the things
of the kinds its goal or the domain's actions name (the goal's object, receptacle and lamp; the
sink, microwave and fridge that clean, heat and cool need; knives), the receptacles holding such
things, and the facts about what is kept. Its plans are as short as textworld's:
- every action costs 1 (ALFWorld's problems state no `:metric`, so Fast Downward counts actions),
  and the search, ordered by the cost so far, returns a plan of the fewest actions;
- a plan of the smaller problem is a plan of the game: every fact it relies on is the game's;
- a shortest plan of the game never acts on a dropped thing: no action on a kept thing needs a
  fact about a dropped one (but the agent's empty hands, which acting on a dropped thing only
  takes away), and a goto to where nothing kept stands only moves the agent, who can go from
  anywhere to anywhere in one action; so taking such actions out of a plan leaves a shorter one.
Checked: the same length as textworld's plan on all 140 games of `valid_seen` and all 200 of
`valid_train` (`benchmarks/alfworld_plans.py --check`; tests/test_alfworld_plans.py on one game
of each type), in 0.11 to 0.14 s a game on average (3.4 s at most).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from prag.envs.planner import solve

Tree = str | list["Tree"]

_TOKENS = re.compile(r"[()]|[^\s()]+")
_COMMENT = re.compile(r";[^\n]*")
# Declared types whose objects are dropped unless kept; the rest (the agent, locations, the kinds
# `otype`/`rtype`) stay.
_THINGS = ("object", "receptacle")


def goal_operators(domain: str, problem: str) -> tuple[str, ...] | None:
    """A shortest plan of the game as Fast Downward's operator names; None if it has none."""
    return solve(domain, goal_problem(domain, problem))


def goal_problem(domain: str, problem: str) -> str:
    """The PDDL problem with only the things its goal can use (see the module's docstring)."""
    tree = _parse(problem)
    sections = {_head(part): part for part in tree if isinstance(part, list)}
    declared = _declared(sections[":objects"][1:])
    init = [fact for fact in sections[":init"][1:] if isinstance(fact, list)]
    in_goal = set(_symbols(sections[":goal"]))
    named = in_goal | set(_symbols(_parse(domain)))
    kinds = {name for name, kind in declared.items() if kind not in _THINGS and name in named}
    kept = {name for name, kind in declared.items() if kind not in _THINGS or name in in_goal}
    pairs = [words for words in map(_two_place, init) if words is not None]
    kept |= {thing for predicate, thing, kind in pairs if predicate in ("objecttype", "receptacletype") and kind in kinds}
    kept |= {place for predicate, thing, place in pairs if predicate == "inreceptacle" and thing in kept}
    smaller: dict[str, Tree] = {
        ":objects": [":objects", *(word for name, kind in declared.items() if name in kept for word in (name, "-", kind))],
        ":init": [":init", *(fact for fact in init if all(arg in kept for arg in _symbols(fact[1:])))],
    }
    return _render([smaller.get(_head(part), part) for part in tree])


def _head(part: Tree) -> str:
    """A list's first word (`:objects`, `:init`, ...); "" for anything else."""
    return part[0] if isinstance(part, list) and part and isinstance(part[0], str) else ""


def _two_place(fact: list[Tree]) -> tuple[str, str, str] | None:
    """`(predicate a b)` as its three words; None for any other fact."""
    words = [word for word in fact if isinstance(word, str)]
    return (words[0], words[1], words[2]) if len(fact) == len(words) == 3 else None


def _declared(words: list[Tree]) -> dict[str, str]:
    """`a b - kind c - other` -> {a: kind, b: kind, c: other}."""
    declared: dict[str, str] = {}
    pending: list[str] = []
    items = iter(words)
    for word in items:
        if word == "-":
            kind = next(items)
            declared.update(dict.fromkeys(pending, str(kind)))
            pending = []
        elif isinstance(word, str):
            pending.append(word)
    return declared


def _parse(text: str) -> list[Tree]:
    """A PDDL text as nested lists of lower-case words (PDDL ignores case, as Fast Downward does)."""
    stack: list[list[Tree]] = [[]]
    for token in _TOKENS.findall(_COMMENT.sub("", text).lower()):
        if token == "(":
            stack.append([])
        elif token == ")":
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token)
    [tree] = stack[0]
    return tree if isinstance(tree, list) else [tree]


def _symbols(tree: Tree) -> Iterator[str]:
    if isinstance(tree, str):
        yield tree
        return
    for part in tree:
        yield from _symbols(part)


def _render(tree: Tree) -> str:
    return tree if isinstance(tree, str) else "(" + " ".join(_render(part) for part in tree) + ")"
