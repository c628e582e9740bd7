"""The words reader: kinds named in an instruction, in English or Korean, read into goals with no
model, and what it tells the LLM reader when the words leave a doubt."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support import play_until_won

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.goals.readers import ACT_ON, Context, LLMReader, TemplateReader, WordsReader, read
from prag.agent.protocol import Usage
from prag.envs.alfworld.env import AlfworldEnv
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.alfworld.goals import schema
from prag.envs.base import Task
from prag.envs.domain import ALFWORLD
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.retrieval.readings import ReadingHit

ROOM = ["cabinet", "countertop", "sinkbasin", "fridge", "diningtable", "drawer", "sidetable", "shelf"]


def context(words: str, room: list[str] = ROOM) -> Context:
    return Context(words, ALFWORLD, list(room))


def chain(llm: ScriptedLLM) -> list:
    return [TemplateReader(), WordsReader(), LLMReader(llm, lambda words: [], Usage())]


def named(words: str) -> list[tuple[str, tuple[str, ...], bool, bool, bool]]:
    return [(m.words, m.kinds, m.leaving, m.near, m.plural) for m in schema().mentions(words)]


def test_words_name_kinds_as_people_say_them_the_longest_words_first():
    assert named("to pick up a coffee mug and put it on the night stand") == [
        ("coffee mug", ("mug",), False, False, False), ("night stand", ("sidetable",), False, False, False)]
    # "table" names several kinds, likeliest first; "knife" its own kind before the butter knife
    assert named("Put the knife on the table")[0][1] == ("knife", "butterknife")
    assert set(named("Put the knife on the table")[1][1]) >= {"diningtable", "coffeetable", "sidetable"}


def test_a_place_things_are_taken_from_or_named_beside_another_is_marked():
    take, put, beside = schema().mentions("Take the cup from the sink and put it in the cabinet under the sink")[1:]
    assert (take.words, take.leaving) == ("sink", True)
    assert (put.words, put.leaving, put.near) == ("cabinet", False, False)
    assert (beside.words, beside.near) == ("sink", True)


def test_plurals_are_read_as_their_kind_and_marked():
    assert named("Put two knives in a drawer.")[0] == ("knives", ("knife", "butterknife"), False, False, True)
    assert named("place two glass bottles")[0][:2] == ("glass bottles", ("glassbottle",))
    assert named("Put the boxes of tissues on the toilet")[0][:2] == ("boxes of tissues", ("tissuebox",))


def test_korean_words_are_found_with_their_particles():
    assert named("깨끗하게 씻은 국자를 조리대에 놓으세요.") == [
        ("국자", ("ladle",), False, False, False), ("조리대", ("countertop",), False, False, False)]
    assert named("선반에서 책을 꺼내 침대에 놓으세요.")[0][:3] == ("선반", ("shelf", "cart"), True)  # taken from
    assert named("책상 램프 불빛에 CD를 확인하세요.")[1][:2] == ("cd", ("cd",))  # a Latin word before a particle


@pytest.mark.parametrize("words, sentence", [
    ("to pick up a coffee mug and put it on the night stand", "put a mug in sidetable"),
    ("Take the apple from the sink and put it in the cabinet under the sink", "put a apple in cabinet"),
    ("Rinse off the ladle and set it on the counter.", "put a clean ladle in countertop"),
    ("Place a microwaved potato on the dining table.", "put a hot potato in diningtable"),
    ("Put a chilled tomato on the shelf.", "put a cool tomato in shelf"),
    ("Put the pillows on the shelf.", "put two pillow in shelf"),  # plural: more than one
    ("깨끗하게 씻은 국자를 조리대에 놓으세요.", "put a clean ladle in countertop"),
    ("데운 감자를 식탁 위에 놓으세요.", "put a hot potato in diningtable"),
    ("사과 두 개를 냉장고에 넣으세요.", "put two apple in fridge"),
])
def test_words_naming_one_kind_each_are_read_and_acted_on_with_no_llm_call(words, sentence):
    llm = ScriptedLLM([])  # any call fails
    best = read(chain(llm), context(words))[0]
    assert (best.sentence, best.source, best.confidence) == (sentence, "words", ACT_ON)
    assert llm.calls == []


def test_a_kind_named_in_a_general_plural_and_then_one_is_one():
    words = ("In our living room, books are often placed on the shelf for easy access. "
             "After you have finished with the book, please put it where we usually keep it.")
    assert read([WordsReader()], context(words))[0].sentence == "put a book in shelf"


def test_words_that_name_several_kinds_leave_the_llm_only_those():
    llm = ScriptedLLM(["put a clean butterknife in drawer"], supports_choices=True)
    readings = read(chain(llm), context("Put a washed knife in the drawer."))
    # the LLM's reading first, the words' other reading kept as the next hypothesis
    assert [(r.sentence, r.source) for r in readings] == [
        ("put a clean butterknife in drawer", "llm"), ("put a clean knife in drawer", "words")]
    call = llm.calls[0]
    obj = next(line for line in call["grammar"].splitlines() if line.startswith("obj ::="))
    assert '"knife"' in obj and '"butterknife"' in obj and '"apple"' not in obj
    assert "Words naming kinds: 'knife': knife or butterknife" in call["messages"][-1]["content"]


def test_a_word_for_several_kinds_gives_each_as_a_hypothesis_its_own_kind_first():
    things = [dict(r.goal.slots)["obj"] for r in read([WordsReader()], context("Put a spoon in the drawer."))]
    assert things == ["spoon", "ladle"]  # a ladle is a spoon too, when no spoon is found
    assert named("Put two bottles in a cabinet under the sink.")[0][1] == (
        "glassbottle", "winebottle", "spraybottle", "soapbottle")


@pytest.mark.parametrize("words, also", [
    ("Take the cup out of the microwave, put it in the fridge, back in the microwave.", "put a cool cup in microwave"),
    ("Put the potato in the microwave and then on the counter.", "put a hot potato in countertop"),
])
def test_a_place_that_changes_things_named_on_the_way_asks_for_its_change_as_a_hypothesis(words, also):
    readings = [r.sentence for r in read([WordsReader()], context(words, [*ROOM, "microwave"]))]
    assert readings[0].startswith("put a ") and also in readings


def test_a_place_that_changes_things_asks_nothing_when_the_thing_is_taken_from_it_or_left_in_it():
    for words in ("Take the apple from the fridge and put it on the counter.", "Put the apple in the fridge.",
                  "Put the apple on the counter by the fridge."):
        assert {r.goal.task for r in read([WordsReader()], context(words))} == {"pick_and_place_simple"}, words


def verified(*pairs: tuple[str, str]):
    """A recall of these verified readings, nearest first, the `k` nearest (5 unless asked)."""
    return lambda instruction, k=None: [ReadingHit(wording, sentence, 0.5, 1) for wording, sentence in pairs][: k or 5]


def test_words_naming_several_kinds_take_the_kind_verified_readings_gave_them_acted_on_when_always_that():
    llm = ScriptedLLM([])  # any call fails
    words = "Leave the apple on the table."  # "table": a dining table first, where a room has one
    recall = verified(("Place a potato on the table", "put a potato in sidetable"),
                      ("move the book to the table", "put a book in sidetable"))
    readings = read([TemplateReader(), WordsReader(recall), LLMReader(llm, recall, Usage())], context(words))
    assert [(r.sentence, r.source) for r in readings[:2]] == [
        ("put a apple in sidetable", "words"), ("put a apple in diningtable", "words")]
    assert readings[0].confidence == ACT_ON and "'table' sidetable" in readings[0].why
    assert llm.calls == []


def test_a_kinds_own_name_keeps_that_kind_first_whatever_else_people_meant_by_it():
    recall = verified(("Put the knife in the sink.", "put a butterknife in sinkbasin"),
                      ("Slice bread with the knife, then put the knife down", "put a butterknife in countertop"))
    offered = WordsReader(recall).offer(context("Leave a knife in the drawer."), [])
    assert [r.sentence for r in offered] == ["put a knife in drawer", "put a butterknife in drawer"]
    assert offered[0].confidence < ACT_ON


def test_what_words_meant_is_learned_from_the_nearest_wordings_that_use_them_past_the_nearest_five():
    llm = ScriptedLLM([])  # any call fails
    others = [(f"Put the {thing} in the fridge.", f"put a {thing} in fridge") for thing in
              ("apple", "egg", "lettuce", "potato", "tomato", "bread")]
    recall = verified(*others, ("Place a potato on the table", "put a potato in sidetable"),
                      ("move the book to the table", "put a book in sidetable"))
    readings = read([TemplateReader(), WordsReader(recall), LLMReader(llm, recall, Usage())],
                    context("Leave the apple on the table."))
    assert readings[0].sentence == "put a apple in sidetable" and readings[0].confidence == ACT_ON
    assert llm.calls == []


def test_words_that_meant_one_kind_three_times_for_each_other_are_read_as_it():
    llm = ScriptedLLM([])  # any call fails
    recall = verified(*[(f"Put the {thing} on the table.", f"put a {thing} in sidetable") for thing in ("mug", "pen", "book")],
                      ("move the cup to the table", "put a cup in diningtable"))
    readings = read([TemplateReader(), WordsReader(recall), LLMReader(llm, recall, Usage())],
                    context("Leave the apple on the table."))
    assert [r.sentence for r in readings[:2]] == ["put a apple in sidetable", "put a apple in diningtable"]
    assert readings[0].confidence == ACT_ON and llm.calls == []


def test_cues_naming_two_tasks_take_the_task_verified_readings_gave_them():
    words = context("Put a heated egg in the fridge to cool it down.")  # heated, and cool
    llm = ScriptedLLM(["put a hot egg in fridge"], supports_choices=True)
    read([TemplateReader(), WordsReader(), LLMReader(llm, lambda words: [], Usage())], words)
    assert len(llm.calls) == 1  # no experience: the LLM chooses
    recall = verified(("we cool down heated potatoes in the fridge", "put a hot potato in fridge"),
                      ("cool the heated mug in the fridge", "put a hot mug in fridge"))
    llm = ScriptedLLM([])  # any call fails
    readings = read([TemplateReader(), WordsReader(recall), LLMReader(llm, recall, Usage())], words)
    assert [r.goal.task for r in readings[:2]] == ["pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep"]
    assert readings[0].confidence == ACT_ON and llm.calls == []


@pytest.mark.parametrize("pairs", [
    [("Put the mug on the table.", "put a mug in sidetable")],  # once only
    [("Put the mug on the table.", "put a mug in sidetable"), ("move the cup to the table", "put a cup in diningtable"),
     ("a pen goes on the table", "put a pen in sidetable")],  # not three times for each other
])
def test_words_meaning_a_kind_once_or_not_three_to_one_are_ordered_by_it_but_left_to_the_llm(pairs):
    llm = ScriptedLLM(["put a apple in diningtable"], supports_choices=True)
    recall = verified(*pairs)
    instruction = context("Leave the apple on the table.")
    offered = WordsReader(recall).offer(instruction, [])
    assert [r.sentence for r in offered] == ["put a apple in sidetable", "put a apple in diningtable"]
    assert offered[0].confidence < ACT_ON
    read([TemplateReader(), WordsReader(recall), LLMReader(llm, recall, Usage())], instruction)
    assert len(llm.calls) == 1


def test_a_place_left_unsaid_is_first_where_verified_readings_put_such_a_thing():
    unsaid = context("Put the mug away.")
    before = [dict(r.goal.slots)["recep"] for r in WordsReader().offer(unsaid, [])]
    recall = verified(("Put the mug back.", "put a mug in shelf"), ("a mug goes away", "put a mug in shelf"),
                      ("Put the apple away.", "put a apple in fridge"))
    after = [dict(r.goal.slots)["recep"] for r in WordsReader(recall).offer(unsaid, [])]
    assert before[0] != "shelf" and after[0] == "shelf" and set(after) <= set(before) | {"shelf"}


def test_readers_that_agree_make_a_reading_surer_than_either():
    llm = ScriptedLLM(["put a clean knife in drawer"], supports_choices=True)
    best = read(chain(llm), context("Put a washed knife in the drawer."))[0]
    assert best.sentence == "put a clean knife in drawer" and best.confidence > 0.6
    assert best.source == "llm" and "words agrees" in best.why


def test_a_lamp_left_unsaid_does_not_keep_the_words_from_acting():
    llm = ScriptedLLM([])
    best = read(chain(llm), context("Pick up the CD and turn on the lamp."))[0]
    assert best.goal is not None and best.goal.task == "look_at_obj_in_light" and best.confidence == ACT_ON
    assert dict(best.goal.slots)["obj"] == "cd"  # the lamp's kind is play's to settle (readers' unsaid)


def test_a_place_left_unsaid_is_the_llms_guess_then_each_place_the_world_keeps_such_things_in():
    llm = ScriptedLLM(["put a clean fork in drawer"], supports_choices=True)
    readings = read(chain(llm), context("Wash the fork."))  # no place named: the LLM is asked
    assert (readings[0].sentence, readings[0].source) == ("put a clean fork in drawer", "llm")
    places = [dict(r.goal.slots)["recep"] for r in readings[1:]]
    assert places and all(r.source == "words" for r in readings[1:])
    assert set(places) <= set(ROOM) and "fridge" not in places  # a fork is never kept in the fridge
    assert len(llm.calls) == 1


@pytest.fixture(scope="module")
def cool_plate_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated medium ALFWorld game: cool a plate and put it on the shelf."""
    return generate_game("pick_cool_then_place_in_recep", 3, tmp_path_factory.mktemp("games"), DIFFICULTIES["medium"])


