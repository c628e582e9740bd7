"""Console transcripts: episodes render and parse back exactly; nothing but the API is accepted,
and reading a hostile transcript never runs any of it."""
from __future__ import annotations

import builtins
import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prag.store.episode_extra import EpisodeExtra
from prag.store.records import EpisodeRecord, StepRecord
from prag.store.transcripts import (
    MAX_CHARS,
    Entry,
    Transcript,
    TranscriptError,
    extract,
    from_episode,
    parse,
    render,
)

EPISODE_TEXT = '''>>> wait_for_trigger()
{'type': 'dialog', 'text': 'put a candle in shelf.'}
>>> observe()
You are in the middle of a room. Looking quickly around you, you see a drawer 1, a shelf 1.
>>> act("go to drawer 1")
You arrive at drawer 1. The drawer 1 is closed.
>>> wait_for_trigger()
{'type': 'dialog', 'text': "the candle is in the drawer: open it, don't wait"}
>>> act("open drawer 1")
You open the drawer 1. The drawer 1 is open. In it, you see a candle 1.
>>> say("found it")
>>> learn_from_interaction()
'''


def grid_like_episode() -> EpisodeRecord:
    steps = [
        StepRecord(0, None, "You are in the kitchen.\nOn counter 1, you see milk 1.\nYou are holding nothing.", "at: kitchen"),
        StepRecord(1, "go to counter 1", "You arrive at counter 1.\nYou are holding nothing.", "at: counter 1"),
        StepRecord(2, 'pick up "milk" 1', "You pick up milk 1.", "at: counter 1"),
    ]
    return EpisodeRecord(
        run_id="r", round=0, task_id="t", task_type="put_away_groceries", goal="Put away the milk.",
        won=False, steps=steps, extra=EpisodeExtra(utterances=[(1, "the fridge is to your left"), (2, "now open it")]),
    )


def test_an_episode_renders_as_a_console_and_parses_back_to_the_same_transcript():
    transcript = from_episode(grid_like_episode())
    text = transcript.render()
    assert text.splitlines()[:4] == [
        ">>> wait_for_trigger()",
        "{'type': 'dialog', 'text': 'Put away the milk.'}",
        ">>> observe()",
        "You are in the kitchen.",
    ]
    assert '>>> act("go to counter 1")' in text
    assert ">>> act('pick up \"milk\" 1')" in text  # quotes inside an action stay a valid literal
    assert parse(text) == transcript
    # The person's utterances sit right after the observation of the step they followed.
    calls = [e.call for e in transcript.entries]
    assert calls == ["wait_for_trigger", "observe", "act", "wait_for_trigger", "act", "wait_for_trigger"]
    assert transcript.instructions == ["Put away the milk.", "the fridge is to your left", "now open it"]
    assert transcript.actions == ["go to counter 1", 'pick up "milk" 1']


def test_a_hand_written_transcript_parses_and_renders_back_to_the_same_text():
    transcript = parse(EPISODE_TEXT)
    assert transcript.goal == "put a candle in shelf."
    assert transcript.entries[3] == Entry.utterance("the candle is in the drawer: open it, don't wait")
    assert transcript.entries[5] == Entry("say", ("found it",), None)
    assert render(transcript) == EPISODE_TEXT


observation_line = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
).map(str.strip).filter(lambda line: line and not line.startswith((">>>", "...")))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("act"), st.text(min_size=1, max_size=30), st.lists(observation_line, min_size=1, max_size=3)),
            st.tuples(st.just("say"), st.text(max_size=30), st.just([])),
            st.tuples(st.just("dialog"), st.text(max_size=40), st.just([])),
        ),
        max_size=8,
    )
)
def test_any_transcript_of_the_api_round_trips(items):
    entries = []
    for kind, text, lines in items:
        if kind == "act":
            entries.append(Entry.action(text, "\n".join(lines)))
        elif kind == "say":
            entries.append(Entry("say", (text,), None))
        else:
            entries.append(Entry.utterance(text))
    transcript = Transcript(tuple(entries))
    assert parse(render(transcript)) == transcript


HOSTILE = [
    ('>>> __import__("os").system("touch {marker}")\n', "attribute access"),
    ('>>> os.system("touch {marker}")\n', "attribute access"),
    ('>>> eval("__import__(\'os\').system(\'touch {marker}\')")\n', "'eval' is not part of the console API"),
    ('>>> exec("open(\'{marker}\', \'w\')")\n', "'exec' is not part of the console API"),
    ('>>> __builtins__("x")\n', "'__builtins__' is not part of the console API"),
    (">>> import os\n", "only single calls"),
    ('>>> act("go to desk 1"); __import__("os").system("touch {marker}")\n', "only single calls"),
    ('>>> act(open("{marker}", "w").name)\n', "must be string literals"),
    ('>>> act(f"{{__import__(\'os\').system(\'touch {marker}\')}}")\n', "must be string literals"),
    ('>>> act(*["go to desk 1"])\n', "must be string literals"),
    ('>>> act(action="go to desk 1")\n', "keyword arguments"),
    ('>>> act("a", "b")\n', "takes 1 argument"),
    (">>> (lambda: 1)()\n", "a computed function"),
    (">>> x = act('go to desk 1')\n", "only single calls"),
    (">>> wait_for_trigger()\n__import__('os').system('touch {marker}')\n", "must be a literal"),
    (">>> wait_for_trigger()\n{{'type': 'dialog', 'text': 'hi', 'run': 'rm'}}\n", "keys other than"),
    (">>> wait_for_trigger()\n{{'type': 'shell', 'text': 'hi'}}\n", "must be {'type': 'dialog'"),
    (">>> say('hi')\nsomething it never returns\n", "returns nothing"),
    ("You are in a room.\n>>> act('look')\n", "comes before any `>>> ` statement"),
    (">>> act('look'\n", "not a Python statement"),
]


