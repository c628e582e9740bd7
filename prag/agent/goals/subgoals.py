"""Ordered sub-goals followed step by step: a route the goal spells out, taken as the game admits it.

A goal read as ordered sub-goals (`prag.envs.goals.SUBGOALS`: TextWorld's "head south, then east,
then pick up the teaspoon") names one command per sub-goal. Each step the current sub-goal's
command is taken when it is admissible; when it is not, an admissible action that plainly readies
it is taken first: one of the family's readying verbs (`Domain.readies`: unlock, open, take) on a
thing the command names ("open chest" before "take key from chest"), or, for a move, on a thing
the room's text names with the move's direction ("There is a closed gate leading south." before
"go south"). Otherwise nothing is offered and the next source (the LLM) chooses the step.

A sub-goal is met when its command was taken (by any source), or when its effect shows in the
admissible actions: what would undo it is admissible and it is not ("close gate" but no "open
gate": the gate is open). A move's turn comes where the sub-goal before was met: away from there
(another source moved on) no move is offered until the agent is back. What an observation spells
out (`GoalSchema.revealed`: tw-cooking's recipe, once the cookbook is read; or instructions
learned from reward, prag.agent.goals.written, after the actions that read them) joins the
sub-goals before the current one. Sub-goals that are guesses may be given `patience`: one not met
within that many steps of its turn is given up. Only the observation's text, its
admissible actions and where it says the agent is are read, never the game's hidden state.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from prag.agent.goals.written import named_things
from prag.envs.base import Observation
from prag.envs.domain import Domain
from prag.store.episode_extra import SubGoal

# The steps in a row a sub-goal with guesses (`trial`) that is a sentence, not a command the game
# admits, may offer no step before it is given up: it may name nothing to act on ("you are hungry").
IDLE = 3


def meets(command: str, action: str) -> bool:
    """Whether taking `action` performs `command`: the same, or one naming more of where the thing
    is than the other ("take coin" and "take coin from floor": the objective and the game may each
    leave the place unsaid)."""
    return action == command or action.startswith(command + " ") or command.startswith(action + " ")


def object_of(action: str, verb: str) -> str | None:
    """The thing an action of `verb` acts on ("unlock gate with key" -> "gate"), None for another verb."""
    match = re.fullmatch(rf"{re.escape(verb)} (.+?)(?: (?:with|from|into|on|in) .+)?", action)
    return match[1] if match else None


def things(command: str) -> list[str]:
    """The things a command names ("cook red potato with stove" -> red potato, stove)."""
    match = re.fullmatch(r"\S+ (.+?)(?: (?:with|from|into|on|in) (.+))?", command)
    return [name for name in match.groups() if name] if match else []


def mentions(text: str, name: str) -> bool:
    """Whether `text` says `name` as whole words."""
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


@dataclass
class SubGoals:
    """The episode's ordered sub-goals and which are met; `step` is the source's offer now."""

    goals: list[SubGoal]
    domain: Domain
    at: str | None  # where the current sub-goal's turn came
    room_text: str  # the text shown on arriving where the agent is: it says which way each door leads
    here: str | None = None  # where the agent is
    revealed: Callable[[str], Sequence[str]] | None = None  # text -> the sub-goals it spells out
    taken: list[str] = field(default_factory=list)  # the readying actions taken for the current sub-goal
    reveal_after: frozenset[str] = frozenset()  # only these actions' texts reveal sub-goals (none: any's)
    patience: int | None = None  # the steps a sub-goal's turn lasts before it is given up (None: no end)
    # A guess at the action a sub-goal that is no command means (a line no reward explained yet,
    # prag.agent.goals.written.Written.trial), and whether it is the try: taking that meets the
    # sub-goal, as "tried" (else it readies one).
    trial: Callable[[str, Sequence[str], Collection[str]], tuple[str, bool] | None] | None = None
    guess: str | None = None
    guessed: set[str] = field(default_factory=set)  # the guesses taken: one is not a guess for two sub-goals
    idle: int = 0  # the steps in a row the current sub-goal, a sentence, had no step to offer
    verbs: set[str] = field(default_factory=set)  # the first words of the actions admitted so far
    score: float = 0.0  # the score before the last step
    turn: int = 0  # the step the current sub-goal's turn came

    @classmethod
    def start(
        cls, commands: Sequence[str], domain: Domain, observation: Observation,
        revealed: Callable[[str], Sequence[str]] | None = None, reveal_after: frozenset[str] = frozenset(),
        patience: int | None = None,
        trial: Callable[[str, Sequence[str], Collection[str]], tuple[str, bool] | None] | None = None,
    ) -> SubGoals:
        goals = cls([SubGoal(c) for c in commands], domain, observation.location, observation.text.lower(),
                    observation.location, revealed, reveal_after=reveal_after, patience=patience, trial=trial)
        goals.score = observation.score or 0.0
        goals._mark_seen(0, observation)
        return goals

    @property
    def current(self) -> SubGoal | None:
        return next((goal for goal in self.goals if goal.met_at is None), None)

    def step(self, observation: Observation) -> str | None:
        """The admissible action the current sub-goal calls for now, None when it is not plain."""
        goal = self.current
        if goal is None or (self.domain.movement(goal.command) is not None and observation.location != self.at):
            return None
        admissible = observation.admissible
        action = next((a for a in admissible if meets(goal.command, a)), None)
        guess = self.trial(goal.command, admissible, self.guessed) if action is None and self.trial else None
        if guess is not None:
            action, tries = guess
            self.guess = action if tries else None
        action = action if action is not None else self._readying(goal.command, admissible)
        if self.trial is not None:  # only guessed sub-goals are given up when idle
            self.verbs |= {a.split()[0] for a in admissible if a}
            # A sentence, not a command the game takes, that names nothing offered here ("you are
            # hungry"); one whose thing is at hand waits, while search seeks where it can be acted on.
            said = goal.command.split()[0] not in self.verbs and not any(
                mentions(a, thing) for thing in named_things(goal.command) for a in admissible)
            self.idle = self.idle + 1 if action is None and said else 0
        return action

    def _readying(self, command: str, admissible: Sequence[str]) -> str | None:
        """An admissible action that plainly makes `command` possible, None when none does. One
        already taken for this sub-goal is not taken again: it did not make the command possible."""
        direction = self.domain.movement(command)
        sentences = re.split(r"(?<=[.!?])\s+", self.room_text)
        for verb in self.domain.readies:
            for action in admissible:
                thing = object_of(action, verb)
                if thing is None or action in self.taken or verb == command.split(" ", 1)[0]:
                    continue
                named = mentions(command, thing) if direction is None else any(
                    mentions(s, thing) and mentions(s, direction) for s in sentences)
                if named:
                    return action
        return None

    def observe(self, t: int, action: str, observation: Observation) -> None:
        """Step `t` took `action` and the game answered `observation`: mark what it met."""
        if self.domain.movement(action) is not None:
            self.room_text = observation.text.lower()
        goal, was = self.current, self.here
        self.here = observation.location
        # A move meets a move of the route only from where the route is: elsewhere it leads elsewhere.
        on_route = was == self.at or self.domain.movement(action) is None
        if goal is not None and on_route and meets(goal.command, action):
            self._met(goal, t, "taken", observation)
        elif goal is not None and action == self.guess:
            # A guess is met when the score rose; else another is tried (one is not tried twice).
            self.guessed.add(action)
            if observation.score is not None and observation.score > self.score:
                self._met(goal, t, "tried", observation)
        elif goal is not None and was == self.at:
            self.taken.append(action)
        if not self.reveal_after or action in self.reveal_after:
            self._reveal(observation.text)
        self._mark_seen(t, observation)
        self.score = observation.score if observation.score is not None else self.score
        if (goal := self.current) is not None and self.patience is not None and (
                t + 1 - self.turn >= self.patience or self.idle >= IDLE):
            self._met(goal, t, "given up", observation)

    def _reveal(self, text: str) -> None:
        """The sub-goals the text spells out that are not among the sub-goals yet, before the current one."""
        known = {goal.command for goal in self.goals}
        new = [SubGoal(c) for c in dict.fromkeys(self.revealed(text) if self.revealed else ()) if c not in known]
        goal = self.current
        at = self.goals.index(goal) if goal is not None else len(self.goals)
        self.goals[at:at] = new

    def _mark_seen(self, t: int, observation: Observation) -> None:
        while (goal := self.current) is not None and self._shows(goal.command, observation.admissible):
            self._met(goal, t, "seen", observation)

    def _met(self, goal: SubGoal, t: int, how: str, observation: Observation) -> None:
        goal.met_at, goal.how = t, how
        self.at = observation.location
        self.taken = []
        self.turn = t + 1
        self.guess = None
        self.idle = 0

    def _shows(self, command: str, admissible: Sequence[str]) -> bool:
        """Whether the command's effect shows: an action undoing it is admissible and it is not."""
        undoing = self.domain.inverse(command)
        return bool(undoing & set(admissible)) and not any(meets(command, a) for a in admissible)
