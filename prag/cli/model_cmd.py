"""`prag model`: the action model learned from a store's episodes, printed as PDDL."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from prag.agent.world_model import WorldModels
from prag.cli import app
from prag.cli.common import console, guarded
from prag.envs import registry
from prag.envs.learned import domain_pddl
from prag.envs.sam import ActionModel
from prag.retrieval.index import Visibility
from prag.store import Store
from prag.store.action_models import ActionModelRecord
from prag.text import shown


@app.command()
@guarded
def model(
    store_path: Annotated[Path, typer.Argument(help="Path of the experience store (SQLite file).")],
    family: Annotated[str, typer.Argument(help="The env family whose episodes teach it: alfworld, alfworld-gen, grid, textworld.")],
    version: Annotated[Optional[int], typer.Option("--version", min=1, help="Show this stored version instead of learning from the episodes now.")] = None,
    save: Annotated[bool, typer.Option("--save", help="Store what was learned as the family's next version (unless the newest is the same).")] = False,
    stored: Annotated[bool, typer.Option("--list", help="List the stored versions instead.")] = False,
) -> None:
    """Learn the family's action model from every episode in the store (SAM: preconditions are what
    held every time an action applied, effects what changed), and print its operators as PDDL."""
    domain = registry.domain(family)
    with Store(store_path, create=False) as store:
        if stored:
            _list(store.action_models.list())
            return
        if version is not None:
            record = store.action_models.get(domain.name, version)
            _print(domain_pddl(ActionModel.from_json(record.model)))
            return
        learned = WorldModels(store).model(Visibility(), domain)
        _print(domain_pddl(learned))
        if save:
            saved = store.action_models.save_if_new(
                ActionModelRecord(domain.name, learned.to_json(), learned.episodes, learned.transitions))
            said = f"stored as {domain.name} v{saved.version}" if saved else "the newest stored version is the same: not stored"
            _print(f"; {said}")


def _list(records: list[ActionModelRecord]) -> None:
    table = Table("family", "version", "learned for", "episodes", "transitions", "operators", "created")
    for record in records:
        usable = len(ActionModel.from_json(record.model).usable())
        where = "the whole store" if record.run_id is None else f"{record.run_id} round {record.round}"
        table.add_row(shown(record.family), str(record.version), shown(where), str(record.episodes),
                      str(record.transitions), str(usable), shown(record.created_at))
    console.print(table)


def _print(pddl: str) -> None:
    """PDDL as it is, but the control characters of names the store's episodes gave (prag.text.shown)."""
    console.print(shown(pddl, lines=True), highlight=False, soft_wrap=True)
