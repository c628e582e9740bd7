"""Action models learned from observed transitions, safely, after SAM (Juba, Le, Stern, KR 2021).

An action's command is lifted through the family's entity grammar: "take apple 1 from
countertop 1" is an application of the operator "take {0} from {1}" to (apple 1, countertop 1),
with one more parameter, where the agent stood when it acted (`HERE`: "use desklamp 1" needs the
lamp where the agent is, which its words do not say). For each operator the learner keeps:

- preconditions: the lifted literals that held before *every* application (SAM's rule), with the
  fluents that were absent before every application as negative preconditions, and the parameters
  that were always the same name (taking from the place the agent stands at) as equalities;
- effects: the lifted literals true after every application and changed by at least one (added),
  and those absent after every application and present before at least one (deleted).

So the model never plans an action in a state unlike every state it was seen to apply in, and
never claims an effect it did not see every time. It grows more general as varied applications
land (a precondition is dropped when an application without it is seen; none is ever invented).

The states are what the agent observed (prag.envs.facts), not the world: a transition is taken
as an application only when it changed what was observed. An action the game refused ("Nothing
happens.") changes nothing and teaches nothing; an action that never changes anything observable
(look, examine) gets no operator, which planning would not use anyway.

Why by hand and not a library: the PyPI learners (`sam-learner` 2.1.9, 2021, no licence stated;
`offlam`, `macq`, `amlgym`) read traces as PDDL problem files over a predicate vocabulary declared
in a domain file, run external grounders or planners, and `amlgym` pins a torch of its own. Here
the traces are the store's observed scene graphs, the vocabulary grows as they are read, and the
model must update in memory as each episode lands and round-trip through the store as JSON: the
rule itself is the few set operations below.
"""
from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prag.envs.facts import KIND, Fact

Literal = tuple[str, tuple[int, ...]]  # (predicate, parameter indices), e.g. ("placed", (0, 1))
VERSION = 1  # of the JSON form below


def lift(action: str, names: Iterable[str]) -> tuple[str, tuple[str, ...]] | None:
    """The operator template and arguments of a command, its arguments being the known `names` it
    mentions in order ("take apple 1 from countertop 1" -> ("take {0} from {1}", ("apple 1",
    "countertop 1"))); None when it names one name twice (no injective binding). Longer names
    first: "wooden table" is one name, not "table" after a word."""
    spans: list[tuple[int, int, str]] = []
    # Case aside: a family may write a scene's names in lower case where its actions say "TV stand".
    for name in sorted(set(names) - {""}, key=len, reverse=True):
        for match in re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])", action, re.IGNORECASE):
            if all(match.end() <= start or match.start() >= end for start, end, _ in spans):
                spans.append((match.start(), match.end(), name))
    spans.sort()
    arguments = tuple(name for _, _, name in spans)
    if len(set(arguments)) < len(arguments):
        return None
    template, last = "", 0
    for index, (start, end, _) in enumerate(spans):
        template += action[last:start].replace("{", "{{").replace("}", "}}") + f"{{{index}}}"
        last = end
    return template + action[last:].replace("{", "{{").replace("}", "}}"), arguments


