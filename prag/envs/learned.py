"""A learned action model (prag.envs.sam) as PDDL, and the planning problem of a goal from what
was observed: means-ends search on a model learned from the store instead of one written by hand.

The domain declares the shared vocabulary (prag.envs.facts); each usable operator becomes a PDDL
action whose parameters are the command's arguments and where the agent stands, the parameters
learned always equal being one. Names in a problem are `o0`, `o1`, ...: the game's names may hold
anything (spaces, apostrophes), and a plan's operators are read back through the same table.
The problem is kept small, as the given models' are: the things and places of the kinds the goal
or an operator's preconditions name, where those things were seen, what the agent holds and
where it stands.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from prag.envs.facts import KIND, Fact, GoalFacts, fluents, kind_predicate, kinds, names_in, state_predicate
from prag.envs.model import Problem, Seen
from prag.envs.sam import ActionModel, Literal, Operator


@dataclass(frozen=True)
class Action:
    """A usable operator as PDDL: its name, kept parameters, and how they fill the template."""

    name: str
    operator: Operator
    reflexive: frozenset[str]  # the model's predicates ever seen of one name twice
    kept: tuple[int, ...]  # the parameter indices the action keeps, in order
    same: dict[int, int]  # parameter index -> the kept index it always equals

    def parameter(self, index: int) -> str:
        return f"?p{self.same.get(index, index)}"

    def literal(self, literal: Literal) -> str:
        predicate, args = literal
        return "(" + " ".join([predicate, *(self.parameter(i) for i in args)]) + ")"

    def _repeats(self, literal: Literal) -> bool:
        """Whether the literal names one kept parameter twice."""
        kept = [self.same.get(i, i) for i in literal[1]]
        return len(set(kept)) < len(kept)

    def pddl(self) -> str:
        op = self.operator
        never = [lit for lit in sorted(op.pre_not) if lit[0] in self.reflexive or not self._repeats(lit)]
        pre = [self.literal(lit) for lit in sorted(op.pre)] + [f"(not {self.literal(lit)})" for lit in never]
        added = {self.literal(lit) for lit in op.add}
        deleted = {self.literal(lit) for lit in op.delete} - added  # a name bound twice: the add stands
        effects = sorted(added) + [f"(not {lit})" for lit in sorted(deleted)]
        parameters = " ".join(f"?p{i}" for i in self.kept)
        return (
            f"  (:action {self.name}\n    ; {op.template}  ({op.applications} applications)\n"
            f"    :parameters ({parameters})\n    :precondition (and {' '.join(dict.fromkeys(pre))})\n"
            f"    :effect (and {' '.join(effects)}))"
        )

    def command(self, arguments: list[str]) -> str:
        """The command of this action applied to `arguments` (one per kept parameter)."""
        value = dict(zip(self.kept, arguments))
        names = [value[self.same.get(i, i)] for i in range(self.operator.arity)]
        return self.operator.template.format(*names)


def actions(model: ActionModel) -> list[Action]:
    """The model's usable operators as PDDL actions, named after their templates' words."""
    made = []
    for number, op in enumerate(model.usable()):
        same: dict[int, int] = {}
        for i, j in sorted(op.equal):
            same.setdefault(j, same.get(i, i))
        kept = tuple(i for i in range(op.arity + 1) if i not in same)
        words = "-".join(re.findall(r"[a-z]+", re.sub(r"\{\d+\}", " ", op.template.lower()))) or "act"
        made.append(Action(f"{words}-{number}", op, frozenset(model.reflexive), kept, same))
    return made


def domain_pddl(model: ActionModel, extra: dict[str, int] | None = None) -> str:
    """The model as a PDDL domain; `extra` declares more predicates (a goal's, a problem's kinds)."""
    predicates = dict(sorted(model.arities.items()))
    for op in model.operators.values():
        predicates.update({p: len(args) for p, args in op.pre if p.startswith(KIND)})
    predicates.update(extra or {})
    declared = " ".join("(" + " ".join([name, *(f"?a{i}" for i in range(arity))]) + ")"
                        for name, arity in sorted(predicates.items()))
    body = "\n".join(action.pddl() for action in actions(model))
    return (
        f"; learned from {model.transitions} transitions of {model.episodes} episodes ({model.family})\n"
        f"(define (domain learned)\n  (:requirements :strips :negative-preconditions :equality :existential-preconditions)\n"
        f"  (:predicates {declared})\n{body})\n"
    )


def problem(model: ActionModel, goal: GoalFacts, seen: Seen, kind: Callable[[str], str]) -> Problem | None:
    """The problem of reaching `goal` from what was seen, for the learned model; None when the
    model has no usable operator or the goal's things were never seen."""
    table = actions(model)
    if not table:
        return None
    facts = fluents(seen)
    wanted = set(goal.kinds) | {p[len(KIND):] for op in model.operators.values() for p, _ in op.pre if p.startswith(KIND)}
    known = names_in(facts) | set(seen.places)
    relevant = {n for n in known if _kind_word(kind(n)) in wanted} | set(seen.held)
    relevant |= {seen.seen[t] for t in relevant if t in seen.seen}
    if seen.location is not None:
        relevant.add(seen.location)
    static = kinds(relevant, kind)
    # A name never seen in any state is taken to be as every first sight of its kind was.
    facts = facts | {(state_predicate(state), name) for name in relevant if not seen.states.get(name)
                     for state in model.first_states.get(kind(name), ())}
    if not all(any(fact[0] == kind_predicate(k) for fact in static) for k in goal.kinds):
        return None  # exploration finds what the goal needs first
    init = sorted(f for f in facts | static if set(f[1:]) <= relevant)
    ids = {name: f"o{i}" for i, name in enumerate(sorted(relevant))}
    names = {v: k for k, v in ids.items()}
    declared = {**goal.predicates(), **{f[0]: len(f) - 1 for f in init}}
    text = (
        "(define (problem observed) (:domain learned)\n  (:objects " + " ".join(ids.values()) + ")\n  (:init "
        + " ".join(_fact(f, ids) for f in init) + ")\n  (:goal " + goal.pddl() + "))\n"
    )
    by_name = {action.name: action for action in table}

    def command(operator: str) -> str:
        name, *args = operator.split()
        return by_name[name].command([names[a] for a in args])

    return Problem(domain_pddl(model, declared), text, command)


def _kind_word(kind: str) -> str:
    return kind_predicate(kind)[len(KIND):]


def _fact(fact: Fact, ids: dict[str, str]) -> str:
    return "(" + " ".join([fact[0], *(ids[n] for n in fact[1:])]) + ")"
