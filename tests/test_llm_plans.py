"""The LLM answers with a short plan (`AgentConfig.plan_length`): the grammar that keeps the first
line an admissible action (parsed and run by llama.cpp) and what a server is sent, the plan
followed without asking under `hard-coded` on the real grid engine, a plan line that is not
admissible then, the answer cache's key, and `prag run --plan-length`. The LLM is a scripted
stand-in, except in the grammar tests (llama.cpp's own grammar sampler) and the slow test (the
local 0.5B model)."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import plans_of, write_spec
from typer.testing import CliRunner

from prag.agent.agent import PragAgent
from prag.agent.asking.prompt import act_instruction
from prag.agent.config import AgentConfig
from prag.agent.plans import Plan
from prag.cli import _register, app, common
from prag.envs.base import Environment, Observation
from prag.envs.domain import GRID
from prag.envs.spec import load_spec
from prag.errors import LLMError
from prag.llm.base import choice_grammar
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.run.config import RunConfig
from prag.store import Store
from prag.store.answers import cached

_register()

# The instruction of a one-action answer, as it was before plans existed: plan_length 1 keeps it.
ONE_ACTION = "Now reply with the next action only, exactly as written in the admissible actions."
CHOICES = ["go to table 1", "go to kitchen", "open fridge 1"]


# --- the grammar, through llama.cpp ------------------------------------------------------------


def test_the_plan_grammar_forces_an_admissible_first_line_then_free_lines(accepts):
    plan = choice_grammar(CHOICES, more_lines=2)
    assert accepts(plan, "go to table 1\npick up eggs 1\ngo to kitchen")
    assert accepts(plan, "open fridge 1")  # the plan may be the action alone
    assert not accepts(plan, "go to door 1\ngo to table 1")  # the first line must be a choice
    assert not accepts(plan, "pick up eggs 1")
    assert not accepts(plan, "go to table 1\na\nb\nc")  # at most plan_length lines
    assert not accepts(plan, "go to table 1\n\nb")  # no empty step
    single = choice_grammar(CHOICES)
    assert accepts(single, "go to kitchen")
    assert not accepts(single, "go to kitchen\ngo to table 1")  # one action: nothing after it


def test_a_llama_cpp_server_gets_the_plan_grammar_and_vllm_the_first_action_only(fake_openai):
    from prag.llm.openai_backend import OpenAILLM

    plan = "go to table 1\npick up eggs 1 from the table where they were left\ngo to kitchen"
    fake_openai.answer(fake_openai.Answer(fake_openai.chat(plan)))
    ask = [{"role": "user", "content": "Plan."}]
    grammar = OpenAILLM("m", base_url=fake_openai.url, timeout=2, constraint="grammar")
    assert grammar.complete(ask, choices=CHOICES, more_lines=2, max_tokens=72).text == plan  # not cut to one action
    assert fake_openai.requests[-1][1]["grammar"] == choice_grammar(CHOICES, more_lines=2)
    vllm = OpenAILLM("m", base_url=fake_openai.url, timeout=2, constraint="vllm")
    vllm.complete(ask, choices=CHOICES, more_lines=2, max_tokens=72)
    sent = fake_openai.requests[-1][1]
    assert sent["structured_outputs"] == {"choice": CHOICES} and "grammar" not in sent


# --- the agent, on the real grid engine --------------------------------------------------------


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """A one-task grid spec and its solver's plan."""
    spec = write_spec(tmp_path_factory.mktemp("plans"), "llm-plans", ["put_away_groceries"], max_steps=30)
    return spec, next(iter(plans_of(spec).values()))


def environment(spec: str) -> Environment:
    source = load_spec(spec).open()
    return source.make(source.tasks()[0])


