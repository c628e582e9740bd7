"""Goals read in open vocabulary (prag.agent.goals.fact_reader): facts sentences, the reader's grammar and
its answers (none among them), a verified reading re-worded with no model, a reading kept where a
learned model has no plan yet, and ALFWorld played with its goal templates withheld to a win."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support import played_rounds

from prag.agent.config import AgentConfig
from prag.agent.goals.fact_reader import FactsReader, facts_grammar, phrases
from prag.agent.goals.readers import ACT_ON, Context, no_recall
from prag.agent.protocol import Usage
from prag.envs import registry
from prag.envs.alfworld.model import goal_of_facts
from prag.envs.facts import HOLDS, PLACED, read_facts, state_predicate
from prag.envs.spec import load_spec
from prag.errors import SpecError
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.readings import ReadingHit
from prag.sources import KnowledgeSource
from tests.families import pantry


def test_a_facts_sentence_is_a_goal_over_the_shared_vocabulary() -> None:
    goal = read_facts("apple is clean; apple in fridge")
    assert goal is not None and goal.things == (("v0", "apple"), ("v1", "fridge"))
    assert goal.facts == ((state_predicate("clean"), "v0"), (PLACED, "v0", "v1"))
    two = read_facts("two mugs in cabinet")
    assert two is not None and two.kinds == ["cabinet", "mug", "mug"] and two.distinct == (("v1", "v2"),)
    held = read_facts("you hold pen; desklamp is on")
    assert held is not None and (HOLDS, "v0") in held.facts
    assert read_facts("none") is None and read_facts("the pen, please") is None


def test_alfworld_plans_to_the_facts_that_are_its_goal_formulas() -> None:
    assert goal_of_facts(read_facts("egg is heat; egg in countertop")).task_type == "pick_heat_then_place_in_recep"
    assert goal_of_facts(read_facts("two cellphones in bed")).task_type == "pick_two_obj_and_place"
    assert goal_of_facts(read_facts("you hold cd; desklamp is on")).task_type == "look_at_obj_in_light"
    assert goal_of_facts(read_facts("apple is clean; fridge is open; apple in fridge")) is None  # no formula of its


def context(instruction: str) -> Context:
    return Context(instruction, replace(pantry.DOMAIN, goals=(), goal_schema=None, goal_facts=None), ["shelf", "box"])


def test_the_llm_reads_under_a_grammar_of_facts_and_may_read_none() -> None:
    grammar = facts_grammar(phrases("put a cup in box"), ["cup"])
    assert '"none"' in grammar and '"cup in"' in grammar and '"a"' not in grammar  # articles are no things
    llm = ScriptedLLM(["cup in box", "none"])
    reader = FactsReader(llm, no_recall, Usage())
    (reading,) = reader.offer(context("put a cup in box"), [])
    assert reading.sentence == "cup in box" and reading.goal is None and reading.confidence < ACT_ON
    assert reader.offer(context("say hello"), []) == []  # none: played with no goal read
    assert reader.usage.cost.calls == 2


def test_a_verified_reading_of_the_same_template_is_re_worded_with_no_model() -> None:
    verified = [ReadingHit("put a clean apple in fridge", "apple is clean; apple in fridge", 0.8, 1)]
    reader = FactsReader(ScriptedLLM([]), lambda instruction, k=None: verified, Usage())
    (reading,) = reader.offer(context("put a clean mug in cabinet"), [])
    assert reading.sentence == "mug is clean; mug in cabinet" and reading.confidence >= ACT_ON
    assert reader.usage.cost.calls == 0


@pytest.fixture
def learned_pantry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The pantry with its goal schema withheld by the spec (goals = "learned")."""
    monkeypatch.setattr(registry, "FAMILIES", dict(registry.FAMILIES))
    registry.register("pantry", pantry.from_params, pantry.DOMAIN)
    spec = tmp_path / "pantry-learned.toml"
    spec.write_text('name = "pantry-learned"\nenv = "pantry"\ngoals = "learned"\nmax_steps = 12\n[params]\ntasks = 2\n')
    return str(spec)


def test_a_spec_withholds_its_family_s_goals_and_says_what_it_takes(learned_pantry: str, tmp_path: Path) -> None:
    domain = load_spec(learned_pantry).domain()
    assert domain.schema() is None and domain.goals == () and domain.goal_facts is None
    assert load_spec(str(Path(__file__).parent / "families" / "pantry.toml")).domain().schema() is not None
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('env = "pantry"\ngoals = "guessed"\nmax_steps = 5\n')
    with pytest.raises(SpecError, match="'goals' must be one of given, learned"):
        load_spec(str(wrong))


def test_a_reading_is_kept_where_the_learned_model_has_no_plan_yet(learned_pantry: str, tmp_path: Path) -> None:
    """Round 0's learned model is empty: search finds no plan for "cup in shelf", which says nothing
    against the reading (before, such a reading was dropped at once)."""
    def answer(messages) -> str:
        said = messages[-1]["content"]
        if "Instruction:" in said:  # the facts reader
            words = said.rsplit("Instruction: ", 1)[1].split()
            return f"{words[2]} in {words[4]}"  # "put a cup on table" -> "cup in table"
        return "look"
    config = AgentConfig(ask="hard-coded", sources=(KnowledgeSource.SEARCH, KnowledgeSource.LLM))
    played = played_rounds(tmp_path, ScriptedLLM(answer), learned_pantry, config)
    for episode in played:
        reading = episode.extra.reading
        assert reading is not None and reading.source == "facts" and " in " in str(reading.sentence)
        assert not [h for h in reading.hypotheses if h.dropped]


def test_alfworld_with_its_goal_templates_withheld_is_won_by_a_facts_reading(alfworld_data: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A real ALFWorld game, its schema withheld: the facts reader (a scripted stand-in answering
    as the local model reads such goals: "put some candle on toilet" -> "candle in toilet") gives
    the facts, and search plans to them with ALFWorld's own action model to a win, the win
    verifying the reading."""
    monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))
    spec = tmp_path / "learned.toml"
    spec.write_text('name = "learned"\nenv = "alfworld"\ngoals = "learned"\nmax_steps = 40\n'
                    '[params]\nsplit = "valid_seen"\ntask_types = ["pick_and_place_simple"]\nper_type = 1\n')

    def answer(messages) -> str:
        said = messages[-1]["content"]
        if "Instruction: put" not in said:
            return "look"
        words = said.rsplit("Instruction: put ", 1)[1].rstrip(".").split()
        return f"{words[1]} in {words[3]}"  # put some X on Y
    config = AgentConfig(ask="hard-coded", sources=(KnowledgeSource.SEARCH, KnowledgeSource.LLM))
    (episode,) = played_rounds(tmp_path, ScriptedLLM(answer), str(spec), config)
    assert episode.goal.startswith("put") and episode.won
    assert episode.extra.reading is not None and episode.extra.reading.source == "reward"
    assert {d.source for d in episode.extra.decisions} <= {"search", "find"}
