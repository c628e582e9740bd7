"""Learned action models kept in the store, versioned per family (table `action_models`, migration 9).

A row is a snapshot of what the safe learner (prag.envs.sam) knew: the model as JSON, the family
(its action vocabulary), and where it came from: the run and round it was learned for (the
episodes that round could see, under the progressive rule), or none for one learned from the
whole store by `prag model --save`. A run saves one when a round begins that plans with a learned
model and the model differs from the family's newest; nothing is overwritten. The store keeps the
JSON only: turning it back into a model is `prag.envs.sam.ActionModel.from_json`'s job.

`store.action_models` is this table.
"""
from __future__ import annotations

import builtins
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prag.errors import PragError
from prag.store.records import now
from prag.store.values import stored_int
from prag.text import command

if TYPE_CHECKING:
    from prag.store.database import Store


class ActionModelError(PragError):
    """A learned action model that cannot be found."""


@dataclass
class ActionModelRecord:
    """A learned model's JSON and where it was learned."""

    family: str
    model: str  # ActionModel.to_json()
    episodes: int  # learned from
    transitions: int
    run_id: str | None = None  # the run and round it was learned for; None: the whole store
    round: int | None = None
    version: int = 0  # set when stored: 1, 2, ... per family
    id: int | None = None
    created_at: str = ""


class ActionModels:
    """The learned action models of a store (`store.action_models`)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, record: ActionModelRecord) -> ActionModelRecord:
        """Store `record` as its family's next version; returns it with id, version and time set."""
        row = asdict(record)
        row.pop("id")
        row["created_at"] = record.created_at or now()
        record.id, record.version = self.store.insert_version("action_models", "family", row)
        record.created_at = row["created_at"]
        return record

    def save_if_new(self, record: ActionModelRecord) -> ActionModelRecord | None:
        """Store `record` unless the family's newest version holds the same model; the stored record or None."""
        newest = self._rows("family = ?", [record.family], limit=1)
        if newest and newest[0].model == record.model:
            return None
        return self.add(record)

    def get(self, family: str, version: int | None = None) -> ActionModelRecord:
        """The family's model at `version` (default: its newest)."""
        where = "family = ?" + (" and version = ?" if version is not None else "")
        rows = self._rows(where, [family] + ([version] if version is not None else []), limit=1)
        if not rows:
            known = ", ".join(f"{r.family} v{r.version}" for r in self.list()) or "none"
            wanted = f"{family!r}" + (f" version {version}" if version is not None else "")
            raise ActionModelError(
                f"no learned action model {wanted} in {self.store.path} (stored: {known}): learn one with "
                f"`{command('prag', 'model', self.store.path, family, '--save')}`, or play a run with --action-model learned"
            )
        return rows[0]

    def find(self, record: ActionModelRecord) -> int | None:
        """The id of a stored model that is `record` (same family, time and model), if any."""
        with self.store.lock:
            row = self.store.conn.execute(
                "select id from action_models where family = ? and created_at = ? and model = ?",
                [record.family, record.created_at, record.model],
            ).fetchone()
        return None if row is None else int(row[0])

    def list(self) -> builtins.list[ActionModelRecord]:
        """Every stored model, by family then version."""
        return self._rows("true", [], order="family, version")

    def _rows(self, where: str, params: builtins.list[Any], *, limit: int | None = None,
              order: str = "version desc") -> builtins.list[ActionModelRecord]:
        with self.store.lock:
            rows = builtins.list(self.store.rows(
                f"select * from action_models where {where} order by {order} limit ?", [*params, -1 if limit is None else limit]))
        return [_from_row(self.store.path, row) for row in rows]


def _from_row(path: Path, row: dict[str, Any]) -> ActionModelRecord:
    of = f"of action model {row['family']} v{row['version']}"
    for name in ("episodes", "transitions", "version"):
        row[name] = stored_int(path, f"action_models.{name} {of}", row[name])
    return ActionModelRecord(**row)
