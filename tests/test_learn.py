"""learn_from_interaction's three turns and discard rules (a scripted stand-in for the improvement
LLM), replay verification on the real grid world, and `prag correct` from feedback or an edit."""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import (
    ADVICE,
    PROBLEM,
    plan_follower,
    plan_transcript,
    plans_of,
    write_spec,
)
from support import minilm
from typer.testing import CliRunner

import prag.cli.correct_cmd as correct_cmd
from prag.cli import _register, app
from prag.corrections.learn import (
    correct_episode,
    feedback_transcript,
    learn_from_interaction,
)
from prag.corrections.replay import open_task, replay
from prag.envs.registry import domain
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.embed import EmbeddingCache
from prag.run.config import ExperimentConfig, RetrievalConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store
from prag.store.corrections import Correction, correction_texts
from prag.store.transcripts import Entry, from_episode, parse

_register()

def store_copy(path: Path, directory: Path) -> Path:
    """A copy of the module's store that a test may write to."""
    copy = directory / "s.db"
    copy.write_bytes(path.read_bytes())
    return copy


@pytest.fixture(scope="module")
def lost_episode(tmp_path_factory):
    """A real grid episode lost by a stand-in that says something inadmissible, in a store."""
    directory = tmp_path_factory.mktemp("learn")
    spec = write_spec(directory, "dishes", ["wash_dishes"], max_steps=3)
    plans = plans_of(spec)
    path = directory / "s.db"
    with Store(path) as store:
        config = RunConfig(ExperimentConfig(spec=spec, rounds=1), RetrievalConfig(mode="none", k=0, corrections=False))
        run = start_run(store, config, "lost")
        Runner(store, run, config, llm=ScriptedLLM(plan_follower(plans, spoil=set(plans))), encoder=minilm()).play()
        (episode,) = store.episodes("lost")
    (goal, plan), = plans.items()
    return path, spec, episode, goal, plan


def test_learning_is_only_done_right_after_a_persons_utterance(lost_episode):
    _, _, episode, _, _ = lost_episode
    llm = ScriptedLLM([])
    source = from_episode(episode)
    for transcript in (source, source.then(Entry("learn_from_interaction"))):
        learning = learn_from_interaction(transcript, llm)
        assert not learning.kept and "right after a person's utterance" in learning.reason
    assert llm.calls == []  # discarded before any question


def test_the_three_turns_and_a_kept_improvement(lost_episode):
    _, _, episode, goal, plan = lost_episode
    given = feedback_transcript(from_episode(episode), "open the door first")
    # The model leaves out the person's request: it is put back in front.
    improved_text = "Here it is:\n```\n" + plan_transcript(goal, plan).split("\n", 2)[2] + "```"
    llm = ScriptedLLM([PROBLEM, ADVICE + "\nextra line", improved_text])
    learning = learn_from_interaction(given, llm)
    assert learning.kept, learning.reason
    assert (learning.problem, learning.advice) == (PROBLEM, ADVICE + " extra line")
    assert learning.transcript.goal == goal and learning.transcript.actions == plan
    first, second, third = (call["messages"] for call in llm.calls)
    assert "What is the problem? Answer in one sentence." in first[-1]["content"]
    assert ">>> learn_from_interaction()" in first[-1]["content"] and "open the door first" in first[-1]["content"]
    assert second[-2] == {"role": "assistant", "content": PROBLEM}
    assert "one sentence, without code" in second[-1]["content"]
    assert third[-2]["content"] == ADVICE + " extra line" and "improved transcript" in third[-1]["content"]


@pytest.mark.parametrize(
    "answers, reason",
    [
        (["No problem, the robot did well."], "found no problem"),
        (["There is no problem."], "found no problem"),
        ([PROBLEM, ADVICE, "I would open the door."], "unreadable: the answer holds no console transcript"),
        ([PROBLEM, ADVICE, '>>> act("open door 1")\nok\n>>> __import__("os").system("rm -rf /")\n'], "unreadable"),
        ([PROBLEM, ADVICE, ">>> wait_for_trigger()\n{'type': 'dialog', 'text': 'hi'}\n"], "no act() call"),
    ],
)
def test_discard_rules(lost_episode, answers, reason):
    _, _, episode, _, _ = lost_episode
    llm = ScriptedLLM(answers)
    learning = learn_from_interaction(feedback_transcript(from_episode(episode), "wrong"), llm)
    assert not learning.kept and reason in learning.reason
    assert len(llm.calls) == len(answers)


