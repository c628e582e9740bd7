"""The LLM answer cache: greedy answers kept in the store, so an answered prompt never runs again.

A prompt a model has already answered with greedy decoding (temperature 0) is answered from the
store without running the model (KIT kept such a cache); a re-run of an identical round costs no
model time. `store.answers` is the table; `cached(llm, store)` wraps any `LLM` in it. A process
without the store (a Ray worker) answers from an `AnswerSnapshot` of the table taken for its
round, and hands the store's writer `AnswerEvent`s to apply.

The key is a SHA-256 of the model's name, whether it enforces `choices`, the full messages,
max_tokens, stop, choices, the free lines a plan may add after the choice (`more_lines`: in the
key only when there are any, so that the keys of single-action calls stay as they were) and the
temperature. The seed is left out: only greedy answers are stored, and greedy decoding never
reads the seed, so runs with another `--seed` share answers.
Sampled calls (temperature > 0) always run the model and are neither stored nor counted. Only the
key and the answer are kept, not the prompt, and an answer longer than `MAX_ANSWER_CHARS` is not
kept at all: an entry is a few hundred bytes.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from prag.llm.base import LLM, Completion, Cost, Message
from prag.store.records import now
from prag.store.values import damaged_value, stored_float, stored_int

if TYPE_CHECKING:
    from prag.store.database import Store

MAX_ANSWER_CHARS = 4096  # an action or a plan is far shorter; longer answers are not worth a row


def answer_key(
    model: str,
    constrained: bool,
    messages: list[Message],
    *,
    max_tokens: int,
    stop: list[str] | None,
    choices: list[str] | None,
    temperature: float,
    more_lines: int = 0,
    grammar: str | None = None,
) -> str:
    """The cache key of one call: everything that decides a greedy answer, hashed."""
    settings: dict[str, object] = {
        "model": model,
        "constrained": constrained,
        "messages": [[m["role"], m["content"]] for m in messages],
        "max_tokens": max_tokens,
        "stop": list(stop or []),
        "choices": None if choices is None else list(choices),  # order kept: a reordering misses
        "temperature": float(temperature),
    }
    if more_lines:
        settings["more_lines"] = more_lines
    if grammar:
        settings["grammar"] = grammar
    text = json.dumps(settings, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Answers:
    """The answer cache of a store (`store.answers`): answers by key, hits and misses per model."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, key: str) -> Completion | None:
        """The stored answer for `key`, if any, with what it cost the model when it was first
        computed (its cached tokens are not kept: 0). Counts nothing."""
        with self.store.lock:
            row = self.store.conn.execute(
                "select text, prompt_tokens, completion_tokens, seconds from answers where key = ?", [key]
            ).fetchone()
        return self._answer(key, *row) if row else None

    def put(self, key: str, model: str, completion: Completion) -> None:
        """Count a miss (the model ran) and keep its answer, unless it is too long to keep."""
        with self.store.transaction() as conn:
            if len(completion.text) <= MAX_ANSWER_CHARS:
                # Two threads that missed on the same prompt both ran the model; the first row stays.
                conn.execute(
                    "insert or ignore into answers "
                    "(key, model, text, prompt_tokens, completion_tokens, seconds, created_at) "
                    "values (?, ?, ?, ?, ?, ?, ?)",
                    [key, model, completion.text, completion.cost.prompt_tokens,
                     completion.cost.completion_tokens, completion.cost.seconds, now()],
                )
            _count(conn, model, hits=0, misses=1, saved_seconds=0.0)

    def count_hit(self, model: str, answer: Completion) -> None:
        """Count an answer served from the store, and the model time it saved."""
        with self.store.transaction() as conn:
            _count(conn, model, hits=1, misses=0, saved_seconds=answer.cost.seconds)

    def snapshot(self) -> dict[str, Completion]:
        """Every stored answer by key (counts nothing): what a round's Ray workers answer from."""
        with self.store.lock:
            rows = self.store.conn.execute(
                "select key, text, prompt_tokens, completion_tokens, seconds from answers"
            ).fetchall()
        return {key: self._answer(key, *rest) for key, *rest in rows}

    def _answer(self, key: str, text: object, prompt_tokens: object, completion_tokens: object, seconds: object) -> Completion:
        path, of = self.store.path, f"of the cached answer {key}"
        if not isinstance(text, str):
            raise damaged_value(path, f"answers.text {of}", text, "text")
        return Completion(text, Cost(
            calls=1,
            prompt_tokens=stored_int(path, f"answers.prompt_tokens {of}", prompt_tokens),
            completion_tokens=stored_int(path, f"answers.completion_tokens {of}", completion_tokens),
            seconds=stored_float(path, f"answers.seconds {of}", seconds),
        ))

    def stats(self) -> dict[str, dict[str, float]]:
        """Per model: answers stored, hits, misses and the model seconds the hits saved."""
        with self.store.lock:
            conn = self.store.conn
            rows = dict(conn.execute("select model, count(*) from answers group by model").fetchall())
            counts = {
                model: {"hits": hits, "misses": misses, "saved_seconds": saved}
                for model, hits, misses, saved in conn.execute(
                    "select model, hits, misses, saved_seconds from answer_counts"
                )
            }
        never = {"hits": 0, "misses": 0, "saved_seconds": 0.0}
        return {
            model: {"rows": rows.get(model, 0), **counts.get(model, never)}
            for model in sorted(rows.keys() | counts.keys())
        }


