"""Which actions are about the task's things: the ones a draw past the LLM budget prefers.

Past the LLM budget a step no source gives is drawn among the admissible actions: hundreds in a
ScienceWorld room, most of them about things the task never mentions ("move cupboard to table").
An action naming a thing the goal's words name ("inclined plane", "buzzer", "paint"), or a thing
focused on or what holds it (the lead, then the metal pot it was put in, then the stove under the
pot), is more likely to be a step of the task: half of the draws are taken among those. With no
model on the 30 ScienceWorld test variations this raised chemistry-mix, identify-life-stages-2,
power-component and test-conductivity-of-unknown-substances by 4 to 14 points, and
measure-melting-point-known-substance lost 2 (docs/sciworld.md).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from prag.envs.base import Triple
from prag.envs.domain import Domain

# English words that name no thing of a task, and the nouns any task uses for any thing.
_UNNAMING = frozenset("""a an the of in on to into onto at by for from with without and or is are be it its it's
this that these those your you task first then next after when where which who what if done
substance thing things object""".split())
HOLDERS = 3  # how many holders up from a thing focused on count as about it (the stove under the pot of lead)


def about_the_task(actions: Sequence[str], goal: str, triples: Sequence[Triple], domain: Domain,
                   room: str | None) -> list[str]:
    """The actions naming a thing the goal's words name, or a thing focused on or holding one
    (the room it is in and the inventory left out)."""
    said = set(re.findall(r"[a-z]+", goal.lower())) - _UNNAMING
    chain = set(domain.marked_things(triples))
    for _ in range(HOLDERS):
        chain |= {o for s, r, o in triples
                  if s in chain and domain.placement.get(r) is not None and o not in (domain.held_by, room)}
    return [action for action in actions
            if any(name in chain or set(re.findall(r"[a-z]+", name)) & said for name in domain.entities(action))]
