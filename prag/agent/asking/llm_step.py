"""P-RAG's step, where the LLM chooses: retrieve, prompt, ask, check the answer.

Each step the top-K past episodes for (goal, scene graph) are retrieved and, with the corrections
a person made that match the instructions, put in the prompt; the LLM is asked (optionally a
one-sentence thought first, ReAct-style) and its answer checked against the admissible actions. A
backend that can constrain decoding is given the admissible set as choices, so its answer is valid
by construction; otherwise an invalid answer is sent back with the error (bounded re-asks) and never
mapped to a different action. An action already taken `loop_limit` times from the same observation
and scene graph, one undoing the last, or one that failed this task outright before is not offered.
An irrevocable action on a thing the goal does not name waits for the last tenth of the step budget
(prag.agent.skills.irrevocable). Past the LLM budget, an admissible action is drawn at random instead: not
one that failed or waits, nor one taken from the same observation and scene graph in this episode or
in a lost episode of this very task before it, while any other is left. The budget is a number
of calls a game, or the seconds its calls may take (`llm_seconds` a step of the step cap), so that
a model that answers fast chooses every step.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from prag.agent.asking.hints import Situation, hints_for
from prag.agent.asking.novelty import Explorer, uniform
from prag.agent.asking.prompt import THINK, RoomCards, act_instruction, messages, with_instruction
from prag.agent.config import AgentConfig
from prag.agent.goals.goal import Goal
from prag.agent.protocol import Decision, Usage
from prag.agent.skills.irrevocable import Irrevocable
from prag.agent.world.state import EpisodeState
from prag.envs.base import Observation, canonical
from prag.envs.domain import Domain
from prag.llm.base import LLM, Message
from prag.retrieval.corrections import EVERY, CorrectionHit, CorrectionSource, asked_alike
from prag.retrieval.episodes import Experience, ExperienceSource
from prag.retrieval.index import Visibility
from prag.sources import StepSource

T = TypeVar("T")


def normalise(answer: str) -> str:
    """The answer's first line without decoration the model likes to add."""
    line = answer.strip().splitlines()[0] if answer.strip() else ""
    for prefix in ("Action:", "action:", ">"):
        if line.startswith(prefix):
            line = line[len(prefix) :]
    # The prompt lists actions sharing a verb folded ("go to: a, b"); models answer in that form.
    line = re.sub(r"^\s*(\w+(?: to)?):\s+", r"\1 ", line)
    return " ".join(line.strip().strip("`\"'").rstrip(".").split()).lower()


def plan_lines(answer: str) -> list[str]:
    """A plan answer's lines without the list markers models put before them ("1.", "-")."""
    return [re.sub(r"^\s*(?:\d+[.)]|[-*\u2022])\s+", "", line) for line in answer.strip().splitlines()]