def test_an_improvement_that_does_what_the_input_did_is_discarded(lost_episode):
    _, _, episode, _, _ = lost_episode
    given = feedback_transcript(from_episode(episode), "do better")
    for echo in (given.render(), from_episode(episode).render()):  # with or without the feedback
        learning = learn_from_interaction(given, ScriptedLLM([PROBLEM, ADVICE, echo]))
        assert not learning.kept and learning.reason == "the improved transcript does what the input did"


def test_replay_verifies_a_winning_transcript_and_says_where_a_losing_one_fails(lost_episode):
    _, spec, episode, goal, plan = lost_episode
    _, _, env = open_task(spec, episode.task_id)
    try:
        won = replay(parse(plan_transcript(goal, plan + ["go to table 1"])), env)
        assert won.won and won.failed_at is None and won.actions == len(plan)
        assert won.note == f"won after {len(plan)} actions (1 actions after the win were dropped)"
        assert won.transcript.actions == plan and len(won.scenes) == len(plan) + 1
        assert "It works." not in won.transcript.render()  # real observations replace imagined ones
        short = replay(parse(plan_transcript(goal, plan[:-1])), env)
        assert not short.won and short.failed_at == len(plan) - 1
        assert short.note.startswith(f"all {len(plan) - 1} actions ran but the goal was not reached")
        assert "the first surprise was action 1" in short.note
        wrong = replay(parse(plan_transcript(goal, plan[:2] + ["fly to the moon"] + plan[2:])), env)
        assert not wrong.won and wrong.failed_at == 3 and "action 3 'fly to the moon' is not admissible" in wrong.note
    finally:
        env.close()


def test_a_correction_from_feedback_is_stored_verified_with_its_provenance(lost_episode, tmp_path):
    path, _, episode, goal, plan = lost_episode
    copy = store_copy(path, tmp_path)
    with Store(copy) as store:
        cache = EmbeddingCache(store, minilm())
        llm = ScriptedLLM([PROBLEM, ADVICE, plan_transcript(goal, plan)], name="scripted-improver")
        outcome = correct_episode(store, episode.id, cache, feedback="open the door first", llm=llm)
        stored = outcome.stored
        assert stored is not None and stored.verified and outcome.message.startswith(f"stored verified correction {stored.id}")
        assert (stored.origin, stored.source_episode, stored.feedback) == ("feedback", episode.id, "open the door first")
        assert (stored.improvement_model, stored.problem, stored.advice) == ("scripted-improver", PROBLEM, ADVICE)
        assert stored.answer == plan_transcript(goal, plan).strip() and stored.instructions == [goal]
        assert stored.input_transcript.endswith("'open the door first'}\n>>> learn_from_interaction()\n")
        assert parse(stored.transcript).actions == plan and len(stored.scenes) == len(plan) + 1
        assert store.corrections.list() == [stored]

        # A losing improvement is stored only when the person agrees, and then as unverified.
        losing = [PROBLEM, ADVICE, plan_transcript(goal, plan[:-1])]
        refused = correct_episode(store, episode.id, cache, feedback="again", llm=ScriptedLLM(list(losing)))
        assert refused.stored is None and refused.message.startswith("not stored: the replay failed")
        asked = []
        kept = correct_episode(
            store, episode.id, cache, feedback="again", llm=ScriptedLLM(list(losing)),
            keep_unverified=lambda r: asked.append(r.note) or True,
        )
        assert kept.stored is not None and not kept.stored.verified and asked == [kept.stored.verify_note]
        assert len(store.corrections.list()) == 2


def invoke(*args: str, input: str | None = None, env: dict | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, env={"COLUMNS": "200", **(env or {})})


