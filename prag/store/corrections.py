"""The corrections layer of a store: console transcripts corrected by a person, with provenance.

A correction is an improved transcript of a task (`prag.store.transcripts`), where it came from
(a shipped prior transcript, a person's feedback turned into a transcript by the improvement
LLM, or a person's own edit), the improvement model's three answers, and whether replaying it
in the environment won (`prag.corrections.replay`). Its instructions (the goal and the person's
utterances) and the scene graphs of its replay are embedded into the store's `embeddings`
table by whoever adds it (`prag.retrieval.corrections.add_correction`), so that retrieval never
encodes them again. Deleting is the only way a correction goes away.

`store.corrections` is this table, with the record of the prior transcripts ever loaded
(`prior_loads`): a prior transcript is stored once per store, and one deleted stays deleted.
"""
from __future__ import annotations

import builtins
import json
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, with_config

from prag.errors import PragError
from prag.store.records import StepRecord, now, text_hash
from prag.store.transcripts import Transcript, TranscriptError, parse
from prag.store.values import stored_json
from prag.text import command

if TYPE_CHECKING:
    from prag.store.database import Store

# prior: shipped with prag; feedback: a person's words made a transcript by the improvement LLM;
# edit: a person's own transcript; reference: the world's own reference path standing in for one.
ORIGINS = ("prior", "feedback", "edit", "reference")


