"""What an environment family's actions and names look like, for the agent and its prompt.

A `Domain` holds a family's knowledge that the agent must not hard-wire: the rules text of
the system prompt, which actions undo which (`inverse`), which actions move the agent and
where to (`movement`), how object names look in text (`entities`, `kind`), how its scene
graphs say where things are and what the agent holds, and which hints (prag.agent.asking.hints)
suit it. One instance per family, registered in `prag.envs.registry` beside the family's
factory; nothing here imports an engine.
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from prag.envs.base import Triple
from prag.envs.facts import GoalFacts
from prag.envs.goals import GoalSchema

# The notes the agent may add to a step's prompt, in the order they appear (prag.agent.asking.hints).
ALL_HINTS = ("loops", "unvisited", "goal_objects_seen", "not_opened", "seen_in_past_attempts", "heard", "subgoal")


@dataclass(frozen=True)
class Undo:
    """Actions matching `pattern` are undone by `templates`, filled with its named groups and
    with `at` (where the agent is); a template needing `at` is left out when it is unknown."""

    pattern: str
    templates: tuple[str, ...]

    def undoing(self, action: str, at: str | None) -> set[str] | None:
        """The actions undoing `action`, or None when this rule does not match it."""
        match = re.fullmatch(self.pattern, action)
        if match is None:
            return None
        names = match.groupdict()
        return {t.format(**names, at=at) for t in self.templates if at is not None or "{at}" not in t}


@dataclass(frozen=True)
class GoalTemplate:
    """A goal sentence's shape and the kinds of thing it needs. Named groups of `pattern` are
    kinds (`objs`: a list, "the milk, the butter and the eggs"; `count`: how many of `obj`);
    `tools` are kinds the task needs that the sentence leaves unsaid (cooling needs a fridge)."""

    pattern: str  # matched against the whole goal, lower-cased, without its final full stop
    tools: tuple[str, ...] = ()
    count: int = 1  # how many things of kind `obj` the task needs, unless the goal says

    def needs(self, goal: str) -> dict[str, int] | None:
        """Kind -> how many things of it the goal needs, or None when the goal has another shape."""
        match = re.fullmatch(self.pattern, goal)
        if match is None:
            return None
        groups = {name: value for name, value in match.groupdict().items() if value}
        count = int(groups.pop("count", self.count))
        kinds: dict[str, int] = {}
        for name, value in groups.items():
            named = re.split(r",\s*|\s+and\s+", value) if name == "objs" else [value]
            for kind in named:
                kind = re.sub(r"^(?:the|a|an|some)\s+", "", kind.strip())
                kinds[kind] = max(kinds.get(kind, 0), count if name in ("obj", "objs") else 1)
        for tool in self.tools:
            kinds.setdefault(tool, 1)
        return kinds


@dataclass(frozen=True)
class Domain:
    """An environment family's grammar and rules, as data (one instance per family)."""

    name: str  # the action vocabulary: families sharing one share corrections
    rules: str  # the system prompt's rules of the game
    undo: tuple[Undo, ...]  # the first matching rule says what undoes an action
    move: str  # regex of a movement action; group `to` is where it goes
    entity: str  # regex of an object's name in lower-cased text
    placement: dict[str, str]  # scene-graph relation saying where a thing is -> "in" or "on"
    holds: tuple[str, str] = ("agent", "holds")  # (subject, relation) of a held thing's triple
    held_by: str | None = None  # or: the object of triples (thing, "in", it) that are held
    relative_moves: bool = False  # moves name a direction, not a place: where they lead depends on where
    hints: tuple[str, ...] = ALL_HINTS
    go_action: str = "go to {}"  # the movement action to a named place
    open_action: str = "open {}"  # the action opening a named place
    # The scene-graph relation (thing, it, room) listing the furniture of the room the agent is
    # in: open furniture so listed shows what it holds without a visit (the grid). None: only
    # the place the agent is at shows its contents (ALFWorld).
    in_view: str | None = None
    passage: str | None = None  # regex of names that are ways through, never searched (doors)
    leads_to: str | None = None  # the scene-graph relation (way, it, place) saying where a way leads
    goals: tuple[GoalTemplate, ...] = ()  # the family's goal sentences, most specific first
    # "module:function" writing the family's planning problem from what was observed
    # (prag.envs.model; means-ends search, prag.agent.world.search); None: the family has none.
    action_model: str | None = None
    # "module:function" writing the family's planning problem for a goal given as facts
    # (prag.envs.facts.GoalFacts: a goal read in open vocabulary), from what was observed; None:
    # goals as facts are planned with the model learned from the store only.
    facts_model: str | None = None
    # "module:function": a kind of thing -> {kind of place the family's world may put it in or on:
    # what a look costs there, 0 seen on arrival, 1 opened first}; None for a kind it does not know.
    # The find-X skill searches cheap likely places first. None here: the family does not say.
    holders: str | None = None
    # "module:function": (task type, kind of thing) -> what a goal of that type asks done to the
    # thing ("cleaned") where the family's world never does it to such a thing, else None.
    never_done: str | None = None
    # "module:function" returning the family's `GoalSchema` (prag.envs.goals): what a formal goal
    # is, for reading instructions in people's words; None: only the family's own goal sentences.
    goal_schema: str | None = None
    # "module:function": a formal goal (prag.envs.goals) -> its `GoalFacts` (prag.envs.facts), what
    # it means in the vocabulary action models are learned in; None: learned models cannot plan
    # for the family's goals.
    goal_facts: str | None = None
    # Verbs of actions that make another possible (unlock a door, open it, take what is to be put),
    # in the order tried when a sub-goal's command is not admissible (prag.agent.goals.subgoals).
    readies: tuple[str, ...] = ()
    # Families whose moves are relative (a map of rooms, prag.agent.world.roommap): the scene-graph
    # relation (way, it, room) saying a way out of the room lies in a direction (group `to`), the
    # pairs of opposite directions (the way back), and the relation (thing, it, room) of what
    # stands in the room.
    exit_relation: str | None = None
    opposites: tuple[tuple[str, str], ...] = ()
    located: str | None = None
    # Regex of a name whose group `kind` is its kind, for names that carry more than a kind and a
    # number (ScienceWorld's "orange in bowl", "cup containing water"); None: the rule of `kind`.
    kind_rule: str | None = None
    # Kinds of more than one word ("living room", "TV stand"): a name ending in one is of that kind,
    # where the rule of `kind` would take its last word alone ("room", "stand").
    kinds: tuple[str, ...] = ()
    # The scene relation that gives a thing's own name where the actions' words for it differ
    # (ScienceWorld's "substance in toilet" isa "water").
    own_name: str | None = None
    # Regex of actions that cannot be undone and fail the task when aimed at the wrong thing
    # (ScienceWorld's "focus on"), group `x` the thing: checked before taken (prag.agent.skills.irrevocable).
    irrevocable: str | None = None
    # The state the scene gives the thing an irrevocable action was taken on (ScienceWorld's
    # "focused"): what "it" is in the goal's instructions after it (prag.agent.skills.carry).
    marked: str | None = None
    # The family's action that puts a thing in or on a place, with `{thing}` and `{place}`
    # (ScienceWorld's "move {thing} to {place}"): how a goal's "place it in the blue box" is done
    # where its own words are no action (prag.agent.skills.carry).
    put: str | None = None
    # The family's action that shows one thing as it is now, with `{thing}` (ScienceWorld's "look at
    # {thing}"): how an experiment reads what it did to a thing (prag.agent.skills.compared).
    examine: str | None = None
    # The family's action that pours a thing (a liquid, or what a vessel holds) into a place, with
    # `{thing}` and `{place}` (ScienceWorld's "pour {thing} into {place}"), where `put` moves none.
    pour: str | None = None
    # The family's action that combines what a vessel holds into something else, with `{thing}`
    # the vessel (ScienceWorld's "mix {thing}"): how a thing nowhere in the world is made
    # (prag.agent.skills.making).
    combine: str | None = None
    # The skills search tries with the goal's words, in this order (prag.agent.skills.repertoire:
    # instructed, take-along, created, conditions, carry, find, compared, make, described); ()
    # for none: the goal is then searched for by its facts and its sub-goals alone.
    skills: tuple[str, ...] = ()

    def schema(self) -> GoalSchema | None:
        """The family's goal schema, None when it has none."""
        return None if self.goal_schema is None else _schema(self.goal_schema)

    def facts_of_goal(self, sentence: str) -> GoalFacts | None:
        """What a goal sentence of the family's schema means as facts, None when the family or
        its schema cannot say."""
        schema = self.schema()
        goal = schema.read(sentence) if schema is not None and self.goal_facts is not None else None
        return None if goal is None else imported(str(self.goal_facts))(goal)

    def search_cost(self, place_kind: str, thing_kind: str) -> int | None:
        """How dear a look for `thing_kind` at a place of `place_kind` is: 0 (it may be there and
        is seen on arrival), 1 (it may be there, behind a door), 2 (the world never puts it
        there); None when the family does not say."""
        if self.holders is None:
            return None
        costs = imported(self.holders)(thing_kind)
        return None if costs is None else costs.get(place_kind, 2)

    def never_done_to(self, task: str, thing_kind: str) -> str | None:
        """What a goal of `task` asks done to a `thing_kind` that the world never does ("cleaned"),
        None where it may or the family does not say."""
        return None if self.never_done is None else imported(self.never_done)(task, thing_kind)

    def inverse(self, action: str, at: str | None = None) -> set[str]:
        """The actions that would undo `action`, taken where the agent now is (`at`)."""
        for rule in self.undo:
            undone = rule.undoing(action, at)
            if undone is not None:
                return undone
        return set()

    def movement(self, action: str) -> str | None:
        """Where a movement action goes (a place, or a direction), None for other actions."""
        match = re.fullmatch(self.move, action)
        return match["to"] if match else None

    def aimed_at(self, action: str) -> str | None:
        """The thing an irrevocable action is aimed at (`irrevocable`), None for other actions."""
        match = re.fullmatch(self.irrevocable, action) if self.irrevocable is not None else None
        return match["x"] if match else None

    def exit_direction(self, relation: str) -> str | None:
        """The direction a scene-graph relation says an exit lies in ("north of" -> "north"), None
        for other relations."""
        match = re.fullmatch(self.exit_relation, relation) if self.exit_relation is not None else None
        return match["to"] if match else None

    def opposite(self, direction: str) -> str | None:
        """The direction leading back ("east" -> "west"), None when the family does not say."""
        for one, other in self.opposites:
            if direction in (one, other):
                return other if direction == one else one
        return None

    def is_passage(self, name: str) -> bool:
        """Whether `name` is a way through (a door), by the family's `passage` pattern."""
        return self.passage is not None and re.fullmatch(self.passage, name) is not None

    def entities(self, text: str) -> list[str]:
        """The names of things and places in a text, in order (ALFWorld: "apple 1")."""
        return re.findall(self.entity, text.lower())

    def name_of(self, thing: str, triples: Iterable[Triple]) -> str:
        """What a thing is called, as a goal would say it: its own name where the scene gives one
        (`own_name`), else the part of its name `kind_rule` gives ("thermometer in inventory" ->
        "thermometer"), else the name as it is."""
        given = [o for s, r, o in triples if s == thing and r == self.own_name] if self.own_name else []
        if given:
            return given[0]
        match = re.fullmatch(self.kind_rule, thing) if self.kind_rule is not None else None
        return match["kind"] if match else thing

    def kind(self, entity: str) -> str:
        """The kind of an entity: its name without the instance number ("apple 1" -> "apple"),
        or for names without one, the last word ("red apple" -> "apple") or the longest of the
        family's `kinds` it ends in ("TV stand"); where the family has a `kind_rule`, of the part of
        the name it gives ("orange in bowl" -> "orange")."""
        if self.kind_rule is not None and (match := re.fullmatch(self.kind_rule, entity)):
            entity = match["kind"]
        stripped = re.sub(r" \d+$", "", entity)
        if stripped != entity:
            return stripped
        several = [k for k in self.kinds if entity == k or entity.endswith(" " + k)]
        return max(several, key=len) if several else entity.rsplit(" ", 1)[-1]

    def needs(self, goal: str) -> dict[str, int]:
        """The kinds of thing the goal needs and how many of each ({} for a goal of no known shape)."""
        text = " ".join(goal.lower().split()).rstrip(".")
        for template in self.goals:
            kinds = template.needs(text)
            if kinds is not None:
                return kinds
        return {}

    def marked_things(self, triples: Iterable[Triple]) -> list[str]:
        """The things a scene graph's triples mark as acted on irrevocably (`marked`), in their order."""
        return [s for s, r, o in triples if r == "is" and o == self.marked] if self.marked is not None else []

    def held(self, triples: Iterable[Triple]) -> set[str]:
        """What the agent holds, read from a scene graph's triples."""
        if self.held_by is not None:
            return {s for s, r, o in triples if r == "in" and o == self.held_by}
        return {o for s, r, o in triples if (s, r) == self.holds}

    def placed(self, triples: Iterable[Triple]) -> list[tuple[str, str, str]]:
        """(thing, "in" or "on", place) for each triple saying where a thing that is not held is."""
        return [
            (s, self.placement[r], o)
            for s, r, o in triples
            if r in self.placement and s != self.holds[0] and o != self.held_by
        ]


