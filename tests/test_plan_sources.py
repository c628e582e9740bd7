"""Plan sources behind one interface (prag.agent.proposal.Proposer): the agent builds its chain from the
registry (prag.agent.sources.chain) in `--sources` order, so a new source is one class and one line. The
example here proposes "look" when no earlier source has a step to take."""
from __future__ import annotations

import pytest

from prag.agent.agent import PragAgent, parse_sources
from prag.agent.config import AgentConfig
from prag.agent.plans import Plan
from prag.agent.proposal import Proposal, Standing, View
from prag.agent.sources.chain import PLAN_SOURCES, source_names
from prag.agent.sources.experience_plans import ExperiencePlans
from prag.agent.sources.plan_source import Planning
from prag.agent.sources.search_plans import SearchPlans
from prag.cli.common import sources_help
from prag.envs.base import Observation, scene_text_from_triples
from prag.envs.domain import ALFWORLD
from prag.errors import PragError
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.sources import StepSource

ADMISSIBLE = ["look", "go to table 1", "go to sofa 1"]


class LookAround:
    """An example source: "look" when the plan being followed has no step it can take here."""

    standing = Standing.SEARCHED
    consulted: list[int] = []  # the steps it was asked at

    def __init__(self, planning: Planning) -> None:
        self.planning = planning

    def propose(self, view: View) -> Proposal | None:
        LookAround.consulted.append(self.planning.state.t)
        if view.step_now() is None and "look" in view.observation.admissible:
            return Proposal.of(Plan(("look",), StepSource.FIND, goal=self.planning.goal.sentence))
        return None

    def restart(self) -> None:
        pass


@pytest.fixture
def look(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PLAN_SOURCES, "look", LookAround)  # the one line that adds a source
    monkeypatch.setattr(LookAround, "consulted", [])


def seen() -> Observation:
    return Observation("put some newspaper on ottoman.", "You are in the middle of a room.", ADMISSIBLE, [],
                       scene_text_from_triples(None, []))


def agent(sources: tuple[str, ...], ask: str = "hard-coded") -> PragAgent:
    config = AgentConfig(ask=ask, sources=sources, readers=("template",))
    return PragAgent(ScriptedLLM(["go to sofa 1"]), None, Visibility(), config, domain=ALFWORLD)


def test_the_chain_follows_the_sources_order(look: None) -> None:
    played = agent(("look", "search", "experience", "llm"))
    played.reset(seen())
    assert [type(source) for source in played.arbiter.sources] == [LookAround, SearchPlans, ExperiencePlans]
    played = agent(("experience", "llm", "look"))
    played.reset(seen())
    assert [type(source) for source in played.arbiter.sources] == [ExperiencePlans, LookAround]


def test_the_cli_takes_a_registered_source_by_name_and_describes_it(look: None) -> None:
    assert parse_sources("look,experience,llm") == ("look", "experience", "llm")
    assert source_names()[-2:] == ("llm", "person")
    assert ("look (An example source: \"look\" when the plan being followed has no step it can take here.)"
            in sources_help(source_names()))


def test_an_unregistered_source_is_an_error_naming_the_registered_ones() -> None:
    with pytest.raises(PragError, match="experience, search, progress, llm, person"):
        parse_sources("look,llm")


def test_an_example_source_gives_the_step_when_no_earlier_one_does(look: None) -> None:
    played = agent(("experience", "look", "llm"))
    played.reset(seen())
    decision = played.act(seen())
    assert (decision.action, decision.source, decision.asked) == ("look", StepSource.FIND, False)
    assert LookAround.consulted == [1] and isinstance(played.settings.llm, ScriptedLLM) and played.settings.llm.calls == []


def test_a_mediator_that_always_asks_consults_no_plan_source(look: None) -> None:
    played = agent(("look", "llm"), ask="always")
    played.reset(seen())
    decision = played.act(seen())
    assert (decision.action, decision.source, decision.asked) == ("go to sofa 1", StepSource.LLM, True)
    assert LookAround.consulted == []