@dataclass
class Operator:
    """What was learned of one command template: its parameters are the command's arguments in
    order, then where the agent was (index `arity`)."""

    template: str
    arity: int
    applications: int = 0
    pre: set[Literal] = field(default_factory=set)
    pre_not: set[Literal] = field(default_factory=set)
    equal: set[tuple[int, int]] = field(default_factory=set)
    after: set[Literal] = field(default_factory=set)  # true after every application
    not_after: set[Literal] = field(default_factory=set)  # absent after every application
    became: set[Literal] = field(default_factory=set)  # made true by some application
    ceased: set[Literal] = field(default_factory=set)  # made absent by some application

    @property
    def add(self) -> set[Literal]:
        return self.after & self.became

    @property
    def delete(self) -> set[Literal]:
        return self.not_after & self.ceased

    def learn(self, binding: Sequence[str], before: frozenset[Fact], after: frozenset[Fact],
              static: frozenset[Fact], arities: Mapping[str, int]) -> None:
        """One more application: the parameters bound to `binding` (arguments, then where the agent was)."""
        true_before = _lifted(before | static, binding)
        true_after = _lifted(after, binding)
        universe = _universe(arities, len(binding))
        equal = {(i, j) for i, j in itertools.combinations(range(len(binding)), 2) if binding[i] == binding[j]}
        if self.applications == 0:
            self.pre, self.pre_not, self.equal = set(true_before), universe - true_before, equal
            self.after, self.not_after = universe & true_after, universe - true_after
        else:
            self.pre &= true_before
            self.pre_not -= true_before
            self.equal &= equal
            self.after &= true_after
            self.not_after -= true_after
        self.became |= (true_after - true_before) & universe
        self.ceased |= (true_before - true_after) & universe
        self.applications += 1

    def to_dict(self) -> dict[str, Any]:
        sets = ("pre", "pre_not", "equal", "after", "not_after", "became", "ceased")
        return {"template": self.template, "arity": self.arity, "applications": self.applications,
                **{name: sorted([list(x) for x in getattr(self, name)]) for name in sets}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Operator:
        def literals(name: str) -> set[Literal]:
            return {(str(p), tuple(int(i) for i in args)) for p, args in data[name]}

        return cls(
            template=str(data["template"]), arity=int(data["arity"]), applications=int(data["applications"]),
            pre=literals("pre"), pre_not=literals("pre_not"), after=literals("after"),
            not_after=literals("not_after"), became=literals("became"), ceased=literals("ceased"),
            equal={(int(i), int(j)) for i, j in data["equal"]},
        )


def _lifted(facts: Iterable[Fact], binding: Sequence[str]) -> set[Literal]:
    """Every lifted literal over the parameters whose grounding under `binding` is among `facts`
    (a name bound to two parameters lifts both ways)."""
    slots: dict[str, list[int]] = {}
    for index, name in enumerate(binding):
        slots.setdefault(name, []).append(index)
    lifted: set[Literal] = set()
    for predicate, *names in facts:
        if all(name in slots for name in names):
            lifted.update((predicate, combo) for combo in itertools.product(*(slots[name] for name in names)))
    return lifted


def _universe(arities: Mapping[str, int], count: int) -> set[Literal]:
    """Every lifted literal of the fluent predicates over `count` parameters."""
    return {
        (predicate, combo)
        for predicate, arity in arities.items()
        if not predicate.startswith(KIND)
        for combo in itertools.product(range(count), repeat=arity)
    }


@dataclass
class ActionModel:
    """A family's learned operators, by template, and the fluent predicates seen with their arities."""

    family: str
    operators: dict[str, Operator] = field(default_factory=dict)
    arities: dict[str, int] = field(default_factory=dict)
    episodes: int = 0
    transitions: int = 0  # applications learned from
    # Predicates seen holding of one name twice ("placed x x"); for the others, a literal repeating
    # a parameter never held, and its negation is no condition worth writing.
    reflexive: set[str] = field(default_factory=set)
    # kind -> the states every thing or place of that kind showed when first seen (a microwave is
    # closed until opened; a lamp shows none): what a place not yet visited is taken to be when planning.
    # Without it a learned precondition such as "the microwave is closed", which held every time
    # the agent heated, could not be planned for before the agent had stood at the microwave.
    first_states: dict[str, set[str]] = field(default_factory=dict)

    def learn(self, template: str, arguments: Sequence[str], here: str, before: frozenset[Fact],
              after: frozenset[Fact], static: frozenset[Fact]) -> bool:
        """One observed transition; False (nothing learned) when it changed nothing observed."""
        if before == after:
            return False
        for predicate, *names in before | after:
            self.arities.setdefault(predicate, len(names))
            if len(set(names)) < len(names):
                self.reflexive.add(predicate)
        operator = self.operators.setdefault(template, Operator(template, len(arguments)))
        if operator.arity != len(arguments):
            return False
        operator.learn([*arguments, here], before, after, static, self.arities)
        self.transitions += 1
        return True

    def first_seen(self, kind: str, states: set[str]) -> None:
        """A thing or place of `kind` was first seen in `states`: keep what every first sight showed."""
        self.first_states[kind] = self.first_states.get(kind, states) & states

    def usable(self) -> list[Operator]:
        """The operators that change something, by template."""
        return [op for _, op in sorted(self.operators.items()) if op.add or op.delete]

    def to_json(self) -> str:
        return json.dumps({"version": VERSION, "family": self.family, "episodes": self.episodes,
                           "transitions": self.transitions, "arities": self.arities,
                           "reflexive": sorted(self.reflexive),
                           "first_states": {kind: sorted(states) for kind, states in self.first_states.items()},
                           "operators": [op.to_dict() for _, op in sorted(self.operators.items())]},
                          sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ActionModel:
        """A model from `to_json`'s text; ValueError (or KeyError, TypeError) when it is not one."""
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not a learned action model of version {VERSION}")
        operators = [Operator.from_dict(op) for op in data["operators"]]
        return cls(str(data["family"]), {op.template: op for op in operators},
                   {str(k): int(v) for k, v in data["arities"].items()}, int(data["episodes"]),
                   int(data["transitions"]), {str(p) for p in data["reflexive"]},
                   {str(k): {str(s) for s in v} for k, v in data.get("first_states", {}).items()})
