"""A choice between things of a kind by a quantity each shows (prag.agent.skills.compared): "the inclined
plane with the most friction" measured by putting the same thing on each plane and looking at it,
read the way a stored episode's outcome says, the opposite degree ("least") the opposite way."""
from __future__ import annotations

import shutil
from collections import Counter

import pytest
from support import played_rounds, sciworld_spec

from prag.agent.config import AgentConfig
from prag.agent.skills.compared import LOOKS, READS, Comparative, Experiment, comparative, orientation, orientations, rates
from prag.envs.sciworld.domain import SCIWORLD
from prag.llm.scripted import ScriptedLLM
from prag.store.records import EpisodeRecord, StepRecord

IRON, LEAD = "inclined plane with a iron surface", "inclined plane with a lead surface"
MOST = ("Your task is to determine which of the two inclined planes (iron, lead) has the most friction. After "
        "completing your experiment, focus on the inclined plane with the most friction.")
ADMISSIBLE = [f"move {thing} to {plane}" for thing in ("steel block", "air") for plane in (IRON, LEAD)] + [
    "pick up steel block", f"look at {IRON}", f"look at {LEAD}"]


def slid(plane: str, per_step: int, looks: int, t0: int = 0) -> list[tuple[int, str | None, str]]:
    """A block put on `plane` at step t0 and looked at `looks` times, sliding `per_step` % a step."""
    put = [(t0, f"move steel block to {plane}", "You move the steel block to the inclined plane.")]
    return put + [(t0 + i, f"look at {plane}", f"an {plane}, with: a steel block approximately {per_step * i}% down the plane")
                  for i in range(1, looks + 1)]


def test_a_degree_of_a_property_is_a_comparative_description_and_a_kind_or_a_name_is_not() -> None:
    assert comparative("the inclined plane with the most friction") == Comparative("inclined plane", "most", "friction")
    shallow = comparative("the inclined plane with the shallowest angle")
    assert shallow is not None and (shallow.key, shallow.polarity) == ("inclined plane: angle", -1)
    assert comparative("a(n) animal") is None and comparative("the animal that barks") is None


def test_each_plane_s_rate_is_read_from_the_looks_since_a_thing_was_put_on_it() -> None:
    steps = slid(IRON, 2, READS) + slid(LEAD, 5, READS, t0=READS + 1)
    assert rates(steps, [IRON, LEAD], SCIWORLD) == {IRON: 2.0, LEAD: 5.0}
    assert rates(steps[:READS], [IRON, LEAD], SCIWORLD) == {}  # READS - 1 readings: not yet a rate


def test_the_experiment_puts_one_movable_thing_on_each_plane_and_looks_until_it_reads() -> None:
    experiment = Experiment([IRON, LEAD], SCIWORLD)
    # Air may be put on the planes but not picked up: the block is the probe.
    assert experiment.step([], ADMISSIBLE) == f"move steel block to {IRON}"
    steps = slid(IRON, 2, 1)
    assert experiment.step(steps, ADMISSIBLE) == f"look at {IRON}"
    steps = slid(IRON, 2, READS)
    assert experiment.step(steps, ADMISSIBLE) == f"move steel block to {LEAD}"
    steps += slid(LEAD, 5, READS, t0=READS + 1)
    assert experiment.step(steps, ADMISSIBLE) is None and experiment.done(steps)
    most = comparative("the inclined plane with the most friction")
    least = comparative("the inclined plane with the least friction")
    assert most is not None and least is not None
    # More friction reads as the slower plane (-1): the most is iron, the least lead; unknown: none.
    assert experiment.choice(steps, most, -1) == IRON and experiment.choice(steps, least, -1) == LEAD
    assert experiment.choice(steps, most, 0) is None


def test_a_thing_that_shows_no_number_is_dropped_for_the_next() -> None:
    admissible = [*ADMISSIBLE, "move battery to " + IRON, "move battery to " + LEAD, "pick up battery"]
    experiment = Experiment([IRON, LEAD], SCIWORLD)
    assert experiment.step([], admissible) == f"move battery to {IRON}"
    silent = [(0, f"move battery to {IRON}", "")] + [(i, f"look at {IRON}", f"an {IRON}, with: a battery") for i in range(1, LOOKS + 1)]
    assert experiment.step(silent, admissible) == f"move steel block to {IRON}"


