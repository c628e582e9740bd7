"""learn_from_interaction (Bärmann et al., 2024), with the improved transcript checked by replay.

The improvement LLM reads the console transcript, which ends with the person's feedback and a
`learn_from_interaction()` call, and answers three chat turns: the problem, in one sentence;
how to do better next time, in one sentence without code; the improved transcript. The result
is discarded when learning was not called right after a person's utterance, when the first
answer finds no problem, when the improved transcript is unreadable, and when it does what the
input did. A kept transcript is replayed in the environment (`prag.corrections.replay`) and stored as a
correction (`prag.store.corrections`): verified if it wins, otherwise only when the person agrees.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prag.corrections.replay import Replay, episode_spec, replay_episode_task
from prag.envs.registry import domain
from prag.envs.spec import load_spec
from prag.errors import PragError
from prag.llm.base import LLM, Message
from prag.retrieval.corrections import CorrectionSource, add_correction
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store
from prag.store.corrections import Correction
from prag.store.transcripts import (
    Entry,
    Transcript,
    TranscriptError,
    api_help,
    extract,
    from_episode,
    parse,
)

SYSTEM = (
    "You improve the behaviour of a household robot. Its interactions with a person are recorded "
    "as transcripts of an emulated Python console: the robot's calls follow `>>> `, and what a "
    "call returned is on the lines below it. The person speaks through the results of "
    "wait_for_trigger(). The calls are:\n" + api_help()
)
ASK_PROBLEM = (
    "Here is the transcript. The person's last words are feedback on what the robot did.\n\n{transcript}\n"
    "What is the problem? Answer in one sentence."
)
ASK_ADVICE = "How can the robot do better next time? Answer in one sentence, without code."
ASK_TRANSCRIPT = (
    "Now write the improved transcript: the whole interaction as it should have gone, from the "
    "person's request (the first wait_for_trigger() and its result) and observe() to the goal, in "
    "the same console format. Leave out the actions that did not help. The robot must go to a "
    "place before it can open, take or use anything there. Use only act() with actions written as "
    "the environment writes them, each followed by what it returns. Reply with the transcript only."
)
EXAMPLE = "\n\nA transcript of a similar task done well:\n{example}"
NO_PROBLEM = re.compile(
    r"^\W*(no problem|there (is|was) no (problem|issue)|nothing (went |is )?wrong|no issues?\b|none\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Learning:
    """What learn_from_interaction made of a transcript: kept, or discarded and why."""

    kept: bool
    reason: str  # why it was discarded ("" when kept)
    model: str
    problem: str = ""
    advice: str = ""
    answer: str = ""  # the third answer, as it came
    transcript: Transcript | None = None  # the improved transcript, when kept


def learn_from_interaction(
    transcript: Transcript,
    llm: LLM,
    *,
    examples: Sequence[str] = (),
    max_tokens: int = 1024,
    sentence_tokens: int = 80,
    seed: int = 0,
    temperature: float = 0.0,
) -> Learning:
    """Three chat turns with the improvement LLM, then the paper's discard rules.

    `examples` are transcripts of similar tasks done well (verified corrections): they show the
    improvement model what a good transcript and the environment's actions look like.
    """
    if not learnable(transcript):
        return Learning(False, "learning is only done right after a person's utterance", llm.name)
    chat: list[Message] = [
        {"role": "system", "content": SYSTEM + "".join(EXAMPLE.format(example=e.strip()) for e in examples)},
        {"role": "user", "content": ASK_PROBLEM.format(transcript=transcript.render())},
    ]
    problem = _one_line(_ask(llm, chat, sentence_tokens, seed, temperature))
    if not problem or NO_PROBLEM.match(problem):
        return Learning(False, f"the improvement model found no problem ({problem!r})", llm.name, problem)
    chat += [{"role": "assistant", "content": problem}, {"role": "user", "content": ASK_ADVICE}]
    advice = _one_line(_ask(llm, chat, sentence_tokens, seed, temperature))
    chat += [{"role": "assistant", "content": advice}, {"role": "user", "content": ASK_TRANSCRIPT}]
    answer = _ask(llm, chat, max_tokens, seed, temperature)
    try:
        improved = _with_request(parse(extract(answer)).without_learning(), transcript)
    except TranscriptError as exc:
        return Learning(False, f"the improved transcript is unreadable: {exc}", llm.name, problem, advice, answer)
    if not improved.actions:
        return Learning(False, "the improved transcript has no act() call", llm.name, problem, advice, answer)
    if _behaviour(improved) == _behaviour(transcript):
        return Learning(False, "the improved transcript does what the input did", llm.name, problem, advice, answer)
    return Learning(True, "", llm.name, problem, advice, answer, improved)


def learnable(transcript: Transcript) -> bool:
    """Whether the transcript ends with learn_from_interaction() right after a person's utterance."""
    entries = transcript.entries
    return len(entries) >= 2 and entries[-1].call == "learn_from_interaction" and entries[-2].is_utterance


def _ask(llm: LLM, chat: list[Message], max_tokens: int, seed: int, temperature: float) -> str:
    return llm.complete(chat, max_tokens=max_tokens, seed=seed, temperature=temperature).text.strip()


def _one_line(answer: str) -> str:
    return " ".join(answer.split())


def _behaviour(transcript: Transcript) -> list[tuple[str, tuple[str, ...]]]:
    """What the robot does in a transcript: its calls other than listening and learning."""
    return [s for s in transcript.statements() if s[0] not in ("wait_for_trigger", "learn_from_interaction")]