@with_config(ConfigDict(extra="forbid"))  # imports check lines against it (prag.store.lines)
@dataclass
class Correction:
    """A corrected transcript of a task, with where it came from and whether its replay won."""

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
    # Its replay as an episode keeps it (scene graphs as triples, the family's score): what the
    # progress source learns its sub-goals from (prag.agent.goals.milestones). Empty where not replayed.
    steps: list[StepRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@with_config(ConfigDict(extra="forbid"))
@dataclass(frozen=True)
class PriorLoad:
    """A shipped prior transcript loaded into a store: its name, content digest and when."""

    name: str
    digest: str
    loaded_at: str


def correction_texts(correction: Correction) -> list[str]:
    """The texts of a correction that retrieval embeds: its instructions and replayed scenes."""
    return list(correction.instructions) + list(correction.scenes)


class CorrectionError(PragError):
    """A correction that cannot be stored, found or deleted."""


def read_transcript(correction: Correction) -> Transcript:
    """The correction's transcript, read (bounded, never evaluated: `prag.store.transcripts`);
    `TranscriptError` says which of its lines is wrong and why."""
    return parse(correction.transcript)


class Corrections:
    """The corrections of a store (`store.corrections`), written through the store's transactions."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, correction: Correction) -> int:
        """Store a correction; returns its id. Its texts' vectors are the caller's to write first."""
        if correction.origin not in ORIGINS:
            raise CorrectionError(f"unknown origin {correction.origin!r}: use one of {', '.join(ORIGINS)}")
        if not correction.instructions or not correction.transcript.strip():
            raise CorrectionError("a correction needs a transcript and at least one instruction (the goal)")
        try:
            read_transcript(correction)  # whoever brings it: a store holds only transcripts it can read
        except TranscriptError as exc:
            raise CorrectionError(f"the transcript of the correction of {correction.goal[:80]!r} cannot be read "
                                  f"({exc}); nothing stored") from None
        if correction.source_episode is not None:
            self.store.episode(correction.source_episode)  # fails clearly on an unknown episode
        row = correction.to_dict()
        row.pop("id")
        row.update(
            instructions=json.dumps(correction.instructions),
            scenes=json.dumps(correction.scenes),
            steps=json.dumps([step.to_dict() for step in correction.steps]),
            verified=int(correction.verified),
            created_at=correction.created_at or now(),
        )
        try:
            correction.id = self.store.insert("corrections", row)
        except sqlite3.IntegrityError:  # the one row of a prior transcript (migration 3)
            raise CorrectionError(f"the prior transcript {correction.name!r} is in {self.store.path} already") from None
        correction.created_at = row["created_at"]
        return correction.id

    def add_prior(self, correction: Correction, digest: str) -> bool:
        """Store a shipped prior transcript unless one of that name was ever loaded here (even if
        deleted since); True when stored. Under the write lock, so of processes loading the prior
        at once exactly one stores each transcript."""
        with self.store.transaction() as conn:
            if conn.execute("select 1 from prior_loads where name = ?", [correction.name]).fetchone():
                return False
            self.add(correction)
            self.add_prior_load(PriorLoad(correction.name, digest, now()))
        return True

    def add_prior_load(self, load: PriorLoad) -> bool:
        """Record a prior transcript as loaded (an import does); False when it already was."""
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "insert or ignore into prior_loads (name, digest, loaded_at) values (?, ?, ?)",
                [load.name, load.digest, load.loaded_at],
            )
        return cursor.rowcount > 0

    def get(self, correction_id: int) -> Correction:
        """A correction by id; an unknown one is an error pointing to `prag corrections list`."""
        with self.store.lock:
            row = next(self.store.rows("select * from corrections where id = ?", [correction_id]), None)
        if row is None:
            raise CorrectionError(
                f"no correction {correction_id} in {self.store.path}: "
                f"see `{command('prag', 'corrections', 'list', self.store.path)}`"
            )
        return _from_row(self.store.path, row)

    def list(self, *, domain: str | None = None, prior: bool = True) -> builtins.list[Correction]:
        """The corrections in id order; `domain` keeps one action vocabulary, `prior=False` drops
        the shipped prior transcripts."""
        where, params = [], []
        if domain is not None:
            where.append("domain = ?")
            params.append(domain)
        if not prior:
            where.append("origin != 'prior'")
        with self.store.lock:
            rows = self.store.rows(f"select * from corrections where {' and '.join(where) or 'true'} order by id", params)
            return [_from_row(self.store.path, row) for row in rows]

    def find(self, correction: Correction) -> int | None:
        """The id of a stored correction that is this one (a prior transcript: by its name;
        any other: by origin, goal, transcript and creation time), if there is one."""
        if correction.origin == "prior":
            where, params = "origin = 'prior' and name = ?", [correction.name]
        else:
            where = "origin = ? and goal = ? and transcript = ? and created_at = ?"
            params = [correction.origin, correction.goal, correction.transcript, correction.created_at]
        row = self.store.conn.execute(f"select id from corrections where {where}", params).fetchone()
        return int(row[0]) if row else None

    def delete(self, correction_id: int) -> Correction:
        """Remove one correction (the only way one goes away) and the vectors nothing else uses;
        returns what was removed."""
        gone = self.get(correction_id)
        with self.store.transaction() as conn:
            conn.execute("delete from corrections where id = ?", [correction_id])
            self.store.drop_unused_vectors(map(text_hash, correction_texts(gone)))
        return gone

    def prior_loads(self) -> builtins.list[PriorLoad]:
        """The prior transcripts ever loaded into this store, by name."""
        with self.store.lock:
            rows = self.store.conn.execute("select name, digest, loaded_at from prior_loads order by name")
            return [PriorLoad(*row) for row in rows]


def _from_row(path: Path, row: dict[str, Any]) -> Correction:
    row["instructions"] = stored_json(path, f"corrections.instructions of correction {row['id']}", row["instructions"], list)
    row["scenes"] = stored_json(path, f"corrections.scenes of correction {row['id']}", row["scenes"], list)
    steps = stored_json(path, f"corrections.steps of correction {row['id']}", row.get("steps") or "[]", list)
    row["steps"] = [StepRecord(**step) for step in steps]
    row["verified"] = bool(row["verified"])
    for text in ("verify_note", "spec", "task_id", "task_type", "name", "feedback", "improvement_model",
                 "problem", "advice", "answer", "input_transcript", "created_at"):
        row[text] = row[text] or ""
    return Correction(**row)
