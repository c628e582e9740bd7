"""The P-RAG planner: a coordinator of the goal (prag.agent.goals.goal), the episode's state
(prag.agent.world.state), the plan sources, the mediator and the LLM's step (prag.agent.asking.llm_step:
retrieve, prompt, ask, check the answer, notice loops).

With a corrections source, the transcripts a person corrected that match the history's
instructions (the goal and what the person said) and the scene graph come first in the prompt.
A person may speak during the episode (`hear`): the words enter the history where they were
said, and the latest ones are repeated with every step's actions.

What the agent knows of its environment family comes from the family's `Domain`: the rules
text, which actions undo the last one (never offered), and the hints (prag.agent.asking.hints) whose
notes follow each step's actions.

Experience also acts directly (When2Ask's planner-actor-mediator): a retrieved success or a
verified correction that fits the task becomes a plan (`prag.agent.sources.past_episodes`); every
source proposes and one arbiter adopts by one table (`prag.agent.sources.arbiter`), and each step the
ask policy (`prag.agent.sources.mediator`) decides whether the plan's next step is taken without an
LLM call or the LLM is asked. With `ask = "always"` every step asks, as P-RAG plays.

The LLM may plan too (`plan_length` n > 1): it answers with the next action and up to n - 1
further actions, one per line. Constrained decoding still forces the first line to be
admissible; the further lines are its proposed plan (source `llm`, a guess), each validated when its
turn comes. The arbiter adopts it where the plan followed ran out or was an earlier answer, never over a plan
that still has steps: those are proven or searched, an LLM's guess is not.
"""
from __future__ import annotations

from dataclasses import replace

from prag.agent.asking.asking import Asking
from prag.agent.asking.llm_step import LLMStep
from prag.agent.config import AgentConfig, AgentSettings
from prag.agent.goals.fact_reader import FactsReader
from prag.agent.goals.goal import Goal
from prag.agent.goals.milestones import won_reading
from prag.agent.goals.readers import (
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
from prag.agent.options import named
from prag.agent.person import Person
from prag.agent.protocol import Decision, Trace, Usage
from prag.agent.sources.arbiter import Arbiter
from prag.agent.sources.chain import chain, source_names
from prag.agent.sources.lessons import instructions, taught
from prag.agent.sources.mediator import (
    POLICIES,
    Always,
    AskPolicy,
    HardCoded,
    MediatorState,
    RandomAsk,
)
from prag.agent.sources.plan_source import Planning
from prag.agent.world.places import Ranking, no_ranking
from prag.agent.world.state import EpisodeState
from prag.envs.base import Observation
from prag.envs.domain import Domain
from prag.envs.sam import ActionModel
from prag.errors import PragError
from prag.llm.base import LLM
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility
from prag.sources import KnowledgeSource
from prag.store.episode_extra import AgentReport, Choice, Effort, GoalReading
from prag.store.records import StepRecord


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
        later: int = 0,
    ) -> None:
        self.settings = AgentSettings(llm, experiences, corrections, visibility, config, seed, domain, person, ranking,
                                      recall, world_model, later)
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
        self.first = StepRecord.of(0, None, observation)
        planning = Planning(s, self.goal, self.state, self.llm_step, self._revise, self.first)
        # A mediator that always asks follows no plan: none is sought (nor corrections retrieved for
        # one), and nothing is learned from past episodes but the prompt's examples, as P-RAG plays.
        # Otherwise what they teach is learned before any source is consulted, whichever are.
        plans = []
        if not isinstance(self.asker, Always):
            self.state.lessons = taught(s, self.goal.sentence, self.first, observation.scene_text,
                                        instruction=self.goal.instruction)
            self.goal.follow(instructions(s, self.goal.sentence, observation.scene_text, self.state.max_steps),
                             observation)
            plans = chain(s.config.sources, planning)
        self.arbiter = Arbiter(s.domain, plans, self.asking)

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
            # What past episodes teach the new reading joins what they taught the old.
            self.state.lessons = taught(self.settings, self.goal.sentence, self.first, self.state.last.scene,
                                        self.state.lessons, self.goal.instruction)
            self.arbiter.restart()
            for source in self.arbiter.sources:
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
        self.arbiter.consult(observation)
        while not self.asker.ask(self._state(observation)):
            followed = self.arbiter.follow(observation.admissible)
            if followed is not None:
                self.state.steps_since_ask += 1
                return self.state.decided(followed)
            # The mediator keeps the plan but its step cannot be taken: passed over, not forced.
        self.state.asks += 1
        self.state.steps_since_ask = 0
        return self.state.decided(self.arbiter.ask(observation))

    def mediator_state(self, observation: Observation) -> MediatorState:
        """What the ask policy sees for this observation. Training environments read it before
        `act` (prag.run.asker), so the plans `act` would offer at this step are offered first."""
        self.arbiter.consult(observation)
        return self._state(observation)

    def _state(self, observation: Observation) -> MediatorState:
        return self.arbiter.state(
            t=self.state.t, max_steps=self.state.max_steps, admissible=observation.admissible,
            last_changed=self.state.last_changed or self.state.awaiting, steps_since_ask=self.state.steps_since_ask,
            asks=self.state.asks,
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

