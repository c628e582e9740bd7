"""Semantic memory of where things are: for each kind of thing, the kinds of place it was seen in or on.

Read from every stored episode's scene graphs, successes and failures alike (a lost game still
shows where things are), through the family's `Domain` (`placed` says where a thing that is not
held is, `kind` strips the instance number: "apple 1" in "fridge 1" -> ("apple", "fridge")), up
to the step the agent first holds the thing (after that, its place is the agent's doing).
A thing seen in one place over many steps counts once for that episode, so a count is a number
of episodes. Table `places` (migration 7): one row per (episode, kind, place), with the episode's
run, round and source for the progressive rule, written in the transaction that stores the
episode, deleted with it, rebuilt by `prag import` (which stores episodes the ordinary way)
rather than exported. `store.places.ranked(...)` sees the episodes a `Visibility` sees
(`prag.store.visibility`: the progressive rule, as retrieval applies it).

An episode's family comes from its `extra.env` (the runner records it); episodes stored
before that name their task set in `extra.spec`, looked up as a spec (by name, or as the run's
recorded spec or train spec with that name). An episode whose family cannot be found adds no places.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from prag.envs.base import Triple, scene_from_text
from prag.errors import SpecError
from prag.store.episode_extra import EpisodeExtra, stored_extra
from prag.store.values import stored_json
from prag.store.visibility import Visibility

if TYPE_CHECKING:
    from prag.store.database import Store
    from prag.store.records import EpisodeRecord


def found(family: str | None, graphs: Iterable[Iterable[Triple]]) -> set[tuple[str, str]]:
    """The (kind of thing, kind of place) pairs an episode's scene graphs (one per step, in order)
    show, read through the family's Domain; nothing for an unknown family. A thing counts only
    until the agent first holds it: where the agent put it (the potato it heated in the microwave)
    is not where such things are found."""
    from prag.envs import registry  # the families load where episodes are written, not for every store opened

    if not registry.known(family or ""):
        return set()
    domain = registry.domain(str(family))
    taken: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for graph in graphs:
        triples = list(graph)
        taken |= domain.held(triples)
        pairs |= {(domain.kind(thing), domain.kind(place))
                  for thing, _relation, place in domain.placed(triples) if thing not in taken}
    return pairs


def family_of(extra: EpisodeExtra, run_config: dict[str, Any]) -> str | None:
    """The env family an episode was played in: recorded in its extra, else the family of its
    task set (`extra.spec`, a spec name), found among the specs or the run's recorded ones."""
    if extra.env is not None:
        return extra.env
    name = extra.spec
    experiment = run_config.get("experiment", run_config)  # config version 1 was flat
    for where in (name, experiment.get("spec"), experiment.get("train")):
        spec = _spec(where) if isinstance(where, str) else None
        if spec is not None and (name is None or spec[0] == name):
            return spec[1]
    return None


@cache
def _spec(name_or_path: str) -> tuple[str, str] | None:
    """(name, env) of a spec, None when no such spec can be read (moved, renamed, another machine)."""
    from prag.envs.spec import load_spec  # as the registry in `found`

    try:
        spec = load_spec(name_or_path)
    except (SpecError, OSError):
        return None
    return spec.name, spec.env


def add(conn: sqlite3.Connection, episode: tuple[int, str, int, str], pairs: Iterable[tuple[str, str]]) -> None:
    """Write an episode's (kind, place) pairs, in the transaction under way; `episode` is its
    (id, run_id, round, source), kept on each row so that a lookup reads the index alone."""
    conn.executemany(
        "insert or ignore into places (episode_id, run_id, round, source, kind, place) values (?, ?, ?, ?, ?, ?)",
        [(*episode, kind, place) for kind, place in sorted(pairs)],
    )


def record_places(conn: sqlite3.Connection, episode_id: int, episode: EpisodeRecord) -> None:
    """Write where things were in a newly stored episode (the store's episode-insert hook)."""
    if not conn.execute("select 1 from sqlite_master where type = 'table' and name = 'places'").fetchone():
        return  # a store at an older schema (migration tests pin one): migration 7 fills the table from the episodes
    config = conn.execute("select config from runs where id = ?", [episode.run_id]).fetchone()
    family = family_of(episode.extra, stored_json(conn, f"runs.config of run {episode.run_id}", config[0], dict, empty="{}")
                       if config else {})
    key = (episode_id, episode.run_id, episode.round, episode.source)
    add(conn, key, found(family, (step.triples for step in episode.steps)))


def backfill(conn: sqlite3.Connection) -> None:
    """Fill the table from every stored episode's steps (migration 7); a step without triples
    (never the case after migration 4) is read from its text."""
    from prag.envs import registry  # as in `found`

    configs = {run_id: stored_json(conn, f"runs.config of run {run_id}", config, dict, empty="{}")
               for run_id, config in conn.execute("select id, config from runs")}
    episodes = conn.execute("select id, run_id, round, source, extra from episodes order by id").fetchall()
    for episode_id, run_id, round_, source, extra in episodes:
        family = family_of(stored_extra(conn, episode_id, extra), configs.get(run_id, {}))
        if not registry.known(family or ""):
            continue
        steps = conn.execute("select graph, scene from steps where episode_id = ? order by t", [episode_id])
        graphs = (
            [tuple(triple) for triple in stored_json(conn, f"steps.graph of episode {episode_id}", graph, dict).get("triples", [])]
            if graph else scene_from_text(scene)[1]
            for graph, scene in steps
        )
        add(conn, (episode_id, run_id, round_, source), found(family, graphs))


class Places:
    """Where things of each kind were found (`store.places`), under the progressive rule."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def ranked(self, kind: str, visibility: Visibility = Visibility()) -> list[tuple[str, int]]:
        """The kinds of place things of `kind` were seen in or on, with the number of episodes
        `visibility` sees that saw them there, best first (ties by name)."""
        where, params = visibility.where()
        with self.store.lock:
            rows = self.store.conn.execute(
                f"select place, count(*) as n from places where kind = ? and {where} group by place order by n desc, place",
                [kind.strip().lower(), *params],
            ).fetchall()
        return [(place, int(n)) for place, n in rows]

    def kinds(self, visibility: Visibility = Visibility(), *, limit: int | None = None) -> list[tuple[str, int]]:
        """The kinds of thing seen placed somewhere, with the number of episodes `visibility` sees
        that saw them, most seen first (ties by name); the first `limit` of them."""
        where, params = visibility.where()
        with self.store.lock:
            rows = self.store.conn.execute(
                f"select kind, count(distinct episode_id) as n from places where {where} "
                "group by kind order by n desc, kind limit ?",
                [*params, -1 if limit is None else limit],
            ).fetchall()
        return [(kind, int(n)) for kind, n in rows]
