"""How a P-RAG agent decides (`AgentConfig`, with its prompt's `PromptLimits`: what a run records
of the agent) and what it is built with and keeps from episode to episode (`AgentSettings`: the
LLM, what it retrieves and recalls from the store, its config and its family's domain;
prag.run.agents builds them).

The coordinator (prag.agent.agent), the LLM's step and the asking (prag.agent.asking) and the
plan sources (prag.agent.sources) read these; nothing here imports them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from prag.agent.goals.readers import READERS, Recall
from prag.agent.person import Person
from prag.agent.world.places import DEFAULT_PLACES, Ranking
from prag.envs.domain import Domain
from prag.envs.sam import ActionModel
from prag.llm.base import LLM
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility
from prag.sources import KnowledgeSource

ACTION_MODELS = ("given", "learned")  # what means-ends search plans with (`--action-model`)
EXPLORE = ("novel", "uniform")  # what draws a step past the LLM budget (`--explore`)


RETRIEVE_AT = ("episode", "progress", "step")  # when the examples are retrieved (`PromptLimits.retrieve`)


@dataclass(frozen=True)
class PromptLimits:
    """How much of the examples and the history a prompt shows, and when the examples are chosen."""

    example_steps: int = 20  # actions shown per retrieved episode
    observation_chars: int = 200  # observation text kept per step (examples and history)
    correction_steps: int = 30  # actions shown per correction
    # With room cards, the history is shown whole up to this many characters (about 8,000 tokens,
    # in the local model's context of 12,288 with the rules and examples), past that from a multiple
    # of `history_window` steps: a 100-step ScienceWorld episode with many rooms reached 24,000.
    history_chars: int = 32000
    history_window: int = 25
    # When the retrieved examples are chosen (prag.agent.asking.llm_step): at the episode's first call
    # (and when the goal is read anew), also when the score changed or a sub-goal was met, or every
    # call; one of RETRIEVE_AT.
    retrieve: str = "episode"
    # The admissible actions listed by number and the answer a number, where they are listed (not
    # past PATTERNS_OVER, nor in plans): an answer of one to three digits, one more token each
    # per action listed.
    numbered: bool = False


@dataclass(frozen=True)
class AgentConfig:
    """How the P-RAG agent decides: thoughts, constrained choices, re-asks, loops, prompt sizes."""

    think: bool = False  # a one-sentence thought before each action (ReAct-style)
    constrained: bool = True  # give the admissible set as choices when the backend enforces them
    max_reasks: int = 2
    # An action taken this often from the same observation and scene graph is not offered there
    # again: the environment would answer the same. The 1.5B model otherwise went round three or
    # four places for its 20 steps, walking past the closed safe that held its goal object.
    loop_limit: int = 1
    keep_margin: float = 0.25  # a shown example is replaced only by one scoring this much higher
    thought_tokens: int = 48
    action_tokens: int = 24
    # Actions per LLM answer: 1 is one action; n > 1 the next action and up to n - 1 planned after it.
    plan_length: int = 1
    # The last fraction of the step budget in which an irrevocable action on a thing the goal does
    # not name may be taken (prag.agent.skills.irrevocable); 1.0 leaves it to the LLM from the first step.
    gamble_window: float = 0.1
    limits: PromptLimits = field(default_factory=PromptLimits)
    # When to ask the LLM (prag.agent.sources.mediator): always | hard-coded | random | learned. Not among
    # what round 0 depends on (metadata read by prag.run.config): a run may start from another's
    # round 0 if every step of it was asked (prag.run.runner checks).
    ask: str = field(default="always", metadata={"round0": False})
    ask_probability: float = field(default=0.5, metadata={"round0": False})  # the random policy's
    asker: str | None = field(default=None, metadata={"round0": False})  # the learned one's NAME[:VERSION]
    plan_pool: int = field(default=10, metadata={"round0": False})  # episodes searched for a plan at the start
    # With a person present: the LLM's proposals they reject in a row before they are asked for the step
    # in words (Soar ITL asks after three).
    max_rejections: int = field(default=3, metadata={"round0": False})
    # The knowledge sources used (prag.sources), in the order they are tried; the default is P-RAG
    # with plans from experience.
    sources: tuple[str, ...] = (KnowledgeSource.EXPERIENCE, KnowledgeSource.LLM)
    # Who reads the instruction into a formal goal, in order (prag.agent.goals.readers); the person's
    # yes/no only where a person is present.
    readers: tuple[str, ...] = READERS
    # What orders the find-X skill's search (prag.agent.world.places, in precedence order): the store's
    # semantic memory, the LLM's guess for kinds the memory never saw, the family's placement rules.
    places: tuple[str, ...] = DEFAULT_PLACES
    # Which action model means-ends search plans with (of ACTION_MODELS): the family's given one
    # where it has one, else the one learned from the store; or the learned one always.
    action_model: str = "given"
    # The LLM calls past which an episode's steps cost none (its readings counted): a step only
    # the LLM would choose is then drawn at random from the admissible actions; a revised goal is
    # still read. None: no limit. A 1.5B model choosing step after step wins few games and takes
    # minutes each.
    llm_budget: int | None = None
    # What draws a step past the LLM budget (prag.agent.asking.novelty): "novel" (the task's things and
    # pairs not yet tried first) or "uniform" (any admissible action alike, the baseline).
    explore: str = "novel"
    # The LLM time a game's calls may take, in seconds a step of its step cap (its readings counted);
    # past it, as past `llm_budget`. None: no limit. A budget in time lets a model that answers fast
    # choose every step no other source takes, and a slow one a share of them.
    llm_seconds: float | None = None


def plans_with_learned(config: AgentConfig, domain: Domain) -> bool:
    """Whether means-ends search would plan with a model learned from the store: the family has
    none given (or the config asks for the learned one), and either search is among the sources
    and the family says what its goals mean as facts, or the progress source is (its sub-goals,
    learned from reward, are facts)."""
    facts = KnowledgeSource.SEARCH in config.sources and domain.goal_facts is not None
    return (facts or KnowledgeSource.PROGRESS in config.sources) and (
        config.action_model == "learned" or domain.action_model is None)


@dataclass(frozen=True)
class AgentSettings:
    llm: LLM
    experiences: ExperienceSource | None
    corrections: CorrectionSource | None
    visibility: Visibility
    config: AgentConfig
    seed: int
    domain: Domain
    person: Person | None  # present: the LLM's proposals go to them for a yes or no
    ranking: Ranking  # the semantic memory: kinds of place where a kind of thing was seen
    recall: Recall  # verified readings of wordings like an instruction (prag.agent.goals.readers)
    world_model: ActionModel | None  # the action model learned from the store (prag.agent.world_model)
    later: int = 0  # the rounds that play this task again after this one: a failed gamble is learned from there