def test_prag_correct_asks_for_feedback_and_stores_the_correction(lost_episode, tmp_path, monkeypatch):
    path, _, episode, goal, plan = lost_episode
    copy = store_copy(path, tmp_path)
    improver = ScriptedLLM([PROBLEM, ADVICE, plan_transcript(goal, plan)])
    monkeypatch.setattr(correct_cmd, "make_llm", lambda spec, **options: improver)
    result = invoke("correct", copy, episode.id, "--llm", "local:0.5b", input="open the door first\n")
    assert result.exit_code == 0, result.output
    assert ">>> wait_for_trigger()" in result.output and PROBLEM in result.output
    assert "stored verified correction" in result.output
    assert "open the door first" in improver.calls[0]["messages"][-1]["content"]
    # A discarded learning stores nothing.
    monkeypatch.setattr(correct_cmd, "make_llm", lambda spec, **options: ScriptedLLM(["No problem."]))
    result = invoke("correct", copy, episode.id, "--feedback", "fine")
    assert result.exit_code == 0 and "discarded: the improvement model found no problem" in result.output
    with Store(copy) as store:
        assert len(store.corrections.list()) == 1


def test_prag_correct_edit_opens_the_editor_and_replays_the_persons_transcript(lost_episode, tmp_path):
    path, _, episode, goal, plan = lost_episode
    copy = store_copy(path, tmp_path)
    fixed = tmp_path / "fixed.txt"
    fixed.write_text(plan_transcript(goal, plan[:-1]))
    editor = tmp_path / "editor.py"
    editor.write_text(textwrap.dedent(f"""
        import shutil, sys
        assert open(sys.argv[1]).read().startswith("# Fix the transcript")
        shutil.copy({str(fixed)!r}, sys.argv[1])
    """))
    result = invoke("correct", copy, episode.id, "--edit", "--keep-unverified", env={"EDITOR": f"{sys.executable} {editor}"})
    assert result.exit_code == 0, result.output
    assert "the replay did not win" in result.output and "stored unverified correction" in result.output
    fixed.write_text(plan_transcript(goal, plan) + '>>> os.system("echo hi")\n')
    result = invoke("correct", copy, episode.id, "--edit", env={"EDITOR": f"{sys.executable} {editor}"})
    assert result.exit_code == 1 and "attribute access is not allowed" in result.output
    with Store(copy) as store:
        (only,) = store.corrections.list()
        assert (only.origin, only.improvement_model, only.verified) == ("edit", "person", False)


def test_attempts_stop_at_the_first_transcript_that_wins_its_replay(lost_episode, tmp_path):
    path, _, episode, goal, plan = lost_episode
    copy = store_copy(path, tmp_path)
    with Store(copy) as store:
        cache = EmbeddingCache(store, minilm())
        losing, winning = plan_transcript(goal, plan[:-2]), plan_transcript(goal, plan)
        llm = ScriptedLLM([PROBLEM, ADVICE, losing, PROBLEM, ADVICE, "no transcript", PROBLEM, ADVICE, winning, "unused"])
        outcome = correct_episode(store, episode.id, cache, feedback="open the door", llm=llm, attempts=4)
        assert outcome.stored is not None and outcome.stored.verified and len(llm.calls) == 9
        assert outcome.stored.answer == winning.strip()
        # Without a win, the transcript that got furthest is the one offered for keeping.
        short, shorter = plan_transcript(goal, plan[:-1]), plan_transcript(goal, plan[:2])
        offered = []
        outcome = correct_episode(
            store, episode.id, cache, feedback="open the door", llm=ScriptedLLM([PROBLEM, ADVICE, shorter, PROBLEM, ADVICE, short]),
            attempts=2, keep_unverified=lambda r: offered.append(r.actions) or False,
        )
        assert outcome.stored is None and offered == [len(plan) - 1]