def episode(goal: str, steps: list[tuple[int, str | None, str]], focus: str, score: float) -> EpisodeRecord:
    records = [StepRecord(0, None, "", "", "workshop", [], 10.0)]
    records += [StepRecord(t + 1, action, text, "", "workshop", [], 10.0) for t, action, text in steps]
    records.append(StepRecord(len(records), f"focus on {focus}", "", "", "workshop", [], score))
    return EpisodeRecord("r", 0, "t", "inclined-plane", goal, score >= 100, records)


def test_an_outcome_teaches_which_way_the_rate_reads_and_the_opposite_degree_reads_it_the_other_way() -> None:
    measured = slid(IRON, 2, READS) + slid(LEAD, 5, READS, t0=READS + 1)
    won = episode(MOST, measured, IRON, 100)  # iron, the slower, had the most friction
    learned = orientations([won], SCIWORLD)
    assert learned == {"inclined plane: friction": Counter({-1: 1})}
    failed = episode(MOST.replace("most", "least"), measured, IRON, -100)  # the slower was not the least
    assert orientations([failed], SCIWORLD) == learned
    unmeasured = episode(MOST, [], IRON, 100)
    assert orientations([unmeasured], SCIWORLD) == {}
    least = comparative("the inclined plane with the least friction")
    assert least is not None and orientation(learned, least) == -1


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_training_game_teaches_the_way_its_measurement_reads_to_the_test_game_of_another_task(tmp_path) -> None:
    """Trained on inclined-plane-friction-unnamed-surfaces (a dev variation; the stand-in LLM
    picks the first plane listed, right or wrong), the test game of -named-surfaces measures its
    planes the same way and takes the plane the lesson says, with no LLM question: won."""
    def first_listed(messages: list[dict[str, str]]) -> str:
        asked = messages[-1]["content"]
        return asked.split(": ", 1)[1].split(", ")[0].split(".")[0] if "Which one of them" in asked else "look around"

    trained, test = played_rounds(
        tmp_path, ScriptedLLM(first_listed, supports_choices=True),
        sciworld_spec(tmp_path, "named", "inclined-plane-friction-named-surfaces", "dev", 0, 60),
        AgentConfig(ask="hard-coded", sources=("experience", "search", "llm")),
        train=sciworld_spec(tmp_path, "unnamed", "inclined-plane-friction-unnamed-surfaces", "dev", 0, 60))
    assert orientations([trained], SCIWORLD) == {"inclined plane: friction": Counter({-1: 1})}
    looked = [step.action for step in test.steps if step.action and step.action.startswith("look at inclined plane")]
    assert len(looked) >= 6 and test.won and test.llm_calls == 0


@pytest.mark.skipif(shutil.which("java") is None, reason="ScienceWorld's simulator is a jar: install a Java runtime")
def test_a_correction_of_one_variation_teaches_which_way_another_variation_s_measurement_reads(tmp_path) -> None:
    """ScienceWorld's reference path of a train variation of inclined-plane-determine-angle, stored
    as a verified correction (the stand-in named as such), measures both planes and focuses on
    one: a test variation, with no episode stored, reads its "shallowest angle" that way (it
    focused on the steeper plane, the task failed, where only training episodes taught it)."""
    from prag.corrections.given import add_given, reference_transcript
    from prag.envs.spec import load_spec
    from prag.llm.scripted import RandomChoiceLLM
    from prag.retrieval.embed import EmbeddingCache
    from prag.store import Store
    from support import minilm

    train = sciworld_spec(tmp_path, "angle-train", "inclined-plane-determine-angle", "train", 0, 100)
    with Store(tmp_path / "played.db") as store:
        (task,) = [t.task_id for t in load_spec(train).open().tasks()]
        given = add_given(store, EmbeddingCache(store, minilm()), train, task, reference_transcript(train, task), "reference")
    assert given.stored is not None and given.stored.verified
    test = sciworld_spec(tmp_path, "angle-test", "inclined-plane-determine-angle", "test", 0, 60)
    (episode,) = played_rounds(tmp_path, RandomChoiceLLM(0), test,
                               AgentConfig(ask="hard-coded", sources=("experience", "search", "progress", "llm")))
    assert episode.won
