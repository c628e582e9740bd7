"""The one contract for choosing a step: every source proposes, one arbiter adopts.

Each step the plan sources propose, in `--sources` order (`propose(view) -> Proposal | None`,
prag.agent.proposal); where the mediator (`--ask`, prag.agent.sources.mediator) then asks
instead of following, the asked source proposes: the LLM, or the person. A proposal is adopted, or
not, by the rule of its source's declared standing, and the arbiter follows the plan adopted
(When2Ask's actor). The whole of the adoption rules:

| standing   | sources (built in)               | keeps the plan being followed when       | adopted once an episode | proposing no plan          |
|------------|----------------------------------|------------------------------------------|-------------------------|----------------------------|
| `proven`   | experience                       | it has steps left                        | yes                     | keeps it                   |
| `searched` | search, progress                 | it is proven and its next step can be taken now | no               | ends the proposer's own plan |
| `guessed`  | the LLM, the person (asked)      | it has steps left and is not guessed     | no                      | keeps it                   |

Of a proposal's plans the first whose first step can be taken now is adopted, else the first that
did not start elsewhere (`Proposal.elsewhere`). A source a user registers (prag.agent.sources.chain)
takes its place by its position in `--sources` and its declared standing. Which source chose each
step is its plan's step source, recorded with the episode as before.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from prag.agent.plans import Follower, Names, Plan
from prag.agent.protocol import Decision
from prag.agent.sources.mediator import MediatorState
from prag.agent.proposal import Proposal, Proposer, Standing, View
from prag.envs.base import Observation
from prag.sources import StepSource


@dataclass(frozen=True)
class Following:
    """The plan being followed, where the arbiter is in it, and who proposed it."""

    follower: Follower
    standing: Standing
    by: Proposer


@dataclass(frozen=True)
class Rule:
    """How a proposal of one standing is adopted."""

    keeps: Callable[[Following, Sequence[str], Names], bool]  # the plan being followed stays
    once: bool  # a plan adopted once in the episode is not adopted again (it failed to go on once)
    empty_ends_own: bool  # proposing no plan ends the proposer's own plan being followed


RULES: dict[Standing, Rule] = {
    Standing.PROVEN: Rule(keeps=lambda now, admissible, names: now.follower.left > 0, once=True, empty_ends_own=False),
    Standing.SEARCHED: Rule(
        keeps=lambda now, admissible, names: now.standing is Standing.PROVEN
        and now.follower.step_now(admissible, names) is not None,
        once=False, empty_ends_own=True),
    Standing.GUESSED: Rule(
        keeps=lambda now, admissible, names: now.follower.left > 0 and now.standing is not Standing.GUESSED,
        once=False, empty_ends_own=False),
}


class Arbiter:
    """Holds the sources in their order, adopts their proposals by `RULES`, and follows the plan."""

    def __init__(self, names: Names, sources: Sequence[Proposer], asked: Proposer) -> None:
        self.names = names
        self.sources = list(sources)  # the plan sources, in `--sources` order
        self.asked = asked  # the LLM or the person, when the mediator asks
        self.following: Following | None = None
        self.adopted: list[Plan] = []  # the plans adopted by a rule adopted once an episode

    def restart(self) -> None:
        """The goal was revised: no plan is followed, and the plans adopted for the old reading
        may be adopted again for the new one."""
        self.following = None
        self.adopted = []

    def consult(self, observation: Observation) -> None:
        """Each plan source proposes for this observation, in order, and sees what the earlier ones' proposals left."""
        for source in self.sources:
            proposal = source.propose(View(observation, self))
            if proposal is not None:
                self._adopt(source, proposal, observation.admissible)

    def ask(self, observation: Observation) -> Decision:
        """The asked source's step (the plan moves on when it was the plan's next step anyway)
        and its plan for after it."""
        proposal = self.asked.propose(View(observation, self))
        assert proposal is not None and proposal.decision is not None, "the asked source always answers"
        same = self.took(proposal.decision.action, observation.admissible)
        self._adopt(self.asked, proposal, observation.admissible)
        return replace(proposal.decision, asked=True, same_plan=same)

    def _adopt(self, source: Proposer, proposal: Proposal, admissible: Sequence[str]) -> None:
        rule = RULES[source.standing]
        now = self.following
        if now is not None and rule.keeps(now, admissible, self.names):
            return
        fresh = [plan for plan in (*proposal.plans, *proposal.elsewhere) if not (rule.once and plan in self.adopted)]
        takeable = [plan for plan in fresh if Follower(plan).step_now(admissible, self.names) is not None]
        untakeable = [plan for plan in fresh if plan not in takeable and plan not in proposal.elsewhere]
        best = next(iter(takeable or untakeable), None)
        if best is not None:
            self.following = Following(Follower(best), source.standing, source)
            if rule.once:
                self.adopted.append(best)
        elif not proposal.plans and rule.empty_ends_own and now is not None and now.by is source:
            self.following = None

    @property
    def plan(self) -> Plan | None:
        """The plan being followed; None when there is none."""
        return self.following.follower.plan if self.following else None

    @property
    def left(self) -> int:
        """The steps of the plan being followed not yet taken."""
        return self.following.follower.left if self.following else 0

    @property
    def source(self) -> StepSource | None:
        """Where the plan being followed came from; None when there is none."""
        return self.plan.source if self.plan else None

    def step_now(self, admissible: Sequence[str]) -> str | None:
        """The admissible action the plan's next step stands for now, or None."""
        return self.following.follower.step_now(admissible, self.names) if self.following else None

    def follow(self, admissible: Sequence[str]) -> Decision | None:
        """The mediator follows the plan: its next step, chosen by the plan's source, or None
        where that cannot be taken now (passed over, not forced). The plan moves on either way."""
        assert self.following is not None, "a policy that does not ask has a plan to follow"
        follower = self.following.follower
        step = follower.step_now(admissible, self.names)
        follower.advance()
        return Decision(step, source=follower.plan.source, asked=False) if step is not None else None

    def took(self, action: str, admissible: Sequence[str]) -> bool:
        """An action was taken: the plan moves on when it was the plan's next step. True then."""
        if self.following is not None and self.step_now(admissible) == action:
            self.following.follower.advance()
            return True
        return False

    def state(
        self, t: int, max_steps: int, admissible: Sequence[str], last_changed: bool, steps_since_ask: int,
        asks: int, holding: bool,
    ) -> MediatorState:
        """What the mediator sees now."""
        return MediatorState(
            t=t, max_steps=max_steps, has_plan=self.following is not None,
            plan_source=self.source, plan_left=self.left,
            next_admissible=self.step_now(admissible) is not None, last_changed=last_changed,
            steps_since_ask=steps_since_ask, asks=asks, n_admissible=len(admissible), holding=holding,
        )