def _with_request(improved: Transcript, original: Transcript) -> Transcript:
    """The improved transcript starting with the person's request, as the original did: small
    models often begin straight with the actions."""
    if improved.entries and improved.entries[0].is_utterance:
        return improved
    return Transcript((Entry.utterance(original.goal),) + improved.entries)


# --- from an episode to a stored correction ----------------------------------------------------

SAMPLING_TEMPERATURE = 0.8  # for attempts after the first (greedy) one


def _learn_until_verified(
    given: Transcript, llm: LLM, examples: list[str], spec_ref: str, task_id: str, attempts: int, max_tokens: int
) -> tuple[Learning, Replay] | Learning:
    """Learn and replay up to `attempts` times; the first win, else the replay that got furthest,
    else (nothing kept) the first discarded learning."""
    best: tuple[Learning, Replay] | None = None
    discarded: Learning | None = None
    for attempt in range(max(attempts, 1) if learnable(given) else 1):
        learning = learn_from_interaction(
            given, llm, examples=examples, max_tokens=max_tokens, seed=attempt,
            temperature=0.0 if attempt == 0 else SAMPLING_TEMPERATURE,
        )
        if not learning.kept or learning.transcript is None:
            discarded = discarded or learning
            continue
        replay = replay_episode_task(spec_ref, task_id, learning.transcript)
        if best is None or replay.won or replay.actions > best[1].actions:
            best = (learning, replay)
        if replay.won:
            break
    if best is not None:
        return best
    assert discarded is not None
    return discarded


def _examples(store: Store, cache: EmbeddingCache, goal: str, spec_ref: str) -> list[str]:
    """The verified correction of the episode's domain most like its goal, if there is one."""
    source = CorrectionSource(store, cache, k=1, domain=domain(load_spec(spec_ref).env).name)
    return [hit.correction.transcript for hit in source.retrieve([goal]) if hit.correction.verified]



@dataclass(frozen=True)
class Outcome:
    """What became of a person's correction of an episode."""

    stored: Correction | None
    learning: Learning | None  # None for a person's own edit
    replay: Replay | None  # None when learning discarded it
    message: str


def feedback_transcript(transcript: Transcript, feedback: str) -> Transcript:
    """The transcript with the person's feedback and the learning call after it."""
    return transcript.then(Entry.utterance(feedback), Entry("learn_from_interaction"))


def correct_episode(
    store: Store,
    episode_id: int,
    cache: EmbeddingCache,
    *,
    feedback: str = "",
    llm: LLM | None = None,
    edited: Transcript | None = None,
    keep_unverified: Callable[[Replay], bool] = lambda replay: False,
    max_tokens: int = 1024,
    attempts: int = 1,
) -> Outcome:
    """Turn a person's feedback (through the improvement LLM) or their own edited transcript into
    a correction of an episode: replay it from the episode's initial state, store it verified if
    it wins, else only if `keep_unverified(replay)` says so.

    With `attempts` > 1 the improvement model tries again (sampling, a new seed each time) until a
    transcript wins its replay: the simulator, not the model, says when to stop. Without a win,
    the transcript whose replay got furthest is the one kept or dropped.
    """
    episode = store.episode(episode_id)
    spec_ref = episode_spec(store, episode)
    source = from_episode(episode)
    learning: Learning | None = None
    if edited is not None:
        improved, origin = _with_request(edited.without_learning(), source), "edit"
        given = feedback_transcript(source, feedback) if feedback else source
        if _behaviour(improved) == _behaviour(source):
            return Outcome(None, None, None, "discarded: the edited transcript does what the episode did")
        replay = replay_episode_task(spec_ref, episode.task_id, improved)
    else:
        if llm is None:
            raise PragError("learning from feedback needs an improvement LLM (or give an edited transcript)")
        # Without new feedback, the person's last words are those said during the episode, if any:
        # the learning rule then decides whether they came right before the call.
        given = (
            feedback_transcript(source, feedback.strip())
            if feedback.strip()
            else source.then(Entry("learn_from_interaction"))
        )
        examples = _examples(store, cache, episode.goal, spec_ref)
        tried = _learn_until_verified(given, llm, examples, spec_ref, episode.task_id, attempts, max_tokens)
        if isinstance(tried, Learning):
            return Outcome(None, tried, None, f"discarded: {tried.reason}")
        learning, replay = tried
        assert learning.transcript is not None
        improved, origin = learning.transcript, "feedback"
    if not replay.won and not keep_unverified(replay):
        return Outcome(None, learning, replay, f"not stored: the replay failed ({replay.note})")
    said = [episode.goal] + [u for u in improved.instructions if u != episode.goal]
    correction = Correction(
        origin=origin,
        domain=domain(load_spec(spec_ref).env).name,
        goal=episode.goal,
        instructions=list(dict.fromkeys(said)),
        transcript=(replay.transcript if replay.won else improved).render(),
        verified=replay.won,
        verify_note=replay.note,
        scenes=replay.scenes,
        steps=replay.steps,
        spec=spec_ref,
        task_id=episode.task_id,
        task_type=episode.task_type,
        source_episode=episode_id,
        feedback=feedback,
        improvement_model=learning.model if learning else "person",
        problem=learning.problem if learning else "",
        advice=learning.advice if learning else "",
        answer=learning.answer if learning else "",
        input_transcript=given.render(),
    )
    add_correction(store, cache, correction)
    state = "verified" if replay.won else "unverified"
    return Outcome(correction, learning, replay, f"stored {state} correction {correction.id}: {replay.note}")