def planner(plan: list[str], length: int, spoil: dict[int, str] | None = None) -> Callable[[list], str]:
    """Answers for the scripted stand-in: the solver's next `length` steps from where the
    episode is, one per line; `spoil` replaces the step of that index with other text where
    it is planned ahead (a later line), not where it is the action taken now."""

    def answer(messages: list) -> str:
        done = sum(line.startswith("> ") for line in messages[-1]["content"].splitlines())
        later = [(spoil or {}).get(i, plan[i]) for i in range(done + 1, min(done + length, len(plan)))]
        return "\n".join([plan[done], *later])

    return answer


def play(spec: str, llm: ScriptedLLM, **config: object) -> tuple[Observation, PragAgent, list[str]]:
    """One episode to its end: the last observation, the agent and the actions taken."""
    env = environment(spec)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(**config), domain=GRID)  # type: ignore[arg-type]
    observation = env.reset()
    agent.reset(observation)
    actions = []
    while not observation.done:
        action = agent.act(observation).action
        actions.append(action)
        observation = env.step(action)
        agent.observe(action, observation)
    return observation, agent, actions


def test_one_action_per_answer_asks_as_before(grid):
    spec, _ = grid
    observation = environment(spec).reset()
    calls = {}
    for length in (1, 3):
        llm = ScriptedLLM(["go to table 1"])
        agent = PragAgent(llm, None, Visibility(), AgentConfig(plan_length=length), domain=GRID)
        agent.reset(observation)
        agent.act(observation)
        calls[length] = llm.calls[0]
    one, three = calls[1], calls[3]
    assert act_instruction(1) == ONE_ACTION
    assert one["messages"][-1]["content"].endswith("\n\n" + ONE_ACTION)
    assert (one["stop"], one["max_tokens"], one["more_lines"]) == (["\n"], 24, 0)
    # Only the instruction and the decoding settings differ: the prompt before them is the same.
    before = one["messages"][-1]["content"].removesuffix(ONE_ACTION)
    assert three["messages"][:-1] == one["messages"][:-1]
    assert three["messages"][-1]["content"] == before + act_instruction(3)
    assert "up to 2 further actions" in act_instruction(3)
    assert (three["stop"], three["max_tokens"], three["more_lines"]) == (["\n\n"], 72, 2)


def test_a_backend_that_constrains_gets_the_choices_and_room_for_the_plan(grid):
    spec, _ = grid
    observation = environment(spec).reset()
    for length, more in ((1, 0), (4, 3)):
        llm = ScriptedLLM(["go to table 1"], supports_choices=True)
        agent = PragAgent(llm, None, Visibility(), AgentConfig(plan_length=length), domain=GRID)
        agent.reset(observation)
        agent.act(observation)
        assert llm.calls[0]["choices"] == observation.admissible
        assert (llm.calls[0]["more_lines"], llm.calls[0]["stop"]) == (more, None)


def test_hard_coded_takes_the_first_action_and_follows_the_rest_without_asking(grid):
    spec, plan = grid
    llm = ScriptedLLM(planner(plan, 5))
    last, agent, actions = play(spec, llm, ask="hard-coded", plan_length=5)
    assert last.won and actions == plan
    # 15 steps from 3 answers: each plan of 5 replaces the one that ran out.
    assert len(llm.calls) == 3
    asked = [i for i, d in enumerate(agent.state.decisions) if d.asked]
    assert asked == [0, 5, 10]
    assert {d.source for d in agent.state.decisions} == {"llm"}
    assert not any(d.same_plan for d in agent.state.decisions)


def test_a_plan_line_that_is_not_admissible_then_makes_hard_coded_ask(grid):
    spec, plan = grid
    # The answer at step 0 plans "fly to the fridge" for step 2: never admissible.
    llm = ScriptedLLM(planner(plan, 4, spoil={2: "fly to the fridge"}))
    last, agent, actions = play(spec, llm, ask="hard-coded", plan_length=4)
    assert "fly to the fridge" not in actions  # not forced
    assert actions[:3] == plan[:3] and last.won
    assert [d.asked for d in agent.state.decisions[:4]] == [True, False, True, False]


