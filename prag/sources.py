"""Where a step comes from, named once (Soar ITL's knowledge sources).

Two sets of names: the knowledge sources a run draws on (`--sources`, tried in the order given),
and the step sources an episode records for each action (the first field of each of its
`extra.decisions`: which one chose the action). A knowledge source gives the steps of one or more
step sources: experience a stored episode's or a person's correction's plan, search the find-X
skill's, means-ends planning's or the goal's sub-goals'. The agent, the CLI, the store's records and
the reports take the names from here. Step source names are stored with every episode: a name is
added, never changed.

The module sits outside the layers (like prag.errors): the store and the reports below the agent
read the names too.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class StepSource(StrEnum):
    """Who chose an action: a `Decision`'s source, a `Plan`'s, as the store keeps it."""

    EPISODE = "episode"
    CORRECTION = "correction"
    FIND = "find"
    SUBGOAL = "subgoal"
    SEARCH = "search"
    LLM = "llm"
    PERSON = "person"
    RANDOM = "random"
    PROGRESS = "progress"


STEP_SOURCES: dict[StepSource, str] = {
    StepSource.EPISODE: "a plan from a stored episode: a success, or a lost one's progress",
    StepSource.CORRECTION: "a plan from a verified correction by a person",
    StepSource.FIND: "search: the find-X skill's walk to where what the goal needs may be",
    StepSource.SUBGOAL: "search: the next of the sub-goals the goal spells in order",
    StepSource.SEARCH: "search: means-ends planning over what the agent observed",
    StepSource.LLM: "the LLM's answer, or an action it planned after it",
    StepSource.PERSON: "a person's words naming the action",
    StepSource.RANDOM: "drawn past the LLM budget, by exploration that seeks what is new",
    StepSource.PROGRESS: "a step toward the next sub-goal learned from reward (what raised the score before)",
}


class KnowledgeSource(StrEnum):
    """What a run draws its steps from (`--sources`), in the order the mediator tries them."""

    EXPERIENCE = "experience"
    SEARCH = "search"
    PROGRESS = "progress"
    LLM = "llm"
    PERSON = "person"


@dataclass(frozen=True)
class Knowledge:
    """A knowledge source: what it is, and the step sources of the steps it gives."""

    description: str
    steps: tuple[StepSource, ...]


KNOWLEDGE: dict[KnowledgeSource, Knowledge] = {
    KnowledgeSource.EXPERIENCE: Knowledge(
        "plans from retrieved successes and corrections", (StepSource.EPISODE, StepSource.CORRECTION)),
    KnowledgeSource.SEARCH: Knowledge(
        "find what the goal needs, then means-ends search; or the goal's sub-goals in order where it spells a "
        "route, as TextWorld's do; followed unless --ask always", (StepSource.FIND, StepSource.SEARCH, StepSource.SUBGOAL)),
    KnowledgeSource.PROGRESS: Knowledge(
        "sub-goals learned from reward: the facts a step that raised the score made true, re-bound to this task, "
        "reached by the route that reached them before", (StepSource.PROGRESS,)),
    KnowledgeSource.LLM: Knowledge("its answer, when no earlier source has a step it can take", (StepSource.LLM, StepSource.RANDOM)),
    KnowledgeSource.PERSON: Knowledge(
        "yes or no to the LLM's proposals, or the step in words where no earlier source has one", (StepSource.PERSON,)),
}

EXPERIENCE_STEPS = KNOWLEDGE[KnowledgeSource.EXPERIENCE].steps  # plans that are experience
SEARCH_STEPS = KNOWLEDGE[KnowledgeSource.SEARCH].steps  # plans that are search
