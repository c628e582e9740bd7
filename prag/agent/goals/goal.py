"""The episode's goal: the instruction as given, its reading (prag.agent.goals.readers), and the
reading's revisions when play shows it wrong.

The instruction is kept as given (it is what the store keeps and corrections match); the agent
plans for the sentence it was read as, and for the route of sub-goals the reading spells, if any.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

from prag.agent.goals.readers import Context, GoalReader, Reading, Readings
from prag.agent.goals.subgoals import SubGoals
from prag.agent.goals.written import Written
from prag.agent.world.observed import Observed
from prag.envs.base import Observation
from prag.envs.domain import Domain
from prag.envs.facts import GoalFacts, read_facts

# Readings dropped per episode before the agent plays on with the last one: enough to walk the
# places a "put the mug away" leaves open (a living room has eight), each tried in a few steps.
MAX_REVISIONS = 8
# The steps a learned instruction's turn lasts before it is given up: it may name no thing of this game.
PATIENCE = 15


class Goal:
    """The instruction, the sentence it is read as now, and the route that reading spells."""

    def __init__(self, readers: list[GoalReader], observation: Observation, domain: Domain) -> None:
        self.instruction = observation.goal  # as given; `sentence` is as read
        self.domain = domain
        room = [domain.kind(e) for e in domain.entities(observation.text)]
        self.readings = Readings(readers, Context(observation.goal, domain, room))
        reading = self.readings.start()
        self.sentence = reading.sentence if reading is not None else observation.goal
        self.revisions = 0
        self.subgoals = self._subgoals(reading, observation)
        self.written = False  # the sub-goals are instructions learned from reward (`follow`)

    def _subgoals(self, reading: Reading | None, observation: Observation) -> SubGoals | None:
        """The reading's ordered sub-goals to follow (a route the goal spells), None when it has none."""
        commands = reading.goal.subgoals if reading is not None and reading.goal is not None else []
        schema = self.domain.schema()
        revealed = schema.revealed if schema is not None else None
        return SubGoals.start(commands, self.domain, observation, revealed) if commands else None

    def follow(self, written: Written, observation: Observation) -> None:
        """Where the reading spells no route: the readings reward showed to be worth taking, what the
        goal's sentences say as learned, and what each reading's text says once read
        (prag.agent.goals.written), each given up when not met in PATIENCE steps."""
        readings = written.readings()
        if self.subgoals is not None or not readings:
            return
        commands = [*readings, *written.commands(observation.goal, listed=False)]

        def trial(line: str, admissible: Sequence[str], tried: Collection[str]) -> tuple[str, bool] | None:
            return written.trial(line, admissible, tried, observation.goal)

        self.subgoals = SubGoals.start(list(dict.fromkeys(commands)), self.domain, observation, written.commands,
                                       frozenset(readings), PATIENCE, trial)
        self.written = True

    @property
    def facts(self) -> GoalFacts | None:
        """What the goal means as facts: the family's schema says so for its own sentences
        (`Domain.facts_of_goal`); a reading in open vocabulary is facts itself (prag.agent.goals.fact_reader)."""
        current = self.readings.current
        if current is not None and current.goal is None:
            read = read_facts(current.sentence)
            if read is not None:
                return read
        return self.domain.facts_of_goal(self.sentence)

    @property
    def shown(self) -> str:
        """The goal as the prompt gives it: the instruction, and what it was read as if not itself."""
        return self.sentence if self.sentence == self.instruction else f"{self.instruction} (read as: {self.sentence})"

    def revise(self, why: str, wrong: dict[str, str], observed: Observed) -> bool:
        """The reading acted on cannot be right: take the next hypothesis (prag.agent.goals.readers).
        True when the goal read changed, and the agent must plan for it afresh."""
        current = self.readings.current
        if self.revisions >= MAX_REVISIONS or current is None or current.source == "template":
            return False  # the family's own sentence is no guess: a lost game there is not its reading's fault
        self.revisions += 1
        reading = self.readings.revise(why, wrong, seen_kinds(observed, self.domain))
        if reading is None or reading.sentence == self.sentence:
            return False
        self.sentence = reading.sentence
        observed.goal = reading.sentence
        # A route is followed from where the episode began (its first move is from there): not from
        # mid-way. Learned instructions are the world's words, not the reading's.
        if not self.written:
            self.subgoals = None
        return True

    def unsaid(self, observed: Observed) -> dict[str, str]:
        """What the reading names that the room shows only another of its kind of (`Readings.unsaid`)."""
        return self.readings.unsaid(seen_kinds(observed, self.domain))


def seen_kinds(observed: Observed, domain: Domain) -> list[str]:
    """The kinds of thing seen so far in this episode, held ones included."""
    return list(dict.fromkeys(domain.kind(thing) for thing in [*observed.seen, *observed.held]))