@pytest.mark.parametrize("words", ["Cool the dish down, then leave it on the shelf.", "차가운 접시를 선반 위에 놓으세요."])
def test_words_read_on_a_real_game_are_played_by_search_with_no_llm_call(cool_plate_game, words):
    env = AlfworldEnv(Task("worded", "", 0, str(cool_plate_game)), cool_plate_game, words)
    llm = ScriptedLLM([])  # any call fails
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("experience", "search", "llm")),
                      domain=ALFWORLD)
    assert play_until_won(env, agent, 50)
    reading = agent.finish().report.reading
    assert reading is not None and (reading.sentence, reading.source) == ("put a cool plate in shelf", "words")
    assert llm.calls == []


def test_a_reading_search_finds_no_way_to_is_dropped_once_all_it_needs_was_seen(cool_plate_game):
    env = AlfworldEnv(Task("worded", "", 0, str(cool_plate_game)), cool_plate_game, "take care of it and put it on the shelf")
    # The world cannot clean a wine bottle: the first reading names what is there but cannot be done.
    # A family that does not say what its world never changes (as a user's own may not) learns it
    # from search; ALFWorld's table of what it cleans says so before a step.
    for domain, why in ((dataclasses.replace(ALFWORLD, never_done=None), "search finds no plan for it from what was seen"),
                        (ALFWORLD, "a winebottle is never cleaned")):
        llm = ScriptedLLM(["put a clean winebottle in shelf", "put a cool plate in shelf"])
        agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("experience", "search", "llm")),
                          domain=domain)
        assert play_until_won(env, agent, 50)
        reading = agent.finish().report.reading
        assert reading is not None and reading.sentence == "put a cool plate in shelf" and len(llm.calls) == 2
        assert reading.hypotheses[0].dropped == why
