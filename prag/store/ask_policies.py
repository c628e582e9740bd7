"""Learned ask policies (When2Ask's mediator) kept in the store, versioned by name.

A row holds the trained network as bytes (stable-baselines3's `model.save` into a buffer) and
what it was trained on: the task set and its tasks, the LLM, the training budget, the penalty
lambda, the discount, the seed, the reward curve and the before/after evaluation. Saving under
a name that exists adds the next version; nothing is overwritten. The store only keeps bytes:
turning them back into a policy is the run layer's job (`prag.run.asker.learned_policy`).

`store.ask_policies` is this table.
"""
from __future__ import annotations

import builtins
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prag.errors import PragError
from prag.store.records import now
from prag.store.values import damaged_value, stored_int, stored_json

if TYPE_CHECKING:
    from prag.store.database import Store

DEFAULT_NAME = "asker"


class AskPolicyError(PragError):
    """A learned ask policy that cannot be found or stored."""


@dataclass
class AskPolicyRecord:
    """A trained ask policy and what it was trained on."""

    name: str
    spec: str
    tasks: list[str]  # task ids of the spec it was trained on
    llm: str  # the LLM the agent asked while training
    timesteps: int  # PPO's training budget, in mediator decisions
    penalty: float  # lambda: the cost of an ask that returned the plan being followed
    gamma: float  # the win reward is gamma ** steps
    seed: int
    features: int  # length of the state vector the network reads (MediatorState.FEATURES)
    model: bytes  # the stable-baselines3 model, as `model.save` writes it
    algorithm: str = "PPO"
    # [{"timesteps", "episodes", "mean_return", "asks"}] per PPO rollout: the training's reward curve
    curve: list[dict[str, int | float]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # evaluation before/after, network shape, ...
    version: int = 0  # set when stored: 1, 2, ... per name
    id: int | None = None
    created_at: str = ""


class AskPolicies:
    """The learned ask policies of a store (`store.ask_policies`), written through its transactions."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, record: AskPolicyRecord) -> AskPolicyRecord:
        """Store `record` as the next version of its name; returns it with id, version and time set."""
        if not record.name.strip():
            raise AskPolicyError("an ask policy needs a name: give one with --name")
        if not record.model:
            raise AskPolicyError(f"ask policy {record.name!r} has no model bytes: train it before storing it")
        row = asdict(record)
        row.pop("id")
        row.update(
            tasks=json.dumps(record.tasks),
            curve=json.dumps(record.curve),
            extra=json.dumps(record.extra, sort_keys=True),
            created_at=record.created_at or now(),
        )
        record.id, record.version = self.store.insert_version("ask_policies", "name", row)
        record.created_at = row["created_at"]
        return record

    def get(self, name: str = DEFAULT_NAME, version: int | None = None) -> AskPolicyRecord:
        """The policy `name` at `version` (default: its latest)."""
        where = "name = ?" + (" and version = ?" if version is not None else "")
        params: list[Any] = [name] + ([version] if version is not None else [])
        with self.store.lock:
            row = next(self.store.rows(f"select * from ask_policies where {where} order by version desc limit 1", params), None)
        if row is None:
            known = ", ".join(f"{p.name} v{p.version}" for p in self.list()) or "none"
            wanted = f"{name!r}" + (f" version {version}" if version is not None else "")
            raise AskPolicyError(
                f"no ask policy {wanted} in {self.store.path} (stored: {known}): train one with `prag train-asker`"
            )
        return _from_row(self.store.path, row)

    def find(self, record: AskPolicyRecord) -> int | None:
        """The id of a stored policy that is `record` (same name, training time and network), if any."""
        with self.store.lock:
            row = self.store.conn.execute(
                "select id from ask_policies where name = ? and created_at = ? and model = ?",
                [record.name, record.created_at, record.model],
            ).fetchone()
        return None if row is None else int(row[0])

    def list(self) -> builtins.list[AskPolicyRecord]:
        """Every stored policy, by name then version."""
        with self.store.lock:
            rows = builtins.list(self.store.rows("select * from ask_policies order by name, version"))
        return [_from_row(self.store.path, row) for row in rows]


def _from_row(path: Path, row: dict[str, Any]) -> AskPolicyRecord:
    of = f"of ask policy {row['name']} v{row['version']}"
    row["tasks"] = stored_json(path, f"ask_policies.tasks {of}", row["tasks"], list)
    row["curve"] = stored_json(path, f"ask_policies.curve {of}", row["curve"], list)
    row["extra"] = stored_json(path, f"ask_policies.extra {of}", row["extra"], dict, empty="{}")
    for name in ("timesteps", "seed", "features", "version"):
        row[name] = stored_int(path, f"ask_policies.{name} {of}", row[name])
    if not isinstance(row["model"], bytes) or not row["model"]:
        raise damaged_value(path, f"ask_policies.model {of}", row["model"], "the bytes of a trained network")
    return AskPolicyRecord(**row)
