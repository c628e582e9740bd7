"""One contract for choosing a step (prag.agent.sources.arbiter): every source proposes, and the
arbiter adopts by the rule of the proposer's declared standing, one table for all of them. The
proposers here are scripted stand-ins (each proposes what it is given); the plans, their
adoption and the agent that plays them are the real ones."""
from __future__ import annotations

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.plans import Plan
from prag.agent.proposal import Proposal, Standing, View
from prag.agent.protocol import Decision
from prag.agent.sources.arbiter import RULES, Arbiter
from prag.envs.base import Observation, scene_text_from_triples
from prag.envs.domain import ALFWORLD
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.sources import StepSource

EXPERIENCE = Plan(("go to fridge 1", "open fridge 1"), StepSource.EPISODE, origin=1)
FIND = Plan(("go to cabinet 1",), StepSource.FIND)
BOTH = ["go to fridge 1", "go to cabinet 1"]


class Scripted:
    """A scripted stand-in source of a given standing: proposes what it was last given."""

    def __init__(self, standing: Standing, proposal: Proposal | None = None) -> None:
        self.standing = standing  # type: ignore[misc]  # declared per instance here, per class in prag
        self.proposal = proposal

    def propose(self, view: View) -> Proposal | None:
        return self.proposal

    def restart(self) -> None:
        pass


def seen(admissible: list[str]) -> Observation:
    return Observation("put a cup in the fridge.", "You are in the middle of a room.", admissible, [],
                       scene_text_from_triples(None, []))


def consulted(arbiter: Arbiter, admissible: list[str]) -> Plan | None:
    arbiter.consult(seen(admissible))
    return arbiter.plan


def test_every_standing_has_one_rule() -> None:
    assert set(RULES) == set(Standing)


def test_a_proven_plan_with_a_step_to_take_is_kept_over_a_searched_one_and_search_ends_only_its_own() -> None:
    experience, search = Scripted(Standing.PROVEN, Proposal.of(EXPERIENCE)), Scripted(Standing.SEARCHED, Proposal.of(FIND))
    arbiter = Arbiter(ALFWORLD, [experience, search], Scripted(Standing.GUESSED))
    assert consulted(arbiter, BOTH) is EXPERIENCE  # its step can be taken: it goes on
    experience.proposal = None
    assert consulted(arbiter, ["go to cabinet 1"]) is FIND  # its step cannot be taken now: search takes over
    search.proposal = Proposal()  # what it sought was seen
    assert consulted(arbiter, ["go to cabinet 1"]) is None  # the search plan ends
    other = Scripted(Standing.SEARCHED, Proposal.of(FIND))
    arbiter = Arbiter(ALFWORLD, [other, search], Scripted(Standing.GUESSED))
    assert consulted(arbiter, ["go to cabinet 1"]) is FIND  # another source's plan: search's nothing leaves it


def test_a_proven_plan_is_adopted_once_an_episode_and_one_that_started_elsewhere_only_where_it_can_start() -> None:
    elsewhere = Plan(("go to sofa 1",), StepSource.EPISODE, origin=2)
    experience = Scripted(Standing.PROVEN, Proposal((EXPERIENCE,)))
    arbiter = Arbiter(ALFWORLD, [experience], Scripted(Standing.GUESSED))
    assert consulted(arbiter, ["look"]) is EXPERIENCE  # no first step can be taken: the best all the same
    arbiter.following = None
    assert consulted(arbiter, BOTH) is None  # it failed to go on once
    arbiter.restart()  # the goal was revised: it may be adopted for the new reading
    assert consulted(arbiter, BOTH) is EXPERIENCE
    arbiter = Arbiter(ALFWORLD, [Scripted(Standing.PROVEN, Proposal((), (elsewhere,)))], Scripted(Standing.GUESSED))
    assert consulted(arbiter, ["look"]) is None
    assert consulted(arbiter, ["go to sofa 1"]) is elsewhere


def test_a_guess_replaces_only_a_plan_that_ran_out_or_another_guess() -> None:
    guess, second = Plan(("open fridge 1",), StepSource.LLM), Plan(("close fridge 1",), StepSource.LLM)
    asked = Scripted(Standing.GUESSED, Proposal((guess,), decision=Decision("go to cabinet 1")))
    search = Scripted(Standing.SEARCHED, Proposal.of(FIND))
    arbiter = Arbiter(ALFWORLD, [search], asked)
    arbiter.consult(seen(BOTH))
    decision = arbiter.ask(seen(BOTH))
    # The answer was the plan's next step: the plan moves on, and the ask is counted as returning it.
    assert (decision.action, decision.asked, decision.same_plan) == ("go to cabinet 1", True, True)
    assert arbiter.plan is guess  # the search plan ran out
    search.proposal, asked.proposal = None, Proposal((second,), decision=Decision("go to fridge 1"))
    assert arbiter.ask(seen(BOTH)).same_plan is False
    assert arbiter.plan is second  # a guess replaces a guess
    search.proposal = Proposal.of(Plan(("go to cabinet 1", "open cabinet 1"), StepSource.FIND))
    arbiter.consult(seen(BOTH))
    arbiter.ask(seen(BOTH))
    assert arbiter.plan is search.proposal.plans[0]  # not a searched plan with steps left
    arbiter = Arbiter(ALFWORLD, [Scripted(Standing.PROVEN, Proposal.of(EXPERIENCE))], asked)
    arbiter.consult(seen(BOTH))
    arbiter.ask(seen(BOTH))
    assert arbiter.plan is EXPERIENCE  # nor a proven one going on


def test_a_users_source_takes_its_place_by_declaring_its_standing() -> None:
    """The same plan, proposed by a source that declares it proven, is kept against search where
    its step can be taken; declared searched, search's next proposal replaces it."""
    mine = Plan(("go to fridge 1", "open fridge 1"), StepSource.EPISODE, origin=7)
    for standing, kept in ((Standing.PROVEN, True), (Standing.SEARCHED, False)):
        user = Scripted(standing, Proposal.of(mine))
        search = Scripted(Standing.SEARCHED, None)
        arbiter = Arbiter(ALFWORLD, [user, search], Scripted(Standing.GUESSED))
        assert consulted(arbiter, BOTH) is mine
        user.proposal, search.proposal = None, Proposal.of(FIND)
        assert (consulted(arbiter, BOTH) is mine) is kept


def test_the_step_taken_is_recorded_with_the_source_of_the_plan_that_chose_it() -> None:
    config = AgentConfig(ask="hard-coded", sources=("experience", "llm"), readers=("template",))
    agent = PragAgent(ScriptedLLM(["go to sofa 1"]), None, Visibility(), config, domain=ALFWORLD)
    observation = seen(BOTH)
    agent.reset(observation)
    agent.arbiter.sources.insert(0, Scripted(Standing.PROVEN, Proposal.of(EXPERIENCE)))
    decision = agent.act(observation)
    assert (decision.action, decision.source, decision.asked) == ("go to fridge 1", StepSource.EPISODE, False)
    assert agent.finish().report.decisions[0].source == "episode"