ALFWORLD = Domain(
    name="alfworld",
    rules=(
        "You are a household robot acting in a text world. Each turn you pick exactly one action "
        "from the list of admissible actions; nothing else can be done. Work towards the goal step by "
        "step: find the object, take it, change it if the goal asks (heat, cool, clean, use a lamp), "
        "and put it where the goal says. Receptacles may be closed: open them to see inside. "
        "Do not repeat an action that changed nothing."
    ),
    undo=(
        # ALFWorld games come in two grammars for putting things: "move X to Y" and "put X in/on Y".
        Undo(r"take (?P<x>.+) from (?P<y>.+)", ("move {x} to {y}", "put {x} in/on {y}")),
        Undo(r"open (?P<x>.+)", ("close {x}",)),
    ),
    move=r"go to (?P<to>.+)",
    entity=r"\b[a-z]+ \d+\b",
    placement={"in": "in", "on": "on"},
    # ALFWorld's goal templates (alfworld.gen.goal_library) of its six task types.
    goals=(
        GoalTemplate(r"(?:put a clean|clean some) (?P<obj>\w+) (?:and put it )?in (?P<recep>\w+)", ("sinkbasin",)),
        GoalTemplate(r"(?:put a hot|heat some) (?P<obj>\w+) (?:and put it )?in (?P<recep>\w+)", ("microwave",)),
        GoalTemplate(r"(?:put a cool|cool some) (?P<obj>\w+) (?:and put it )?in (?P<recep>\w+)", ("fridge",)),
        GoalTemplate(r"(?:put|find) two (?P<obj>\w+) (?:and put them )?in (?P<recep>\w+)", count=2),
        GoalTemplate(r"put (?:a|some) (?P<obj>\w+) (?:in|on) (?P<recep>\w+)"),
        GoalTemplate(r"(?:look at|examine the) (?P<obj>\w+) (?:under|with) the (?P<toggle>\w+)"),
    ),
    action_model="prag.envs.alfworld.model:problem",
    facts_model="prag.envs.alfworld.model:facts_problem",
    holders="prag.envs.alfworld.placement:holders",
    never_done="prag.envs.alfworld.changes:never_done",
    goal_schema="prag.envs.alfworld.goals:schema",
    goal_facts="prag.envs.alfworld.goals:as_facts",
)

