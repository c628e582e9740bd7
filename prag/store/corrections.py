"""The corrections layer of a store: console transcripts corrected by a person, with provenance.

A correction is an improved transcript of a task (`prag.corrections.transcripts`), where it came from
(a shipped prior transcript, a person's feedback turned into a transcript by the improvement
LLM, or a person's own edit), the improvement model's three answers, and whether replaying it
in the environment won (`prag.corrections.replay`). Its instructions (the goal and the person's
utterances) and the scene graphs of its replay are embedded into the store's `embeddings`
table, so that retrieval (`prag.retrieval.corrections`) never encodes them again. Deleting is the only
way a correction goes away.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from sqlite_utils.db import NotFoundError

from prag.errors import PragError
from prag.store.database import Store, now


class Embedder(Protocol):
    """Writes the vectors of texts into the store (the embedding cache does)."""

    def vectors(self, texts: Sequence[str]) -> Any: ...


ORIGINS = ("prior", "feedback", "edit")


@dataclass
class Correction:
    origin: str
    domain: str
    goal: str
    instructions: list[str]
    transcript: str
    verified: bool
    verify_note: str = ""
    scenes: list[str] = field(default_factory=list)
    spec: str = ""
    task_id: str = ""
    task_type: str = ""
    name: str = ""
    source_episode: int | None = None
    feedback: str = ""
    improvement_model: str = ""
    problem: str = ""
    advice: str = ""
    answer: str = ""
    input_transcript: str = ""
    created_at: str = ""
    id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class CorrectionError(PragError):
    """A correction that cannot be stored, found or deleted."""


def add_correction(
    store: Store, correction: Correction, cache: Embedder, *, prior_digest: str | None = None
) -> int:
    """Store a correction and the vectors of its instructions and scenes; returns its id.

    A prior transcript (`prior_digest` given) is also recorded as loaded, in the same
    transaction, so that deleting it later sticks.
    """
    if correction.origin not in ORIGINS:
        raise CorrectionError(f"unknown origin {correction.origin!r}: use one of {', '.join(ORIGINS)}")
    if not correction.instructions or not correction.transcript.strip():
        raise CorrectionError("a correction needs a transcript and at least one instruction (the goal)")
    if correction.source_episode is not None:
        store.episode(correction.source_episode)  # fails clearly on an unknown episode
    cache.vectors(list(correction.instructions) + list(correction.scenes))
    row = correction.to_dict()
    row.pop("id")
    row.update(
        instructions=json.dumps(correction.instructions),
        scenes=json.dumps(correction.scenes),
        verified=int(correction.verified),
        created_at=correction.created_at or now(),
    )
    with store.transaction() as conn:
        cursor = conn.execute(
            f"insert into corrections ({', '.join(row)}) values ({', '.join('?' for _ in row)})",
            list(row.values()),
        )
        if prior_digest is not None:
            conn.execute(
                "insert or replace into prior_loads (name, digest, loaded_at) values (?, ?, ?)",
                [correction.name, prior_digest, now()],
            )
    correction.id = int(cursor.lastrowid or 0)
    correction.created_at = row["created_at"]
    return correction.id


def get_correction(store: Store, correction_id: int) -> Correction:
    with store.lock:
        try:
            row = dict(store.db.table("corrections").get(correction_id))
        except NotFoundError:
            raise CorrectionError(
                f"no correction {correction_id} in {store.path}: see `prag corrections list {store.path}`"
            ) from None
    return _from_row(row)


def list_corrections(store: Store, *, domain: str | None = None, prior: bool = True) -> list[Correction]:
    """The corrections in id order; `domain` keeps one action vocabulary, `prior=False` drops
    the shipped prior transcripts."""
    where, params = [], []
    if domain is not None:
        where.append("domain = ?")
        params.append(domain)
    if not prior:
        where.append("origin != 'prior'")
    with store.lock:
        rows = store.db["corrections"].rows_where(" and ".join(where) or None, params, order_by="id")
        return [_from_row(dict(row)) for row in rows]


def delete_correction(store: Store, correction_id: int) -> Correction:
    """Remove one correction (the only way one goes away); returns what was removed."""
    gone = get_correction(store, correction_id)
    with store.transaction() as conn:
        conn.execute("delete from corrections where id = ?", [correction_id])
    return gone


def prior_loaded(store: Store) -> dict[str, str]:
    """Names of the prior transcripts ever loaded into this store, with their content digests."""
    with store.lock:
        return {row["name"]: row["digest"] for row in store.db["prior_loads"].rows}


def _from_row(row: dict[str, Any]) -> Correction:
    row["instructions"] = json.loads(row["instructions"])
    row["scenes"] = json.loads(row["scenes"])
    row["verified"] = bool(row["verified"])
    for text in ("verify_note", "spec", "task_id", "task_type", "name", "feedback", "improvement_model",
                 "problem", "advice", "answer", "input_transcript", "created_at"):
        row[text] = row[text] or ""
    return Correction(**row)