def test_asking_every_step_marks_the_answers_that_were_the_plans_next_step(grid):
    spec, plan = grid
    last, agent, _ = play(spec, ScriptedLLM(planner(plan, 3)), ask="always", plan_length=3)
    assert last.won
    # Every answer after the first began with the step the previous answer had planned.
    assert [d.same_plan for d in agent.state.decisions] == [False] + [True] * (len(plan) - 1)


# --- the answer cache ---------------------------------------------------------------------------


def test_answer_cache_keys_differ_for_one_action_and_a_plan(grid, tmp_path):
    spec, _ = grid
    observation = environment(spec).reset()
    inner = ScriptedLLM(lambda messages: "go to table 1\npick up eggs 1")
    with Store(tmp_path / "answers.db") as store:
        llm = cached(inner, store)
        for length in (1, 3, 1, 3):
            agent = PragAgent(llm, None, Visibility(), AgentConfig(plan_length=length), domain=GRID)
            agent.reset(observation)
            agent.act(observation)
        assert len(inner.calls) == 2  # one miss each; the second round of both was served
        stats = store.answers.stats()["scripted"]
        assert (stats["rows"], stats["hits"], stats["misses"]) == (2, 2, 2)
        # The same messages asked for one action or for a plan are two answers.
        messages = inner.calls[0]["messages"]
        for more in (0, 2):
            llm.complete(messages, max_tokens=24, stop=["\n"], more_lines=more)
        assert len(inner.calls) == 3 and inner.calls[-1]["more_lines"] == 2


# --- the command line ---------------------------------------------------------------------------


def test_prag_run_plan_length_is_played_and_recorded(grid, tmp_path, monkeypatch):
    spec, plan = grid
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(common, "test_llm", lambda _: ScriptedLLM(planner(plan, 5)))
    db = tmp_path / "s.db"
    result = CliRunner().invoke(
        app, ["run", spec, "--store", str(db), "--rounds", "1", "--name", "plans", "--no-corrections",
              "--ask", "hard-coded", "--sources", "experience,llm", "--plan-length", "5"], env={"COLUMNS": "300"},
    )
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        assert RunConfig.from_dict(store.run("plans").config).agent.plan_length == 5
        (episode,) = store.episodes("plans")
    assert episode.won and episode.n_actions == len(plan) and episode.llm_calls == 3


# --- the real model -----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_local_model_answers_a_plan_the_agent_can_follow(grid):
    from prag.llm import make_llm

    try:
        llm = make_llm("local:0.5b", n_ctx=4096)
    except LLMError as exc:
        pytest.skip(f"the local 0.5B model is not available: {exc}")
    spec, _ = grid
    observation = environment(spec).reset()
    agent = PragAgent(llm, None, Visibility(), AgentConfig(plan_length=3), domain=GRID)
    agent.reset(observation)
    decision = agent.act(observation)
    assert decision.valid and decision.action in observation.admissible  # the grammar's first line
    assert agent.arbiter.plan is not None and agent.arbiter.source == "llm"
    assert len(agent.arbiter.plan.steps) <= 2
    assert agent.llm_step.usage.cost.calls == 1 and agent.llm_step.usage.reasks == 0


def test_thousands_of_choices_make_a_word_trie_that_admits_exactly_them(accepts):
    """ScienceWorld offers thousands of actions: the grammar shares their common words (one rule
    per trie node, not one alternative per action) and still admits each and nothing else."""
    things = ["metal pot", "sink", "orange in bowl", "cup containing water", "stove"]
    choices = [f"move {a} to {b}" for a in things for b in things if a != b] + ["go to kitchen", "go", "look around"]
    grammar = choice_grammar(choices)
    assert grammar.count('"move"') == 1 and grammar.count('"to"') < len(choices) / 2  # shared words, once each
    for choice in choices:
        assert accepts(grammar, choice)
    for wrong in ("move metal pot to", "move metal pot to metal pot", "go to", "look", "go kitchen", "look around now"):
        assert not accepts(grammar, wrong)
