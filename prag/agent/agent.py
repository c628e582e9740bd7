"""The P-RAG planner: a coordinator of the goal (prag.agent.goal), the episode's state
(prag.agent.state), the plan sources, the mediator and the LLM's step (prag.agent.llm_step:
retrieve, prompt, ask, check the answer, notice loops).

With a corrections source, the transcripts a person corrected that match the history's
instructions (the goal and what the person said) and the scene graph come first in the prompt.
A person may speak during the episode (`hear`): the words enter the history where they were
said, and the latest ones are repeated with every step's actions.

What the agent knows of its environment family comes from the family's `Domain`: the rules
text, which actions undo the last one (never offered), and the hints (prag.agent.hints) whose
notes follow each step's actions.

Experience also acts directly (When2Ask's planner-actor-mediator): a retrieved success or a
verified correction that fits the task becomes a plan (`prag.agent.actor`), and each step the
ask policy (`prag.agent.mediator`) decides whether the plan's next step is taken without an
LLM call or the LLM is asked. With `ask = "always"` every step asks, as P-RAG plays.

The LLM may plan too (`plan_length` n > 1): it answers with the next action and up to n - 1
further actions, one per line. Constrained decoding still forces the first line to be
admissible; the further lines become the actor's plan (source `llm`), each validated when its
turn comes. Such a plan replaces one that ran out or an earlier answer's, never a plan from
experience that still has steps: those are proven, an LLM's guess is not.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from prag.agent.actor import Actor
from prag.agent.asking import Asking
from prag.agent.chain import chain, source_names
from prag.agent.fact_reader import FactsReader
from prag.agent.goal import Goal
from prag.agent.milestones import won_reading
from prag.agent.mediator import (
    POLICIES,
    Always,
    AskPolicy,
    HardCoded,
    MediatorState,
    RandomAsk,
)
from prag.agent.options import named
from prag.agent.person import Person
from prag.agent.places import DEFAULT_PLACES, Ranking, no_ranking
from prag.agent.plan_source import Planning, PlanSource
from prag.agent.plans import Plan
from prag.agent.llm_step import LLMStep
from prag.agent.prompt import PromptLimits
from prag.agent.settings import AgentSettings
from prag.agent.readers import (
    READERS,
    REWARD,
    ExperienceReader,
    GoalReader,
    LLMReader,
    PersonReader,
    Recall,
    TemplateReader,
    WordsReader,
    no_recall,
    read,
)
from prag.agent.protocol import Decision, Trace, Usage
from prag.agent.state import EpisodeState
from prag.envs.base import Observation
from prag.envs.domain import Domain
from prag.envs.sam import ActionModel
from prag.errors import PragError
from prag.llm.base import LLM
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility
from prag.sources import KnowledgeSource, StepSource
from prag.store.episode_extra import AgentReport, Choice, Effort, GoalReading
from prag.store.records import StepRecord

ACTION_MODELS = ("given", "learned")  # what means-ends search plans with (`--action-model`)
EXPLORE = ("novel", "uniform")  # what draws a step past the LLM budget (`--explore`)




def parse_readers(text: str) -> tuple[str, ...]:
    """The goal readers a comma-separated list names (`--readers template,experience,llm`), checked."""
    return named(text, READERS, "--readers", "goal reader", "comma-separated (or none: '')")


def parse_sources(text: str) -> tuple[str, ...]:
    """The sources a comma-separated list names (`--sources experience,search,llm`), checked."""
    known = source_names()
    sources = named(text, known, "--sources", "source of steps", "comma-separated, with llm or person among them")
    if not {KnowledgeSource.LLM, KnowledgeSource.PERSON} & set(sources):
        raise PragError(
            f"--sources {text!r}: name some of {', '.join(known)}, comma-separated, with llm or person among them"
        )
    return sources


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
    # not name may be taken (prag.agent.irrevocable); 1.0 leaves it to the LLM from the first step.
    gamble_window: float = 0.1
    limits: PromptLimits = field(default_factory=PromptLimits)
    # When to ask the LLM (prag.agent.mediator): always | hard-coded | random | learned. Not among
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
    # Who reads the instruction into a formal goal, in order (prag.agent.readers); the person's
    # yes/no only where a person is present.
    readers: tuple[str, ...] = READERS
    # What orders the find-X skill's search (prag.agent.places, in precedence order): the store's
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
    # What draws a step past the LLM budget (prag.agent.novelty): "novel" (the task's things and
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


def ask_policy(config: AgentConfig, seed: int = 0) -> AskPolicy:
    """The ask policy a config names; `learned` needs its trained network (prag.run.asker)."""
    if config.ask == "always":
        return Always()
    if config.ask == "hard-coded":
        return HardCoded()
    if config.ask == "random":
        return RandomAsk(config.ask_probability, seed)
    raise ValueError(f"ask policy {config.ask!r} is built by the runner, or unknown: use one of {', '.join(POLICIES)}")


class PragAgent:
    """The P-RAG agent (implements `prag.agent.protocol.Agent`): `reset(observation)`, then
    `act` and `observe` per step, and `finish()` for what the store keeps of the episode."""

    def __init__(
        self,
        llm: LLM,
        experiences: ExperienceSource | None,
        visibility: Visibility,
        config: AgentConfig = AgentConfig(),
        seed: int = 0,
        corrections: CorrectionSource | None = None,
        *,
        domain: Domain,
        asker: AskPolicy | None = None,
        person: Person | None = None,
        ranking: Ranking = no_ranking,
        recall: Recall = no_recall,
        world_model: ActionModel | None = None,
    ) -> None:
        self.settings = AgentSettings(llm, experiences, corrections, visibility, config, seed, domain, person, ranking,
                                      recall, world_model)
        self.asker = asker or ask_policy(config, seed)

    def reset(self, observation: Observation) -> None:
        s = self.settings
        usage = Usage()  # the readers', the place guesser's and the LLM step's calls alike
        effort = Effort()  # what the person's instructions and yes/no answers cost them
        self.goal = Goal(self._readers(usage, effort), observation, s.domain)
        self.won = observation.won
        self.state = EpisodeState.start(observation, s.domain, self.goal.sentence)
        self.llm_step = LLMStep(s.llm, s.experiences, s.corrections, s.visibility, s.config, s.seed, self.goal, self.state,
                                usage)
        self.asking = Asking(self.llm_step, s.person, s.config, self.state, effort)
        self.actor = Actor(s.domain)
        planning = Planning(s, self.goal, self.state, self.llm_step, self.actor, self._revise, StepRecord.of(0, None, observation))
        # A mediator that always asks follows no plan: none is sought (nor corrections retrieved for one).
        self.plans: list[PlanSource] = [] if isinstance(self.asker, Always) else chain(s.config.sources, planning)

    def _readers(self, usage: Usage, effort: Effort) -> list[GoalReader]:
        """The goal readers the config names, in its order; the person's only with a person."""
        s = self.settings
        made: dict[str, GoalReader] = {
            "template": TemplateReader(),
            "experience": ExperienceReader(s.recall),
            "words": WordsReader(s.recall),
            "llm": LLMReader(s.llm, s.recall, usage, s.seed),
            "facts": FactsReader(s.llm, s.recall, usage, s.seed),
        }
        if s.person is not None:
            without_person = [made[n] for n in s.config.readers if n in made]
            made["person"] = PersonReader(s.person, effort, lambda context: read(without_person, context))
        return [made[name] for name in s.config.readers if name in made]

    def _revise(self, why: str, wrong: dict[str, str]) -> None:
        """The reading acted on cannot be right: the goal takes the next hypothesis, planned for afresh."""
        if self.goal.revise(why, wrong, self.state.observed):
            self.actor.restart()
            for source in self.plans:
                source.restart()

    def hear(self, text: str) -> None:
        """The person says something: it joins the history after the latest observation."""
        self.asking.hear(text)

    def observe(self, action: str, observation: Observation) -> None:
        self.won = observation.won
        self.state.add(action, observation)
        if self.goal.subgoals is not None:
            self.goal.subgoals.observe(self.state.t - 1, action, observation)

    def act(self, observation: Observation) -> Decision:
        """The plan's next step when the mediator does not ask; otherwise the LLM's answer."""
        self._offer(observation)
        while True:
            state = self._state(observation)
            if self.asker.ask(state):
                break
            step = self.actor.step_now(observation.admissible)
            assert self.actor.follower is not None  # a policy that does not ask has a plan to follow
            if step is not None:
                self.actor.follower.advance()  # `step` is the plan's next step: no need to resolve it again
                self.state.steps_since_ask += 1
                return self.state.decided(Decision(step, source=self.actor.follower.plan.source, asked=False))
            # The mediator keeps the plan but its step cannot be taken: passed over, not forced.
            self.actor.follower.advance()
        self.state.asks += 1
        self.state.steps_since_ask = 0
        decision, planned = self.asking.ask(observation)
        same = self.actor.took(decision.action, observation.admissible)
        if self.settings.config.plan_length > 1 and decision.valid:
            self.actor.follow_llm(Plan(tuple(planned), StepSource.LLM, goal=self.goal.sentence))
        return self.state.decided(replace(decision, asked=True, same_plan=same))

    def mediator_state(self, observation: Observation) -> MediatorState:
        """What the ask policy sees for this observation. Training environments read it before
        `act` (prag.run.asker), so the plans `act` would offer at this step are offered first."""
        self._offer(observation)
        return self._state(observation)

    def _offer(self, observation: Observation) -> None:
        """The chain's plan sources, in the config's order, each offering the actor its plan
        once per step; the mediator then follows a plan or asks the LLM or the person."""
        for source in self.plans:
            source.offer(observation)

    def _state(self, observation: Observation) -> MediatorState:
        return self.actor.state(
            t=self.state.t, max_steps=self.state.max_steps, admissible=observation.admissible,
            last_changed=self.state.last_changed, steps_since_ask=self.state.steps_since_ask, asks=self.state.asks,
            holding=bool(self.settings.domain.held(observation.scene_triples)),
        )

    def _reading(self) -> GoalReading:
        """The episode's reading as kept: where no reader read the goal into the family's goals
        (a family with no schema), a win says what it meant, as facts (`won_reading`), verified."""
        kept = self.goal.readings.record(self.state.last.action)
        if not self.won or kept.task is not None:
            return kept
        steps = [StepRecord(t, s.action, s.observation, s.scene, s.location, s.graph) for t, s in enumerate(self.state.steps)]
        sentence = won_reading(self.goal.instruction, steps, self.settings.domain)
        if sentence is None:
            return kept
        return replace(kept, sentence=sentence, source=REWARD, confidence=1.0, fits=True,
                       why="what the winning steps made true of what the goal names")

    def finish(self) -> Trace:
        """What the store keeps of the episode beyond its steps."""
        return Trace(
            goal=self.goal.instruction,
            usage=self.llm_step.usage,
            retrieved=[e.hit.episode_id for e in self.llm_step.retrieved],
            report=AgentReport(
                thoughts=self.llm_step.thoughts,
                invalid_actions=self.llm_step.usage.invalid_actions,
                banned_actions=self.llm_step.usage.banned_actions,
                corrections=self.llm_step.shown_corrections,
                # (t, text): said after step t's observation (history index t is step t).
                utterances=list(self.state.utterances),
                decisions=[Choice(str(d.source), d.asked, d.same_plan) for d in self.state.decisions],
                effort=self.asking.effort,
                reading=self._reading(),
                subgoals=self.goal.subgoals.goals if self.goal.subgoals is not None else [],
                steps_past_llm_budget=self.llm_step.past_budget,
            ),
        )