@pytest.mark.parametrize("template, message", HOSTILE)
def test_hostile_transcripts_are_rejected_and_nothing_runs(template, message, tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    ran: list[str] = []
    for name in ("eval", "exec"):
        original = getattr(builtins, name)
        monkeypatch.setattr(builtins, name, lambda *a, _n=name, _o=original, **k: (ran.append(_n), _o(*a, **k))[1])
    monkeypatch.setattr(os, "system", lambda *a: ran.append("os.system") or 0)
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: ran.append("Popen"))
    with pytest.raises(TranscriptError) as caught:
        parse(template.format(marker=marker))
    assert message in str(caught.value)
    assert not marker.exists()
    assert "os.system" not in ran and "Popen" not in ran and "exec" not in ran and "eval" not in ran


def test_the_console_part_of_an_llm_answer_is_extracted():
    answer = "Sure! Here is the improved transcript:\n```python\n" + EPISODE_TEXT + "```\nHope this helps."
    assert parse(extract(answer)) == parse(EPISODE_TEXT)
    unfenced = "Improved:\n" + EPISODE_TEXT
    assert parse(extract(unfenced)) == parse(EPISODE_TEXT)
    with pytest.raises(TranscriptError, match="no console transcript"):
        extract("I would open the drawer first.")


def test_shortened_observations_stay_a_readable_transcript():
    observation = "You arrive at sink 1.\n" + "x" * 40 + "\nYou are holding nothing."
    transcript = Transcript((Entry.utterance("wash"), Entry.action("go to sink 1", observation)))
    cut = len("You arrive at sink 1.\n") + 3  # the cut falls right after a line break
    text = transcript.render(observation_chars=cut)
    assert text.endswith('>>> act("go to sink 1")\nYou arrive at sink 1....\n')
    assert parse(text).entries[1].result == "You arrive at sink 1...."


def test_what_a_model_writes_after_the_learning_call_is_not_part_of_the_transcript():
    answer = EPISODE_TEXT.rstrip("\n") + "\n>>> learn_from_interaction()\nThe robot should have opened the fridge.\n"
    assert extract(answer).endswith(">>> learn_from_interaction()")
    assert parse(extract(answer)).without_learning() == parse(EPISODE_TEXT).without_learning()


# Before: CPython's parser recursed on these (RecursionError, MemoryError), whoever gave the text.
PATHOLOGICAL = {
    "200,000 terms": ">>> act(" + "+".join(["'a'"] * 200_000) + ")\n",
    "200,000 unary minus signs": ">>> act(" + "-" * 200_000 + "1)\n",
    "an LLM's act( and 3,000 minus signs": ">>> act(" + "-" * 3_000 + "\n",
    "3,000 minus signs closed": ">>> act(" + "-" * 3_000 + "1)\n",
    "3,000 continuation lines": ">>> act(\n" + "... -\n" * 3_000 + "... 1)\n",
    "a dialog nested 100,000 deep": ">>> wait_for_trigger()\n" + "[" * 100_000 + "]" * 100_000 + "\n",
    "a dialog of 200,000 terms": ">>> wait_for_trigger()\n" + "+".join(["'a'"] * 200_000) + "\n",
}


@pytest.mark.parametrize("case", sorted(PATHOLOGICAL))
def test_a_pathological_statement_is_refused_by_its_line_without_exhausting_the_parser(case):
    text = ">>> wait_for_trigger()\n{'type': 'dialog', 'text': 'wash'}\n" + PATHOLOGICAL[case]
    with pytest.raises(TranscriptError, match=r"^(the result of wait_for_trigger\(\) on )?line 3\b.* too long or too deeply nested"):
        parse(text)


def test_a_transcript_past_the_size_bound_is_refused_whole():
    line = '>>> act("go to counter 1")\nYou arrive at counter 1.\n'
    text = line * (MAX_CHARS // len(line) + 1)
    with pytest.raises(TranscriptError, match=r"characters long, over the 1,048,576 a transcript may have"):
        parse(text)
    assert parse(text[: MAX_CHARS - MAX_CHARS % len(line)]).actions[0] == "go to counter 1"


def test_comment_lines_are_left_out_and_errors_name_the_lines_of_the_text_as_given():
    text = "# a note\n>>> wait_for_trigger()\n# another\n{'type': 'dialog', 'text': 'wash'}\n# more\n>>> os.system('x')\n"
    with pytest.raises(TranscriptError, match=r"^line 6: `os.system"):
        parse(text, comments=True)
    assert parse("# a note\n>>> act('look')\n# seen\nnothing\n", comments=True).entries == (Entry.action("look", "nothing"),)
    with pytest.raises(TranscriptError, match="line 1: '# a note' comes before"):
        parse(text)  # without comments, a `#` line is text