class LLMStep:
    """The LLM's step in one episode, and what it showed and cost: the episodes retrieved, the
    corrections shown, the room cards, the thoughts, the usage."""

    def __init__(
        self, llm: LLM, experiences: ExperienceSource | None, corrections: CorrectionSource | None,
        visibility: Visibility, config: AgentConfig, seed: int, goal: Goal, state: EpisodeState, usage: Usage,
    ) -> None:
        self.llm = llm
        self.experiences = experiences
        self.corrections = corrections
        self.visibility = visibility
        self.config = config
        self.seed = seed
        self.domain = state.observed.domain
        self.goal = goal
        self.state = state
        self.usage = usage
        self.hints = hints_for(self.domain)
        self.retrieved: list[Experience] = []
        self._retrieved_at: tuple[object, ...] | None = None  # what the examples were last retrieved at
        self.corrected: list[CorrectionHit] = []  # shown in the prompt
        self.correction_pool: list[CorrectionHit] = []  # searched for a plan: more than the prompt shows
        self._corrections_for = 0  # how many instructions the shown corrections were retrieved for
        self.shown_corrections: list[int] = []  # every correction that was in a prompt, in order
        self.cards = RoomCards()
        # The hints' notes said so far, each at the history index after which it was first said: a
        # note said again stands there, not at the end. Repeated at the end, the loop warnings of
        # a model trying one thing after another grew to 400 tokens read again every call.
        self.said: dict[str, int] = {}
        self.thoughts: list[str] = []
        self.irrevocable = Irrevocable(self.domain)
        self.past_budget = 0  # steps drawn at random once the LLM budget was spent
        self.explorer = Explorer(self.domain, seed)

    def choose_step(self, observation: Observation, rejected: frozenset[str] = frozenset()) -> tuple[Decision, list[str]]:
        """The step: retrieve, prompt, ask, check the answer. Also the actions the answer
        plans after this one (none unless `plan_length` > 1). Actions the person `rejected` at
        this step are not offered. Past the LLM budget, an admissible action drawn at random."""
        if self.past_llm_budget:
            self.past_budget += 1
            held_back = rejected | self.state.lessons.fatal | self.state.avoided | self._deferred(observation, observation.admissible)
            choices = [a for a in observation.admissible if a not in held_back] or list(observation.admissible)
            # Not what an earlier round drew from here: a round past its replayed progress goes on
            # otherwise than the last one did. The LLM is not held to it: a step that earned no
            # score (a door on the way) may still be the one to take.
            here = (observation.text, observation.scene_text)
            tried = {a: self.state.tried[(*here, a)] + self.state.lessons.tried_before[(*here, a)] for a in choices}
            choices = [a for a in choices if tried[a] < self.config.loop_limit] or _least_tried(tried)
            salt = f"{observation.text}:{self.state.t}"
            if self.config.explore == "uniform":
                return Decision(uniform(choices, self.seed, salt), source=StepSource.RANDOM), []
            # the next sub-goal's things are the task's too
            about = f"{self.goal.sentence} {self.state.subgoal or ''} {self._written() or ''}"
            rewarded = {*self.state.lessons.rewarded, *self.state.rewarded}
            drawn = self.explorer.draw(choices, about, observation.scene_triples, self._tried(),
                                       observation.location, salt, rewarded)
            return Decision(drawn, source=StepSource.RANDOM), []
        self._retrieve(observation)
        self.retrieve_corrections(observation.scene_text)
        choices = list(observation.admissible)
        tried = {action: self.state.tried[(observation.text, observation.scene_text, action)] for action in choices}
        banned = {action for action, count in tried.items() if count >= self.config.loop_limit} | self._undoing(observation)
        banned |= self.state.lessons.fatal | self.state.avoided | self._deferred(observation, choices)
        choices = [a for a in choices if a not in rejected] or choices
        allowed = [a for a in choices if a not in banned] or _least_tried({a: tried[a] for a in choices})
        self.usage.banned_actions += len(choices) - len(allowed)
        now = Situation(
            goal=self.goal.sentence, history=self.state.history, locations=self.state.locations, graphs=self.state.graphs,
            outcomes=self.state.outcomes, allowed=allowed, held=self.domain.held(observation.scene_triples),
            retrieved=self.retrieved, utterances=self.state.utterances, seen=self.state.observed.seen,
            subgoal=self.state.subgoal, written=self._written(),
        )
        self.cards.see(self.state.t - 1, observation.location, canonical(observation.scene_triples), allowed, self.domain)
        step, current = self.state.t - 1, [note for hint in self.hints for note in hint.notes(now)]
        # Asked again at this step (a person rejected the answer), what is no longer so is unsaid.
        self.said = {note: at for note, at in self.said.items() if at < step or note in current}
        said = sorted((at, note) for note, at in self.said.items())
        notes = [note for note in current if note not in self.said]
        self.said |= dict.fromkeys(notes, step)
        prompt = messages(
            self.domain, self.retrieved, self.goal.shown, self.state.history, observation.scene_text, allowed,
            notes, self.config.limits, corrections=self.corrected, utterances=self.state.utterances, cards=self.cards,
            said=said,
        )
        thought = ""
        numbered = self.numbered
        act = act_instruction(self.config.plan_length, numbered)
        if self.config.think:
            thought = self._ask(with_instruction(prompt, THINK), self.config.thought_tokens).strip()
            thought = thought.splitlines()[0] if thought else ""
            self.thoughts.append(thought)
            prompt = with_instruction(prompt, THINK) + [
                {"role": "assistant", "content": thought},
                {"role": "user", "content": act},
            ]
        else:
            prompt = with_instruction(prompt, act, self.cards)
        return self._choose(prompt, allowed, thought)

    def _written(self) -> str | None:
        """The line of a text read that the goal follows next, where it follows written lines."""
        current = self.goal.subgoals.current if self.goal.written and self.goal.subgoals is not None else None
        return current.command if current is not None else None

    def _tried(self) -> set[str]:
        """The actions this task took: in this episode, and in its lost episodes before."""
        actions = {step.action for step in self.state.steps if step.action is not None}
        return actions | {action for _, _, action in self.state.lessons.tried_before}

    @property
    def past_llm_budget(self) -> bool:
        """Whether the game's LLM calls are spent (`llm_budget`) or have taken their time (`llm_seconds`)."""
        calls, seconds = self.config.llm_budget, self.config.llm_seconds
        return ((calls is not None and self.usage.cost.calls >= calls)
                or (seconds is not None and self.usage.cost.seconds >= seconds * self.state.max_steps))

    @property
    def numbered(self) -> bool:
        """Whether this step's actions are listed by number and answered by one (`limits.numbered`)."""
        return self.config.limits.numbered and self.config.plan_length == 1 and not self.cards.active

    def _deferred(self, observation: Observation, actions: list[str]) -> set[str]:
        return self.irrevocable.deferred(actions, self.goal.sentence, observation, self.state.t, self.state.max_steps,
                                         self.config.gamble_window)

    def _retrieve(self, observation: Observation) -> None:
        """The examples, retrieved for the goal and this step's scene graph when `limits.retrieve`
        says: at the episode's first call and when the goal is read anew (`episode`), also when
        the score changed or a sub-goal was met since (`progress`), or at every call (`step`, as
        P-RAG plays). Each time the block changes, the prompt after it is read again: retrieved
        every step, round 1 of ScienceWorld cost 2.5 times round 0 a call."""
        if self.experiences is None:
            return
        when = self.config.limits.retrieve
        subgoals = self.goal.subgoals.goals if self.goal.subgoals is not None else []
        progress = (observation.score, sum(goal.met_at is not None for goal in subgoals))
        moment = (self.goal.sentence, *(progress if when == "progress" else ()))
        if when != "step" and moment == self._retrieved_at:
            return
        self._retrieved_at = moment
        k = self.experiences.k
        ranked = self.experiences.retrieve(self.goal.sentence, observation.scene_text, self.visibility, k=2 * k)
        self.retrieved = stable_top(
            self.retrieved, ranked, k, lambda e: e.hit.episode_id, lambda e: e.hit.score, self.config.keep_margin
        )

    def retrieve_corrections(self, scene: str) -> None:
        """Corrections match what the person asked: they are retrieved again when the
        instructions change (the goal, then each utterance), with the scene graph of that moment.
        Re-ranking them by every step's scene graph swapped near-equal transcripts back and
        forth, and each swap re-costs the whole prompt after the block."""
        instructions = [self.goal.instruction] + [text for _, text in self.state.utterances]
        if self.corrections is None or self._corrections_for == len(instructions):
            return
        self._corrections_for = len(instructions)
        k = self.corrections.k
        ranked = self.corrections.retrieve(instructions, scene, k=EVERY)
        self.correction_pool = asked_alike(ranked, self.config.plan_pool)
        self.corrected = stable_top(
            self.corrected, ranked[: 2 * k], k, lambda h: h.correction.id, lambda h: h.score, self.config.keep_margin
        )
        self.shown_corrections += [
            i for i in (h.correction.id for h in self.corrected) if i is not None and i not in self.shown_corrections
        ]

    def _undoing(self, observation: Observation) -> set[str]:
        """The actions that would undo the last one (the domain's `inverse`): putting back what
        was just taken, closing what was just opened. Never progress, and small models took them
        again and again."""
        last = self.state.last.action
        return set() if last is None else self.domain.inverse(last, observation.location)

    def _choose(self, prompt: list[Message], allowed: list[str], thought: str) -> tuple[Decision, list[str]]:
        by_form = {normalise(a): a for a in allowed}
        numbers = [str(number) for number in range(1, len(allowed) + 1)] if self.numbered else []
        by_form |= dict(zip(numbers, allowed))
        constrain = self.config.constrained and self.llm.supports_choices
        more = self.config.plan_length - 1
        for attempt in range(self.config.max_reasks + 1):
            answer = self._ask(
                prompt, self.config.action_tokens * (more + 1), (numbers or allowed) if constrain else None, more_lines=more
            )
            lines = plan_lines(answer) if more else [answer]
            action = by_form.get(normalise(lines[0] if lines else ""))
            if action is not None:
                planned = [step for step in map(normalise, lines[1 : more + 1]) if step]
                return Decision(action, thought, valid=True), planned
            if attempt < self.config.max_reasks:
                self.usage.reasks += 1
                prompt = prompt + [
                    {"role": "assistant", "content": answer},
                    {"role": "user", "content": self._reask(answer)},
                ]
        self.usage.invalid_actions += 1
        # Sent as it is: the environment says it does nothing, which the model then sees.
        return Decision(answer.strip().splitlines()[0] if answer.strip() else "look", thought, valid=False), []

    def _reask(self, answer: str) -> str:
        """What the model is told when its answer (its first line, for a plan) is not admissible."""
        if self.numbered:
            return f"'{answer.strip()}' is not the number of an admissible action. Reply with one of their numbers."
        if self.config.plan_length == 1:
            return f"'{answer.strip()}' is not an admissible action. Reply with one admissible action, copied exactly."
        first = answer.strip().splitlines()[0] if answer.strip() else ""
        return (
            f"'{first}' is not an admissible action. Reply with an admissible action, copied exactly, on the "
            f"first line, then up to {self.config.plan_length - 1} further actions, one per line."
        )

    def _ask(self, prompt: list[Message], max_tokens: int, choices: list[str] | None = None, more_lines: int = 0) -> str:
        # Free text ends at the line's end; a plan's lines end at a blank line (or the token budget).
        stop = None if choices is not None else ["\n\n"] if more_lines else ["\n"]
        completion = self.llm.complete(
            prompt, max_tokens=max_tokens, choices=choices, more_lines=more_lines, stop=stop, seed=self.seed
        )
        self.usage.add(completion)
        return completion.text


def stable_top(
    shown: list[T], ranked: list[T], k: int, key: Callable[[T], object], score: Callable[[T], float], margin: float
) -> list[T]:
    """The top-k of `ranked` (best first, with their scores for the current query), laid out to
    change the prompt, and the backend's cached prefix, as little as possible.

    A shown item stays, in its place and with its text, while it scores within `margin` of the
    k-th best; only items that beat it by more take the freed places, in rank order after the
    kept ones. Without this the block flipped between near-equal items as the scene changed,
    and every flip re-costs the whole prompt after it.
    """
    top = ranked[:k]
    if not top:
        return []
    now = {key(item): score(item) for item in ranked}
    floor = score(top[-1]) - margin
    kept = [item for item in shown if now.get(key(item), float("-inf")) >= floor][:k]
    kept_keys = {key(item) for item in kept}
    return kept + [item for item in top if key(item) not in kept_keys][: k - len(kept)]


def _least_tried(tried: dict[str, int]) -> list[str]:
    """When every choice is banned: the ones tried least from here, so that the ban still steers."""
    fewest = min(tried.values())
    return [action for action, count in tried.items() if count == fewest]


