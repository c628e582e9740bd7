"""Fast Downward's search on a PDDL problem, in this process's own copy of its library.

Two users: the agent's means-ends search (`prag.agent.world.search`) and ALFWorld's shortest plans,
SPL's reference (`prag.envs.alfworld.shortest`). The search is the one textworld's build of the
library runs for every solve (its `solve_sas`, as its `replan`): a lazy search ordered by the cost
so far alone. The library keeps one task at a time and the translator sets process-wide options
and `sys.argv`: one search at a time per process.
"""
from __future__ import annotations

import sys
import threading
from functools import cache
from typing import Any

from prag.errors import PragError

_LOCK = threading.Lock()


class RefusedProblem(PragError):
    """Fast Downward's translator refused a problem (it exits on a malformed one)."""


def solve(domain: str, problem: str) -> tuple[str, ...] | None:
    """The plan of a PDDL problem as Fast Downward's operator names (lower case, arguments
    after the action's name); None when there is none."""
    import fast_downward

    with _LOCK:
        argv = sys.argv
        try:
            _task, sas = fast_downward.pddl2sas(domain, problem, optimize=True)
        except SystemExit as refused:
            raise RefusedProblem(f"Fast Downward refused the problem ({refused})") from None
        finally:
            sys.argv = argv  # the translator sets it for its own options
        planner = _library()
        if not planner.solve_sas(sas.encode(), False):
            return None
        operators = (fast_downward.Operator * planner.get_last_plan_length())()
        planner.get_last_plan(operators)
        return tuple(op.name for op in operators)


@cache
def _library() -> Any:
    """This process's own copy of Fast Downward's library (textworld's games load theirs)."""
    import fast_downward

    return fast_downward.load_lib()
