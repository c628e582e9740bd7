"""Goal readings: how each stored episode read its instruction, and whether the reading is verified.

An agent's episode keeps its reading in `extra.reading` (prag.agent.goals.readers): the instruction as
given, the canonical sentence acted on, the reader that gave it. A reading is verified for that
wording when the episode was won under it, or a person gave or confirmed it. Table `readings`
(migration 8): one row per episode with a reading, with its run, round and source for the
progressive rule (round r reads what rounds < r verified), written in the transaction that stores
the episode, deleted with it, rebuilt by `prag import` (which stores episodes the ordinary way).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prag.store.episode_extra import EpisodeExtra, stored_extra
from prag.store.visibility import Visibility

if TYPE_CHECKING:
    from prag.store.database import Store
    from prag.store.records import EpisodeRecord

PERSON = "person"  # the reader whose readings are verified by a person's word, won or not


@dataclass(frozen=True)
class StoredReading:
    """A verified reading of a wording, with how many visible episodes verified it."""

    wording: str
    sentence: str
    reader: str
    episodes: int


def row_of(extra: EpisodeExtra, won: bool) -> tuple[str, str, str, int] | None:
    """(wording, sentence, reader, verified) of an episode's reading, None when it kept none."""
    reading = extra.reading
    if reading is None or reading.sentence is None or reading.source is None:
        return None
    # A win verifies the reading only where its last action bears the reading out (`fits`).
    verified = won and reading.fits or reading.source == PERSON
    return reading.instruction, reading.sentence, reading.source, int(verified)


def add(conn: sqlite3.Connection, episode_id: int, episode: EpisodeRecord) -> None:
    """Write a newly stored episode's reading (the store's episode-insert hook)."""
    if not conn.execute("select 1 from sqlite_master where type = 'table' and name = 'readings'").fetchone():
        return  # a store at an older schema (migration tests pin one): migration 8 fills the table
    row = row_of(episode.extra, episode.won)
    if row is not None:
        conn.execute(
            "insert into readings (episode_id, run_id, round, source, wording, sentence, reader, verified) "
            "values (?, ?, ?, ?, ?, ?, ?, ?)",
            [episode_id, episode.run_id, episode.round, episode.source, *row],
        )


def backfill(conn: sqlite3.Connection) -> None:
    """Fill the table from every stored episode (migration 8)."""
    for episode_id, run_id, round_, source, won, extra in conn.execute(
        "select id, run_id, round, source, won, extra from episodes order by id"
    ).fetchall():
        row = row_of(stored_extra(conn, episode_id, extra), bool(won))
        if row is not None:
            conn.execute(
                "insert into readings (episode_id, run_id, round, source, wording, sentence, reader, verified) "
                "values (?, ?, ?, ?, ?, ?, ?, ?)",
                [episode_id, run_id, round_, source, *row],
            )


class Readings:
    """The verified readings of the store (`store.readings`), under the progressive rule."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def verified(self, visibility: Visibility = Visibility()) -> list[StoredReading]:
        """Each (wording, sentence) verified by an episode `visibility` sees, with how many
        verified it, most verified first."""
        where, params = visibility.where()
        with self.store.lock:
            rows = self.store.conn.execute(
                f"select wording, sentence, min(reader), count(*) as n from readings where verified = 1 and {where} "
                "group by wording, sentence order by n desc, wording, sentence",
                params,
            ).fetchall()
        return [StoredReading(w, s, r, int(n)) for w, s, r, n in rows]

    def tried(self, wording: str) -> list[dict[str, Any]]:
        """Every stored reading of this exact wording: sentence, reader, verified, episode."""
        with self.store.lock:
            rows = self.store.conn.execute(
                "select episode_id, run_id, round, sentence, reader, verified from readings where wording = ? "
                "order by episode_id", [wording],
            ).fetchall()
        keys = ("episode_id", "run_id", "round", "sentence", "reader", "verified")
        return [dict(zip(keys, row)) for row in rows]
