"""A person's yes/no on the LLM's proposals (Soar ITL), on the real grid engine: an accepted
proposal is taken, a rejected one is not offered again at that step and the LLM is asked again,
after three rejections in a row the person is asked for the step in words (an admissible action
typed is taken as the person's; other words are heard and the LLM asked), and the effort is
counted. The LLM is a scripted stand-in; so is the person (`ScriptedPerson`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from conftest import plans_of, write_spec

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.person import Person
from prag.envs.base import Environment, Observation
from prag.envs.domain import GRID
from prag.envs.spec import load_spec
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.store.episode_extra import Choice, Effort


@dataclass
class ScriptedPerson:
    """A stand-in person: yes/no replies (or words instead) and instructions from lists, in order;
    what they were shown is recorded."""

    replies: list[bool | str] = field(default_factory=list)
    words: list[str | None] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    asked: int = 0

    def confirm(self, action: str, observation: Observation) -> bool | str:
        self.shown.append(action)
        return self.replies.pop(0)

    def confirm_reading(self, instruction: str, sentence: str | None) -> bool | str:
        return True

    def instruct(self, observation: Observation) -> str | None:
        self.asked += 1
        return self.words.pop(0)


@pytest.fixture(scope="module")
def groceries(tmp_path_factory: pytest.TempPathFactory) -> tuple[Environment, list[str]]:
    spec = write_spec(tmp_path_factory.mktemp("person"), "grid-person", ["put_away_groceries"], max_steps=30)
    (plan,) = plans_of(spec).values()
    source = load_spec(spec).open()
    return source.make(source.tasks()[0]), plan


def first_step(
    env: Environment, llm: ScriptedLLM, person: Person, config: AgentConfig | None = None
) -> tuple[PragAgent, str, Observation]:
    """The agent's first action with `person` beside it (three actions are admissible there)."""
    agent = PragAgent(llm, None, Visibility("r", 0), config or AgentConfig(), domain=GRID, person=person)
    observation = env.reset()
    agent.reset(observation)
    decision = agent.act(observation)
    agent.observe(decision.action, env.step(decision.action))
    return agent, decision.action, observation


def actions_offered(call: dict) -> str:
    """The prompt's line of admissible actions."""
    (line,) = [line for line in call["messages"][-1]["content"].splitlines() if line.startswith("Admissible actions:")]
    return line


def test_an_accepted_proposal_is_taken_and_counted_as_one_answer(groceries):
    env, plan = groceries
    person = ScriptedPerson(replies=[True])
    agent, action, _ = first_step(env, ScriptedLLM([plan[0]]), person)
    assert action == plan[0] and person.shown == [plan[0]]
    trace = agent.finish()
    assert trace.report.decisions == [Choice("llm", True, False)]
    assert trace.report.effort == Effort(0, 0, 1)


def test_a_rejected_proposal_is_not_offered_again_and_the_llm_is_asked_again(groceries):
    env, plan = groceries
    person = ScriptedPerson(replies=[False, True])
    llm = ScriptedLLM(["go to door 1", plan[0]])
    agent, action, _ = first_step(env, llm, person)
    assert action == plan[0] and person.shown == ["go to door 1", plan[0]]
    assert "door 1" in actions_offered(llm.calls[0]) and "door 1" not in actions_offered(llm.calls[1])
    assert agent.finish().report.effort.answers == 2


def test_three_rejections_ask_the_person_and_a_typed_admissible_action_is_theirs(groceries):
    env, plan = groceries
    person = ScriptedPerson(replies=[False, False, False], words=[f"  {plan[0].upper()} "])
    llm = ScriptedLLM(["go to door 1", "go to kitchen", plan[0]])
    agent, action, _ = first_step(env, llm, person)
    assert action == plan[0] and person.asked == 1 and len(llm.calls) == 3
    trace = agent.finish()
    assert trace.report.decisions == [Choice("person", True, False)]
    assert trace.report.effort == Effort(1, 4, 3)  # "go to table 1"
    assert trace.report.utterances == []  # an action is taken, not heard


def test_words_that_name_no_action_are_heard_and_the_llm_asked_again(groceries):
    env, plan = groceries
    # Two rejections in a row ask for words here; the rejected actions stay out at this step.
    person = ScriptedPerson(replies=[False, False, True], words=["the eggs are on the table"])
    llm = ScriptedLLM(["go to door 1", "go to kitchen", plan[0]])
    agent, action, _ = first_step(env, llm, person, AgentConfig(max_rejections=2))
    assert action == plan[0] and person.shown[-1] == plan[0] and person.asked == 1
    assert 'The person says: "the eggs are on the table"' in llm.calls[2]["messages"][-1]["content"]
    assert "kitchen" not in actions_offered(llm.calls[2])
    trace = agent.finish()
    assert trace.report.decisions == [Choice("llm", True, False)]  # the LLM chose, the person agreed
    assert trace.report.utterances == [(0, "the eggs are on the table")]
    assert trace.report.effort == Effort(1, 6, 3)


def test_words_instead_of_yes_or_no_choose_the_action(groceries):
    env, plan = groceries
    person = ScriptedPerson(replies=[plan[0]])
    agent, action, _ = first_step(env, ScriptedLLM(["go to door 1"]), person)
    assert action == plan[0] and person.asked == 0
    assert agent.finish().report.effort == Effort(1, len(plan[0].split()), 0)


def test_silence_when_asked_lets_the_llm_choose_unconfirmed(groceries):
    env, _ = groceries
    person = ScriptedPerson(replies=[False, False], words=[None])
    llm = ScriptedLLM(["go to door 1", "go to kitchen", "go to table 1"])
    _, action, _ = first_step(env, llm, person, AgentConfig(max_rejections=2))
    # The rejected actions are still not offered; the LLM's answer is taken without a yes.
    assert action == "go to table 1" and len(person.shown) == 2
    assert actions_offered(llm.calls[2]) == "Admissible actions: go to table 1"


def test_without_a_person_nothing_is_confirmed_or_counted(groceries):
    env, plan = groceries
    agent = PragAgent(ScriptedLLM([plan[0]]), None, Visibility("r", 0), domain=GRID)
    agent.reset(env.reset())
    agent.hear("start with the eggs")  # words from the console count even without yes/no
    assert agent.act(env.reset()).action == plan[0]
    assert agent.finish().report.effort == Effort(1, 4, 0)


def test_effort_adds_up_over_episodes():
    total = sum([Effort(1, 4, 2), Effort(0, 0, 3)], Effort())
    assert total == Effort(1, 4, 5)