def test_an_improvement_llm_answering_a_pathological_transcript_is_discarded(lost_episode):
    # Before: `act(` and 3,000 minus signs exhausted CPython's parser (RecursionError).
    _, _, episode, _, _ = lost_episode
    given = feedback_transcript(from_episode(episode), "open the door first")
    for answer in (">>> act(" + "-" * 3_000, ">>> act(" + "+".join(['"a"'] * 200_000) + ")"):
        learning = learn_from_interaction(given, ScriptedLLM([PROBLEM, ADVICE, answer]))
        assert not learning.kept and "unreadable: line 1: `act(" in learning.reason
        assert "too long or too deeply nested" in learning.reason


def test_a_stored_correction_that_cannot_be_read_is_left_out_of_runs_with_a_warning(lost_episode, tmp_path, caplog):
    # Before: one imported unread (or written by another program) crashed every run at step 1.
    path, spec, _, goal, plan = lost_episode
    copy = store_copy(path, tmp_path)
    with Store(copy) as store:
        cache = EmbeddingCache(store, minilm())
        unreadable = Correction(origin="edit", domain=domain("grid").name, goal=goal, instructions=[goal],
                                transcript=">>> act(" + "-" * 200_000 + "1)\n", verified=True)
        cache.vectors(correction_texts(unreadable))
        row = {**unreadable.to_dict(), "instructions": json.dumps([goal]), "scenes": "[]", "steps": "[]", "verified": 1}
        row.pop("id")
        bad_id = store.insert("corrections", row)  # as written before transcripts were read on the way in
        config = RunConfig(ExperimentConfig(spec=spec, rounds=1), RetrievalConfig(k=0, prior=False))
        run = start_run(store, config, "after")
        Runner(store, run, config, llm=ScriptedLLM(plan_follower(plans_of(spec))), encoder=minilm()).play()
        (played,) = store.episodes("after")  # played to its step cap (3), past step 1
        assert played.n_actions == 3 and store.run_states()["after"] == "finished"
    assert f"correction {bad_id} in {copy} is left out: its transcript cannot be read (line 1: `act(---" in caplog.text
    assert f"prag corrections delete {copy} {bad_id}" in caplog.text


EDITOR = """
import pathlib, shutil, sys
shown = pathlib.Path(sys.argv[1]).read_text()
log = pathlib.Path({log!r})
log.write_text(log.read_text() + shown + "\\f" if log.exists() else shown + "\\f")
shutil.copy({fixed!r}, sys.argv[1])
"""


def test_prag_correct_edit_names_the_lines_the_editor_showed_and_keeps_the_edit_for_another_try(lost_episode, tmp_path):
    # Before: the numbers were off by one and one more per `#` line, and the edit was thrown away.
    path, _, episode, goal, plan = lost_episode
    copy = store_copy(path, tmp_path)
    fixed, log = tmp_path / "fixed.txt", tmp_path / "shown.txt"
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR.format(log=str(log), fixed=str(fixed)))
    env = {"EDITOR": f"{sys.executable} {editor}"}
    lines = ["# my notes:", "# the door first"] + plan_transcript(goal, plan).splitlines()
    lines.insert(6, "# then the rest")
    bad = lines + [">>> act(" + "-" * 200_000 + "1)"]
    fixed.write_text("\n".join(bad) + "\n")
    result = invoke("correct", copy, episode.id, "--edit", env=env)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"line {len(bad)}: `act(---" in result.output and "too long or too deeply nested" in result.output
    kept = copy.with_name(f"{copy.name}.edit-{episode.id}.txt")
    assert kept.read_text() == fixed.read_text() and f"your edit is kept in {kept}" in " ".join(result.output.split())
    # The next try opens the edit as it was left; once stored, the kept edit goes.
    fixed.write_text("\n".join(lines) + "\n")
    result = invoke("correct", copy, episode.id, "--edit", env=env)
    assert result.exit_code == 0 and "stored verified correction" in result.output, result.output
    assert log.read_text().split("\f")[1] == "\n".join(bad) + "\n"
    assert not kept.exists()
    with Store(copy) as store:
        (only,) = store.corrections.list()
        assert (only.origin, only.verified, parse(only.transcript).actions) == ("edit", True, plan)