GRID = Domain(
    name="grid",
    rules=(
        "You are a household robot in a house of rooms joined by doors. Each turn you pick exactly one "
        "action from the list of admissible actions; nothing else can be done. Work towards the goal step "
        "by step: go to the furniture where a thing is, pick it up (one thing at a time), and drop it in "
        "or on the furniture the goal names. Furniture and doors may be closed: open them to see inside or "
        "to pass. Toggle a sink on to fill, wash or water at it, and off when done. "
        "Do not repeat an action that changed nothing."
    ),
    undo=(
        # A thing picked up can only be dropped at the furniture in front: putting it back.
        Undo(r"pick up (?P<x>.+)", ("drop {x} in {at}", "drop {x} on {at}")),
        Undo(r"(?:drop|put) (?P<x>.+?) (?:in|on) (?P<y>.+)", ("pick up {x}",)),
        Undo(r"open (?P<x>.+)", ("close {x}",)),
    ),
    move=r"go to (?P<to>.+)",
    # Names are a kind and a number; kinds of two words are spelled out (the world's objects.py).
    entity=r"\b(?:(?:soda|banana|teddy|toy|watering) )?[a-z]+ \d+\b",
    placement={"inside": "in", "onTop": "on"},
    in_view="inRoom",
    passage=r"door \d+",
    leads_to="leadsTo",
    # The goal sentences of the grid's tasks (prag.envs.grid.tasks).
    goals=(
        GoalTemplate(r"put away the groceries: put (?P<objs>.+) in the (?P<recep>fridge), then close the fridge"),
        GoalTemplate(r"throw away the trash: put (?P<objs>.+) in the (?P<recep>bin), and nothing else"),
        GoalTemplate(r"collect the toys: put (?P<objs>.+) in the (?P<recep>box)"),
        GoalTemplate(
            r"wash the dishes: clean (?P<objs>.+) at the (?P<tool>sink), put them in the (?P<recep>cabinet), "
            r"then turn the sink off"
        ),
        GoalTemplate(
            r"water the (?P<obj>plant) with the (?P<tool>watering can), filled at the (?P<sink>sink), "
            r"then turn the sink off"
        ),
        GoalTemplate(
            r"water all (?P<count>\d+) (?P<obj>plant)s with the (?P<tool>watering can), filled at the "
            r"(?P<sink>sink), then turn the sink off"
        ),
    ),
    action_model="prag.envs.grid.model:problem",
    goal_schema="prag.envs.grid.goals:schema",
)

