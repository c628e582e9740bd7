"""What past episodes teach this episode (`prag.agent.world.state.Lessons`), learned in one place:
from the same retrieval the experience source plans from (the goal and the scene, `plan_pool`
episodes) and this task as stored episodes know it (`ThisTask`); what failed this very task, from
every visible episode of it. The coordinator (prag.agent.agent)
learns them when the episode starts and again when its goal is revised, whatever the sources;
the sources and the LLM's step read them from the episode's state, none writes them.

- the actions that failed this very task outright (`fatal_actions`) and what they were aimed at
  (`fatal_things`): never offered again, and the branches of a choice they rule out;
- what this task's lost episodes did from where (`tried_before`): a step drawn past the LLM
  budget goes on otherwise; and the actions its score rose after (`rewarded`): such a step tries
  their verbs on their things first;
- what the goal's instructions name, as an episode of its template that raised its score read it
  (`verified_focuses`);
- how stored episodes answered described things (`answers`) and what the right answers were
  like (`likeness`), which way comparative descriptions
  read (`orientations`), and the combinations they made (`recipes`);
- what written lines mean, as every visible episode's rewards showed (`instructions`,
  prag.agent.goals.written): the goal follows them where its reading spells no route.

After a revision the new reading's lessons join the old: an action that failed this task failed
it whatever the reading, and an episode already read is not counted twice.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from prag.agent.config import AgentSettings
from prag.agent.goals.written import Written, learn
from prag.agent.skills.answered import answers, likeness, merge
from prag.agent.skills.compared import orientations
from prag.agent.skills.instructed import verified_focuses
from prag.agent.skills.making import recipes
from prag.agent.sources.past_episodes import (
    ThisTask, fatal_actions, fatal_things, rewarded_actions, tried_before, verified_replays, won_things,
)
from prag.agent.world.state import Lessons
from prag.retrieval.episodes import Experience
from prag.store.records import EpisodeRecord, StepRecord


def taught(settings: AgentSettings, goal: str, first: StepRecord, scene: str, before: Lessons = Lessons(),
           instruction: str = "") -> Lessons:
    """What the episodes retrieved for `goal` and `scene` teach the task that started at `first`,
    joined to what was learned `before` (for an earlier reading of the goal). What failed this very
    task is learned from every visible episode of it, not only from those retrieved. The verified
    corrections retrieved for the `instruction` teach what episodes do of how things read: a
    person's (or a reference path's) measurement of two inclined planes, then its focus, says
    which way "the shallowest angle" reads in every variation of the task."""
    s = settings
    task = ThisTask.of(goal, first, s.domain, instruction)
    corrected = verified_replays(s.corrections.retrieve([instruction or goal], scene, k=s.config.plan_pool)
                                 if s.corrections is not None else [])
    if s.experiences is None:
        return learned(task, [], before, corrected=corrected)
    pool = s.experiences.retrieve(goal, scene, s.visibility, k=s.config.plan_pool)
    own = [e for e in s.experiences.every(goal, scene, s.visibility) if task.played_in(e.episode)]
    return learned(task, pool, before, own, corrected)


def learned(task: ThisTask, pool: Sequence[Experience], before: Lessons = Lessons(),
            own: Sequence[Experience] | None = None, corrected: Sequence[EpisodeRecord] = ()) -> Lessons:
    """What the episodes of `pool` (and the `corrected` replays, for how things read and what
    was made) teach `task`, joined to `before`: each episode is read once.
    What failed the task itself (`fatal`, `failed_things`, `tried_before`) is read from `own`,
    every stored episode of it, where given: the old experience source retrieved again with the
    scene whenever its plan ran out and so came to this task's episodes the first retrieval left
    out (the tidy family, whose tasks start alike: 70.9 in round 2 with seed 0, 52.1 without)."""
    domain = task.domain
    mine = pool if own is None else own
    unread = [episode for episode in (*(e.episode for e in pool), *corrected) if episode.id not in before.read]
    told = {description: Counter(counts) for description, counts in before.answers.items()}
    merge(told, answers(unread, domain))
    alike = {description: Counter(counts) for description, counts in before.likeness.items()}
    merge(alike, likeness(unread, domain))
    read_so = {key: Counter(counts) for key, counts in before.orientations.items()}
    merge(read_so, orientations(unread, domain))
    made = [recipe for episode in unread
            for recipe in recipes([(step.action, step.triples) for step in episode.steps], domain)]
    return Lessons(
        fatal=before.fatal | fatal_actions(task, mine),
        failed_things=before.failed_things | fatal_things(task, mine),
        won_things=before.won_things | won_things(task, mine),
        tried_before=before.tried_before | tried_before(task, mine),
        rewarded=before.rewarded | rewarded_actions(task, mine),
        verified=before.verified or tuple(verified_focuses(task.goal, pool, domain)),
        answers=told,
        likeness=alike,
        orientations=read_so,
        recipes=(*before.recipes, *made),
        read=before.read | {e.id for e in unread if e.id is not None},
    )


# The instructions learned from the visible episodes, by their ids: the same for a whole round,
# whose episodes see only the rounds before it.
_instructions: dict[tuple[tuple[int, ...], str, int], Written] = {}


def instructions(settings: AgentSettings, goal: str, scene: str, cap: int) -> Written:
    """What written lines mean, learned from every visible episode (`prag.agent.goals.written`)."""
    s = settings
    if s.experiences is None:
        return Written()
    episodes = [e.episode for e in s.experiences.every(goal, scene, s.visibility)]
    key = (tuple(sorted(e.id or 0 for e in episodes)), s.domain.name, cap)
    if key not in _instructions:
        _instructions.clear()
        _instructions[key] = learn(episodes, s.domain, cap)
    return _instructions[key]
