"""What stored episodes of this very task offer: the plans experience proposes, ranked, and what
this task's lost episodes say (the actions that failed it outright, what an earlier round tried).

Plans come from experience, in the order of the prompt's layering: a verified correction of
this very task, then the agent's own success at this very task (same goal, same first scene
graph: the same room, so its actions replay as they were, without their detours:
`prag.agent.sources.shortcut`), then corrections and successes of other tasks of the same template,
re-bound to this one (`prag.agent.plans.adapt`). Among successes of this very task the shortest
wins. Where the family keeps scores, a lost episode's progress (its steps up to its best score)
follows: this task's own, then another variation's, re-worded to this goal. The arbiter
(`prag.agent.sources.arbiter`) adopts the best, and the mediator decides each step whether its step is taken.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prag.agent.plans import Plan, adapt, episode_rewording, reword
from prag.agent.proposal import Proposal
from prag.agent.skills.irrevocable import Irrevocable, answer_places, into
from prag.agent.sources.shortcut import shortcut
from prag.envs.base import Triple
from prag.envs.domain import Domain
from prag.retrieval.corrections import CorrectionHit
from prag.retrieval.episodes import Experience
from prag.sources import StepSource
from prag.store.corrections import Correction
from prag.store.records import EpisodeRecord, StepRecord


ELSEWHERE = 5  # the rank of another variation's progress: adopted only where its first step can be taken


@dataclass(frozen=True)
class Candidate:
    """A plan from experience and how strongly it applies (lower rank first)."""

    rank: int  # 0: verified correction of this task; 1: own success at it; 2: correction; 3: success;
    # 4: own progress at it (a lost episode's steps up to its last that raised the family's score);
    # 5: another variation's progress, re-worded (taken only where its first step can be taken now)
    length: int
    plan: Plan
    score: float = 0.0  # of progress: the score it reached (the highest first, then the shortest)


@dataclass(frozen=True)
class ThisTask:
    """The task being played, as stored episodes of it are known: the same goal, and the same
    start, the first scene graph with every thing called by its own name (`Domain.name_of`).
    ScienceWorld's actions name the same cup of blue paint "blue paint in cup" in one load of a
    variation and "paint on cup containing blue paint" in the next: the scene's text differs, the
    task does not (compared as text, mendelian-genetics' won round was not replayed, nor were
    its failed focuses ruled out)."""

    goal: str
    scene: str  # the first scene graph's text (corrections keep their scenes so)
    start: tuple[str | None, frozenset[Triple]]
    domain: Domain
    # The goal as given, where the reading differs: a won episode stores what its win showed the goal
    # meant ("seed is alive; red box is focused"), which no later reading of the words says.
    instruction: str = ""

    @classmethod
    def of(cls, goal: str, first: StepRecord, domain: Domain, instruction: str = "") -> ThisTask:
        return cls(goal, first.scene, start_of(first, domain), domain, instruction)

    def played_in(self, episode: EpisodeRecord) -> bool:
        steps = episode.steps
        same_goal = episode.read_as == self.goal or bool(self.instruction) and episode.goal == self.instruction
        return same_goal and bool(steps) and start_of(steps[0], self.domain) == self.start


def start_of(first: StepRecord, domain: Domain) -> tuple[str | None, frozenset[Triple]]:
    """Where an episode starts and what it sees there, every thing by its own name."""
    triples = first.triples
    return first.location, frozenset(
        (domain.name_of(s, triples), r, domain.name_of(o, triples)) for s, r, o in triples if r != domain.own_name)


def candidates(
    task: ThisTask, experiences: Sequence[Experience], corrections: Sequence[CorrectionHit], only_this_task: bool = False,
    progress: bool = True,
) -> list[Candidate]:
    """The plans that experience offers for this task, best first; with `only_this_task`, of
    episodes only those of this very task; without `progress`, no lost episode's progress (the
    progress source reaches its sub-goals instead, prag.agent.sources.progress_plans)."""
    goal, domain = task.goal, task.domain
    found: list[Candidate] = []
    for hit in corrections:
        correction = hit.correction
        if not correction.verified:
            continue  # its replay did not win: not a plan to follow blindly
        actions = hit.transcript.actions
        plan = adapt(actions, correction.goal, goal, domain, StepSource.CORRECTION, correction.id)
        if plan is not None and actions:
            same = correction.goal == goal and correction.scenes[:1] == [task.scene]
            found.append(Candidate(0 if same else 2, len(actions), plan))
    for experience in experiences:
        episode = experience.episode
        same = task.played_in(episode)
        if same and not episode.won:
            reached, made = progress_made(episode) if progress else (0.0, [])
            if made:
                found.append(Candidate(4, len(made), Plan(tuple(made), StepSource.EPISODE, episode.id, goal=goal), reached))
            continue
        if episode.won and (same or not only_this_task):
            actions = (
                list(shortcut(episode, domain)) if same else [step.action for step in episode.steps if step.action is not None]
            )
            # This very task's actions need no re-wording, whatever its win showed the goal meant.
            plan = adapt(actions, goal if same else episode.read_as, goal, domain, StepSource.EPISODE, episode.id)
            if plan is not None and actions:
                found.append(Candidate(1 if same else 3, len(actions), plan))
                continue
        if not same and progress:
            found += progress_elsewhere(episode, goal, domain)
    return sorted(found, key=lambda c: (c.rank, -c.score, c.length))


def proposed(found: Sequence[Candidate]) -> Proposal:
    """Candidates as experience proposes them: another variation's progress last, adopted only
    where its first step can be taken now."""
    return Proposal(tuple(c.plan for c in found if c.rank < ELSEWHERE), tuple(c.plan for c in found if c.rank >= ELSEWHERE))


def progress_elsewhere(episode: EpisodeRecord, goal: str, domain: Domain) -> list[Candidate]:
    """Another variation's progress (where the family keeps scores), re-worded to this goal's
    things and places (`prag.agent.plans.reworded`: "boil water" serves "boil lead"), up to its
    first irrevocable step on a thing this goal does not name: in another variation the thing
    to focus on may be another. Rank 5, taken only where its first step can be taken now (it
    started where this episode starts)."""
    reached, progress = progress_made(episode)
    if not progress:
        return []
    binding = episode_rewording(episode, goal)
    if binding is None:
        return []
    irrevocable = Irrevocable(domain)
    steps: list[str] = []
    for action in (reword(action, binding) for action in progress):
        if irrevocable.doubtful(action, goal, ()):
            break
        steps.append(action)
    plan = Plan(tuple(steps), StepSource.EPISODE, episode.id, goal=goal)
    return [Candidate(ELSEWHERE, len(steps), plan, reached)] if steps else []


def progress_made(episode: EpisodeRecord) -> tuple[float, list[str]]:
    """The best score a lost episode reached and its actions up to the step that reached it,
    where the family keeps scores (ScienceWorld's partial credit): what to do again before trying
    on. Steps that changed nothing the agent could see (the same scene graph, place and score as
    before: a refused or idle action) are left out. (0, []) when no step raised the score."""
    best, upto, last = 0.0, 0, 0.0
    for index, step in enumerate(episode.steps):
        if step.score is None:
            return 0.0, []
        if step.score > last and step.score > best:
            best, upto = step.score, index
        last = step.score
    steps = episode.steps[: upto + 1]
    return best, [after.action for before, after in zip(steps, steps[1:])
                  if after.action is not None and _changed(before, after)]


def _changed(before: StepRecord, after: StepRecord) -> bool:
    return (before.triples, before.location, before.score) != (after.triples, after.location, after.score)


def fatal_actions(task: ThisTask, experiences: Sequence[Experience]) -> set[str]:
    """The actions that failed this very task outright in an episode of it: the last action of
    an episode whose score fell below 0 (ScienceWorld's wrong `focus on`), never to be offered again."""
    return {str(step.action) for step in _fatal_steps(task, experiences)}


def fatal_things(task: ThisTask, experiences: Sequence[Experience]) -> set[str]:
    """The things an irrevocable step failed this very task on (`fatal_actions`), by the name the
    action gave and by their own names then (ScienceWorld's "juvenile juvenile wolf" is a "wolf",
    called "baby baby wolf" earlier in an episode): not the thing a choice between things meant;
    and the place a conditional branch carries to that a step failing it carried into (the
    green box was the wrong answer)."""
    failed = set()
    for step in _fatal_steps(task, experiences):
        failed |= {place for place in answer_places(task.goal) if into(str(step.action), place)}
        thing = task.domain.aimed_at(str(step.action))
        if thing is not None:
            failed |= {thing, task.domain.name_of(thing, step.triples)}
    return failed


def won_things(task: ThisTask, experiences: Sequence[Experience]) -> set[str]:
    """What the last step of a won episode of this very task answered a conditional branch with:
    the place it carried into, or the thing it took the irrevocable step on (the yellow box was
    the right one). A replay of the win may not reach that step (its detours cut, other sources
    take over), and a round with none to come after it draws no branch."""
    won = set()
    for experience in experiences:
        steps = experience.episode.steps
        if experience.episode.won and task.played_in(experience.episode) and len(steps) > 1 and steps[-1].action:
            action = str(steps[-1].action)
            won |= {place for place in answer_places(task.goal) if into(action, place)}
            thing = task.domain.aimed_at(action)
            if thing is not None:
                won.add(thing)
    return won


def _fatal_steps(task: ThisTask, experiences: Sequence[Experience]) -> list[StepRecord]:
    fatal = []
    for experience in experiences:
        steps = experience.episode.steps
        if task.played_in(experience.episode) and len(steps) > 1 and steps[-1].score is not None \
                and steps[-1].score < 0 and steps[-1].action:
            fatal.append(steps[-1])
    return fatal


def rewarded_actions(task: ThisTask, experiences: Sequence[Experience]) -> set[str]:
    """The actions after which the score rose in the stored episodes of this very task, won or
    lost: what the world's reward said was progress here (exploration tries their verbs first)."""
    return {str(after.action) for experience in experiences if task.played_in(experience.episode)
            for before, after in zip(experience.episode.steps, experience.episode.steps[1:])
            if after.action and before.score is not None and after.score is not None and after.score > before.score}


def tried_before(task: ThisTask, experiences: Sequence[Experience]) -> Counter[tuple[str, str, str]]:
    """The (observation, scene graph, action) triples of this very task's lost episodes: what an
    earlier round did from a point this episode may come back to (a replay of its progress ends
    exactly there). Counted with the episode's own tries, so that a round goes on otherwise."""
    tried: Counter[tuple[str, str, str]] = Counter()
    for experience in experiences:
        episode = experience.episode
        if episode.won or not task.played_in(episode):
            continue
        steps = episode.steps
        tried.update((before.observation, before.scene, after.action)
                     for before, after in zip(steps, steps[1:]) if after.action is not None)
    return tried


def verified_replays(hits: Iterable[CorrectionHit]) -> list[EpisodeRecord]:
    """The verified corrections among `hits` that hold steps, as episodes of their tasks."""
    return [_as_episode(hit.correction) for hit in hits if hit.correction.verified and hit.correction.steps]


def _as_episode(correction: Correction) -> EpisodeRecord:
    """A verified correction's replay as an episode of its task (its id negated: apart from the agent's)."""
    return EpisodeRecord("correction", 0, correction.task_id, correction.task_type, correction.goal, correction.verified,
                         list(correction.steps), id=-(correction.id or 0), source=StepSource.CORRECTION)
