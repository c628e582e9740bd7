"""Means-ends search: the actions that reach the goal from what the agent has observed, as a plan
the mediator may follow (step source `search`, prag.sources; Soar's search over its action model, issue 13).

Why a real planner and not a hand-written iterative deepening: ALFWorld ships its action model as
a PDDL domain, and textworld already installs Fast Downward, the planner ALFWorld's games are
solved with. Writing what was observed as a PDDL problem for that domain plans with the game's
exact rules (an openable receptacle must be open to take from it, hands hold one thing, heating
needs a microwave) instead of a copy of them that could drift; families without a PDDL domain of
their own write one (the grid world's rules). The problem holds only what the agent observed
(`prag.envs.model.Seen`): a thing never seen is not in it, and the search says None, leaving it
to exploration (the find-X skill). Problems are small (the things and places the goal can use),
so a call takes about 15 ms of CPU (benchmarks/search.py); the same observed state is answered
from a cache.

As in Soar, the search is bounded: a plan longer than `depth` actions is not returned. Unlike
Soar's iterative deepening, Fast Downward's search here (the one textworld's library runs,
`prag.envs.planner`) is ordered by the cost so far alone, and every action of these problems
costs 1 (none states a `:metric`): its plans are shortest, as long as textworld's planner's on
every real ALFWorld game tried (`prag.envs.alfworld.shortest`). A family without an action model
(TextWorld) gets None.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from prag.agent.plans import Plan, admitted
from prag.envs.domain import Domain, imported
from prag.envs.facts import GoalFacts
from prag.envs.learned import problem as learned_problem
from prag.envs.model import Problem, Seen
from prag.envs.planner import RefusedProblem, solve
from prag.envs.sam import ActionModel
from prag.errors import PragError
from prag.sources import StepSource

# The longest plan returned: an ALFWorld two-object task from the start takes 8-10 actions, a grid
# task up to 28 (three things fetched from other rooms through doors).
DEPTH = 30

class SearchError(PragError):
    """A family's action model wrote a problem the planner refused (a bug in the model)."""


def means_ends(
    goal: str, observed: Seen, admissible: Sequence[str], domain: Domain, depth: int = DEPTH,
    learned: ActionModel | None = None,
) -> Plan | None:
    """The plan reaching `goal` from what was observed, or None when something it needs is
    unknown, no plan of at most `depth` actions exists, or there is no action model: with
    `learned`, that model (prag.envs.learned); else the family's given one.

    When `admissible` is given, a plan whose first action is not admissible is no plan."""
    if learned is not None:
        facts = domain.facts_of_goal(goal)
        return None if facts is None else to_facts(facts, observed, admissible, domain, learned, depth)
    model = _model(domain.action_model)
    problem = None if model is None else model(goal, observed, admissible)
    return _planned(problem, admissible, depth, goal)


def to_facts(
    facts: GoalFacts, observed: Seen, admissible: Sequence[str], domain: Domain, learned: ActionModel | None,
    depth: int = DEPTH, source: StepSource = StepSource.SEARCH,
) -> Plan | None:
    """The plan that makes `facts` true, as `means_ends` plans to a goal sentence's (a sub-goal
    learned from reward, or a goal read in open vocabulary, has no sentence of the family's
    schema): with the `learned` model, else the family's own where it plans to facts
    (`Domain.facts_model`); None with neither."""
    if learned is not None:
        problem = learned_problem(learned, facts, observed, domain.kind)
    elif domain.facts_model is not None:
        problem = imported(domain.facts_model)(facts, observed, admissible)
    else:
        problem = None
    return _planned(problem, admissible, depth, source=source)


def _planned(problem: Problem | None, admissible: Sequence[str], depth: int, goal: str = "",
             source: StepSource = StepSource.SEARCH) -> Plan | None:
    if problem is None:
        return None
    operators = _solve(problem.domain, problem.problem)
    if not operators or len(operators) > depth:
        return None
    steps = tuple(problem.command(op) for op in operators)
    if admissible and admitted(steps[0], admissible) is None:
        return None
    return Plan(steps, source, goal=goal)


Model = Callable[[str, Seen, Sequence[str]], "Problem | None"]


def _model(ref: str | None) -> Model | None:
    """A family's problem writer from its Domain's "module:function" reference."""
    return None if ref is None else imported(ref)


@lru_cache(maxsize=512)
def _solve(domain: str, problem: str) -> tuple[str, ...] | None:
    """Fast Downward's plan for a PDDL problem, as operator names; None when there is none."""
    try:
        return solve(domain, problem)
    except RefusedProblem as refused:
        raise SearchError(f"{refused}: the action model wrote it; report it as a bug") from None
