"""The progressive rule, prag's core promise: round r of a run sees only what came before it.

A `Visibility` says which stored episodes a query may see, and is the one place that says so.
Every reader of past episodes applies it: retrieval (`prag.retrieval.index`, over its columns),
the semantic memory of places and the verified goal readings (`prag.store.places`,
`prag.store.readings`, as SQL), and the learned action models (`prag.agent.world_model`, through
`Store.visible_episode_ids`). Each form is derived from `first_hidden_round`, so they cannot drift.

Only the agent's plays are seen (source "agent"): an episode stored with source "correction" is not
a play, and corrections reach the agent through the corrections table (`prag.store.corrections`),
outside this rule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Visibility:
    """Which stored episodes a query may see.

    With `run_id` set, a query made in round `before_round` of that run sees the run's episodes
    of earlier rounds only (with `--train`, the test round sees the training rounds before it),
    plus every episode of `include_runs` (`--include`). With `run_id` None, every episode of the
    source is visible (`prag query`, `prag model`).
    """

    run_id: str | None = None
    before_round: int = 0
    include_runs: tuple[str, ...] = ()
    source: str = "agent"

    def first_hidden_round(self, run_id: str) -> float:
        """The first round of `run_id` whose episodes are not visible (the rule itself): rounds
        below it are visible, those from it on are not; inf when every round is visible."""
        if self.run_id is None or run_id in self.include_runs:
            return math.inf
        return self.before_round if run_id == self.run_id else 0

    def where(self) -> tuple[str, list[Any]]:
        """The rule as an SQL condition on a table's `run_id`, `round` and `source` columns, with
        its parameters. Only the runs the rule names can show anything (any other run's first
        hidden round is 0), so they are the ones listed."""
        if self.run_id is None:
            return "source = ?", [self.source]
        runs = list(dict.fromkeys([self.run_id, *self.include_runs]))
        terms = " or ".join("(run_id = ? and round < ?)" for _ in runs)
        return f"source = ? and ({terms})", [self.source, *(v for r in runs for v in (r, self.first_hidden_round(r)))]