TEXTWORLD = Domain(
    name="textworld",
    rules=(
        "You are playing a text adventure game. Each turn you pick exactly one action from the list of "
        "admissible actions; nothing else can be done. Work towards the goal step by step: explore the "
        "rooms (go north, south, east, west), open doors and containers to see what they hold, take "
        "what the goal needs and use it as the goal says. Do not repeat an action that changed nothing."
    ),
    undo=(
        Undo(r"take (?P<x>.+) from (?P<y>.+)", ("put {x} on {y}", "insert {x} into {y}")),
        Undo(r"take (?P<x>.+)", ("drop {x}",)),
        Undo(r"drop (?P<x>.+)", ("take {x}",)),
        Undo(r"put (?P<x>.+) on (?P<y>.+)", ("take {x} from {y}",)),
        Undo(r"insert (?P<x>.+) into (?P<y>.+)", ("take {x} from {y}",)),
        Undo(r"open (?P<x>.+)", ("close {x}",)),
    ),
    move=r"go (?P<to>north|south|east|west)",
    # Names carry no number; the game writes them after an article ("a closed fridge", "the milk").
    entity=r"\b(?:a|an|some|the) ((?:[a-z]+ )*?[a-z]+)(?=[.,;:!?]| (?:and|on|in|into|is|are|here|there)\b|$)",
    placement={"in": "in", "on": "on"},
    held_by="inventory",
    relative_moves=True,
    go_action="go {}",
    goal_schema="prag.envs.textworld.goals:schema",
    readies=("unlock", "open", "take"),
    exit_relation=r"(?P<to>north|south|east|west) of",  # the env's (door or "exit", "north of", room)
    opposites=(("north", "south"), ("east", "west")),
    located="at",
)


@cache
@cache
def _schema(ref: str) -> GoalSchema:
    """The schema a family's reference builds, built once: it memoizes what it reads of words."""
    schema: GoalSchema = imported(ref)()
    return schema


def imported(ref: str) -> Callable[..., Any]:
    """The function a "module:function" reference names, imported when first used (so that a
    Domain names engine-side code without importing it)."""
    module, _, name = ref.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def filled(template: str | None, action: str) -> dict[str, str] | None:
    """The slots (`{thing}`, `{place}`) a family's action template has in `action`, or None where
    the action is not of that template."""
    if template is None:
        return None
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>.+)", re.escape(template))
    match = re.fullmatch(pattern, action)
    return match.groupdict() if match else None