def _count(conn: sqlite3.Connection, model: str, *, hits: int, misses: int, saved_seconds: float) -> None:
    conn.execute(
        "insert into answer_counts (model, hits, misses, saved_seconds) values (?, ?, ?, ?) "
        "on conflict(model) do update set hits = hits + excluded.hits, "
        "misses = misses + excluded.misses, saved_seconds = saved_seconds + excluded.saved_seconds",
        [model, hits, misses, saved_seconds],
    )


class AnswerBook(Protocol):
    """Where `CachedLLM` looks answers up and counts them: the store's `Answers`, or an `AnswerSnapshot`."""

    def get(self, key: str) -> Completion | None: ...

    def put(self, key: str, model: str, completion: Completion) -> None: ...

    def count_hit(self, model: str, answer: Completion) -> None: ...


@dataclass(frozen=True)
class AnswerEvent:
    """A look-up made away from the store: a hit (`hit`), or a miss with the model's answer
    (`key`, `completion`). `apply` does to the store what the look-up would have done there."""

    model: str
    hit: Completion | None = None
    key: str = ""
    completion: Completion | None = None

    def apply(self, answers: Answers) -> None:
        if self.completion is not None:
            answers.put(self.key, self.model, self.completion)
        elif self.hit is not None:
            answers.count_hit(self.model, self.hit)


class AnswerSnapshot:
    """The answer cache as it was when a round began, for a process without the store: `known`
    (shared by the process's episodes, so one episode's new answers serve the next) and the
    `events` of one episode's look-ups, for the store's writer to apply."""

    def __init__(self, known: dict[str, Completion]) -> None:
        self.known = known
        self.events: list[AnswerEvent] = []

    def get(self, key: str) -> Completion | None:
        return self.known.get(key)

    def put(self, key: str, model: str, completion: Completion) -> None:
        if len(completion.text) <= MAX_ANSWER_CHARS:  # what `Answers.put` keeps
            self.known.setdefault(key, completion)
        self.events.append(AnswerEvent(model, key=key, completion=completion))

    def count_hit(self, model: str, answer: Completion) -> None:
        self.events.append(AnswerEvent(model, hit=answer))


class CachedLLM:
    """An `LLM` that answers greedy calls from an answer book (the store's answer cache) and
    asks `inner` otherwise.

    Safe for parallel episodes' threads: every read and write of the store goes through its lock.
    """

    def __init__(self, inner: LLM, answers: AnswerBook) -> None:
        self.inner = inner
        self.name = inner.name
        self.answers = answers

    @property
    def supports_choices(self) -> bool:
        """Whether `choices` is enforced: the wrapped model's."""
        return self.inner.supports_choices

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 64,
        stop: list[str] | None = None,
        choices: list[str] | None = None,
        more_lines: int = 0,
        temperature: float = 0.0,
        seed: int = 0,
        grammar: str | None = None,
    ) -> Completion:
        def ask() -> Completion:
            return self.inner.complete(
                messages, max_tokens=max_tokens, stop=stop, choices=choices, more_lines=more_lines,
                temperature=temperature, seed=seed, grammar=grammar,
            )

        if temperature != 0:
            return ask()  # a sample is meant to differ from the last one
        key = answer_key(
            self.name, self.supports_choices, messages,
            max_tokens=max_tokens, stop=stop, choices=choices, temperature=temperature, more_lines=more_lines,
            grammar=grammar,
        )
        hit = self.answers.get(key)
        if hit is None:
            completion = ask()
            self.answers.put(key, self.name, completion)
            return completion
        self.answers.count_hit(self.name, hit)
        # Served with no model time, its whole prompt as if cached.
        return Completion(hit.text, replace(hit.cost, cached_tokens=hit.cost.prompt_tokens, seconds=0.0))


def cached(llm: LLM, store: Store) -> LLM:
    """`llm` with the answer cache of `store` in front of it."""
    return CachedLLM(llm, store.answers)
