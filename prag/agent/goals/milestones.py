"""Sub-goals learned from reward: the facts a rewarded step made true, lifted to the roles the
task's words give their things, in the order episodes reached them.

Where a family keeps a score (ScienceWorld's partial credit, a user's thin family), a step that
raised it is evidence of a sub-goal: the facts that step made true. Where it only wins or loses,
the winning step is. The facts are those of one shared vocabulary (prag.envs.facts: where the
agent is, what it holds, where a thing is, a thing's states), read from each step's scene graph
alone, so a fact is what the agent was shown:

- moving to another room makes true only that the agent is there (and what it carries with it
  is there too): the things first seen there were not made by the move;
- the facts kept as the sub-goal's *core* are those about the things the task's words name and
  those the rewarded action acted on ("move metal pot to stove": the pot is on the stove); with
  them, as *context*, what held then of the core's things and the task's things together (the
  ice cream was in the pot): the reward may have asked for both.

Each thing is lifted to a `Term`: the goal's words for it where the goal names it ("ice cream"),
else its name and kind. Another variation re-binds a term by its goal words re-worded ("boil ice
cream" -> "boil water": the water; `prag.agent.plans.reworded`), else the same name, else a thing
of the same kind. A step that failed the task or lowered the score marks what it made true as a
thing to avoid, its action with it.

Names are read as their own names where the scene says them (`Domain.name_of`) less a state word
before the name the actions use ("liquid ice cream" is the ice cream), and without what a family's
`kind_rule` appends ("metal pot containing ice cream" is the metal pot): ScienceWorld renames a
thing as its contents and state change.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from prag.envs.base import Triple
from prag.envs.domain import Domain
from prag.envs.facts import AT, HOLDS, PLACED, SEPARATOR, STATE, Fact, GoalFacts, read_facts, state_predicate
from prag.envs.sam import lift
from prag.sources import StepSource
from prag.store.records import EpisodeRecord, StepRecord

PHRASE_WORDS = 4  # the longest goal phrase a name is matched against
ACCESS = frozenset(state_predicate(s) for s in ("open", "closed"))  # states that let one reach in, not ends


@dataclass(frozen=True, order=True)
class Term:
    """A thing as a lifted fact names it: the goal's words for it, else its name and its kind."""

    name: str
    kind: str
    phrase: str | None = None
    # The words the action said it by, where they differ from its name: "baby baby wolf" is the
    # wolf, at a stage another variation's "baby baby beaver" is at too.
    said: str | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return self.phrase or self.name


LiftedFact = tuple[str, tuple[Term, ...]]  # (predicate, its things)
LiftedAction = tuple[str, tuple[Term, ...]]  # (the command's template, "move {0} to {1}", its things)
RouteStep = tuple[str | None, LiftedAction]  # where the agent was, and what it did there
Way = tuple[str, str, str]  # (room, the move taken there, the room it led to)


@dataclass(frozen=True)
class Milestone:
    """One sub-goal: its core facts (reached when they hold), the context that held with them,
    the route there from the sub-goal before (the actions that changed something), the score it
    earned, and the episode it was learned from."""

    core: tuple[LiftedFact, ...]
    context: tuple[LiftedFact, ...] = ()
    # What the episode did between the sub-goal before and this one, where: the moves and the
    # doors opened on the way are left out (the way there is found on the map of rooms, so a
    # route does not walk the detours of the exploration that found it), as are places opened
    # and closed again with nothing done in between.
    route: tuple[RouteStep, ...] = ()
    gain: float = 0.0
    origin: int | None = None
    # Where the rewarded step showed no fact (a wire connected, in a scene graph that has no
    # wires): the action itself is the sub-goal, reached once taken.
    action: LiftedAction | None = None
    # A person's only: each thing the goal does not name that the episode acted on before, with
    # the states what it is part of was in as the step was taken (the circuit's bulb lit or not
    # when the person answered the branch).
    evidence: tuple[tuple[Term, frozenset[str]], ...] = ()

    @property
    def steps(self) -> tuple[RouteStep, ...]:
        """The route, then the rewarded action where the sub-goal is one (taken wherever it can be)."""
        return (*self.route, *([(None, self.action)] if self.action is not None else []))

    @property
    def key(self) -> frozenset[tuple[str, tuple[str, ...]]]:
        """What makes two milestones the same sub-goal: the core's predicates and things (or the action)."""
        facts = self.core or ((self.action[0], self.action[1]),) if self.action is not None else self.core
        return frozenset((p, tuple(str(t) for t in terms)) for p, terms in facts)

    def describe(self) -> str:
        """The core in words, for a prompt or a report ("ice cream is liquid; metal pot in stove")."""
        if not self.core and self.action is not None:
            template, terms = self.action
            return template.format(*(str(t) for t in terms))
        return "; ".join(say(fact) for fact in self.core)


def as_goal(core: Sequence[LiftedFact]) -> GoalFacts:
    """A sub-goal's core as a goal in the learned models' vocabulary: a variable for each thing, of
    its kind (prag.envs.facts), for means-ends search on the model learned from the store."""
    variables: dict[Term, str] = {}
    for _, terms in core:
        for t in terms:
            variables.setdefault(t, f"v{len(variables)}")
    facts = tuple((predicate, *(variables[t] for t in terms)) for predicate, terms in core)
    return GoalFacts(tuple((v, t.kind) for t, v in variables.items()), facts)


def say(fact: LiftedFact) -> str:
    predicate, terms = fact
    names = [str(t) for t in terms]
    if predicate == AT:
        return f"you are in {names[0]}"
    return _sentence(predicate, names) or " ".join([predicate, *names])


def _sentence(predicate: str, words: list[str]) -> str | None:
    """A fact over these words as a facts sentence says it (prag.envs.facts), None for a
    predicate it has no words for."""
    if predicate == PLACED:
        return f"{words[0]} in {words[1]}"
    if predicate == HOLDS:
        return f"you hold {words[0]}"
    if predicate.startswith(STATE):
        return f"{words[0]} is {predicate[len(STATE):]}"
    return None


@dataclass(frozen=True)
class Lesson:
    """What one episode's score teaches: its sub-goals in the order reached, and what to avoid."""

    goal: str
    milestones: tuple[Milestone, ...]
    avoid: tuple[LiftedAction, ...] = ()
    score: float = 0.0
    ways: tuple[Way, ...] = ()  # the moves that led from room to room
    rank: int = 1  # merged in this order: 0 a person's correction (or the stand-in for one), 1 an episode of
    # this very task, 2 one of another task of its template


# --- reading an episode ------------------------------------------------------------------------


def canonical(name: str, triples: Sequence[Triple], domain: Domain) -> str:
    """A thing's name as it stays while its state and contents change (see the module's doc)."""
    base = name
    if domain.kind_rule is not None and (match := re.fullmatch(domain.kind_rule, name)):
        base = match["kind"]
    own = domain.name_of(name, triples) if domain.own_name else base
    return base if own == base or own.endswith(" " + base) else own


def facts_of(step: StepRecord, domain: Domain) -> tuple[frozenset[Fact], dict[str, str]]:
    """The facts a step's scene graph shows, by canonical names, and name -> canonical name."""
    triples = step.triples
    names: dict[str, str] = {}

    def c(name: str) -> str:
        if name not in names:
            names[name] = canonical(name, triples, domain)
        return names[name]

    facts: set[Fact] = {(AT, c(step.location))} if step.location else set()
    facts |= {(HOLDS, c(thing)) for thing in domain.held(triples)}
    facts |= {(PLACED, c(thing), c(place)) for thing, _, place in domain.placed(triples)}
    facts |= {(state_predicate(state), c(thing)) for thing, relation, state in triples if relation == "is"}
    return frozenset(facts), names


def made_true(before: StepRecord, after: StepRecord, domain: Domain) -> set[Fact]:
    """The facts `after` shows that `before` did not, less those a move only brought into view."""
    old, _ = facts_of(before, domain)
    new, _ = facts_of(after, domain)
    made = set(new - old)
    if after.location != before.location:
        carried = {fact[1] for fact in new if fact[0] == HOLDS}
        made = {fact for fact in made if fact[0] == AT or carried & set(fact[1:])}
    return made


def goal_phrases(goal: str) -> set[str]:
    """Every run of up to PHRASE_WORDS of the goal's words: what a name must equal to be named by it."""
    words = re.findall(r"[a-z0-9]+", goal.lower())
    return {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(i + PHRASE_WORDS, len(words)) + 1)}


def term(name: str, phrases: set[str], domain: Domain) -> Term:
    """A name lifted: the goal's words for it are the longest goal phrase its words end with
    ("gaseous ice cream" is the goal's ice cream), else its kind, else a goal word that is the
    name with an ending (the soap is the goal's "soapy", so it is the sugar of "sugar water")."""
    words = _spoken(name).split()
    named = next((" ".join(words[i:]) for i in range(len(words)) if " ".join(words[i:]) in phrases), None)
    kind = domain.kind(name)
    if named is None and _spoken(kind) in phrases:  # "apple 1": the goal's apple
        named = _spoken(kind)
    if named is None and len(words) == 1:  # "soap": the goal's "soapy" (water)
        named = next((p for p in sorted(phrases) if _inflected(p, words[0])), None)
    return Term(name, kind, named)


def _inflected(word: str, stem: str) -> bool:
    """`word` is `stem` with an ending ("soapy", "boxes"): one word, a stem of four letters or more,
    an ending of at most two."""
    return " " not in word and len(stem) >= 4 and word.startswith(stem) and 0 < len(word) - len(stem) <= 2


def lesson(episode: EpisodeRecord, domain: Domain, rank: int = 2) -> Lesson:
    """The sub-goals and the actions to avoid that an episode's score (or its win) shows: those
    that lowered the score, not one that failed the task outright (that one is this very task's
    to rule out: the thing it aimed at may be the right one in another variation)."""
    goal = episode.read_as
    phrases = goal_phrases(goal)
    steps = episode.steps
    corrected = episode.source == StepSource.CORRECTION
    milestones: list[Milestone] = []
    avoid: list[LiftedAction] = []
    route: list[tuple[str | None, str, LiftedAction]] = []
    ways: dict[Way, None] = {}
    acted: dict[Term, None] = {}  # what a person's steps acted on that the goal does not name
    best = 0.0
    for before, after in zip(steps, steps[1:]):
        action = after.action
        if action is None:
            continue
        if before.location and after.location and before.location != after.location:
            ways[(before.location, action, after.location)] = None
        facts_before, names = facts_of(before, domain)
        facts_after, later = facts_of(after, domain)
        lifted = _lift_action(action, {**names, **later}, phrases, domain)
        changed = (before.triples, before.location) != (after.triples, after.location)
        # A person's step counts where the scene shows no change it made (a wire connected, where
        # the scene graph has no wires): the agent's own such steps were refused or idle.
        deliberate = changed or corrected and bool(lifted and lifted[1])
        if lifted is not None and deliberate and not _on_the_way(action, domain):
            route.append((before.location, action, lifted))
        gain = _gain(before, after, episode, best)
        if gain < 0 and lifted is not None and (after.score is None or after.score >= 0):
            avoid.append(lifted)  # a task failed outright is this task's own (prag.agent.sources.past_episodes.fatal_actions)
        acted_before = tuple(acted)
        if corrected and lifted is not None:
            acted.update(dict.fromkeys(t for t in lifted[1] if t.phrase is None))
        if gain <= 0:
            continue
        best = max(best, after.score if after.score is not None else best + gain)
        made = made_true(before, after, domain)
        names_acted = {t.name for t in lifted[1]} if lifted is not None else set()
        evidence = evidence_of(acted_before, facts_before) if corrected else ()
        core, context = _core(made, facts_after, names_acted, phrases, domain)
        if core or lifted is not None:
            kept = tuple((room, step) for room, _, step in _undone_left_out(route, domain))
            milestones.append(Milestone(core, context, kept, gain, episode.id, None if core else lifted, evidence))
            route = []
    score = episode.score or (1.0 if episode.won else 0.0)
    return Lesson(goal, tuple(milestones), tuple(avoid), score, tuple(ways), rank)


def makes_what_it_names(episode: EpisodeRecord, domain: Domain) -> bool:
    """Whether the episode made a thing its goal names: one that came into view where the agent
    stood, by a step that opened nothing (the soapy water mixed in the cup), not one found (walked
    to, or in a cupboard opened; a melted marshmallow is the marshmallow seen before)."""
    phrases = goal_phrases(episode.read_as)
    opening = domain.open_action.split("{}")[0]

    def named(step: StepRecord) -> set[str]:
        return {p for fact in facts_of(step, domain)[0] for name in fact[1:]
                if (p := term(name, phrases, domain).phrase) is not None}

    seen = named(episode.steps[0]) if episode.steps else set()
    for before, after in zip(episode.steps, episode.steps[1:]):
        now = named(after)
        if now - seen and after.location == before.location and not (after.action or "").startswith(opening):
            return True
        seen |= now
    return False


def evidence_of(things: Iterable[Term], state: frozenset[Fact]) -> tuple[tuple[Term, frozenset[str]], ...]:
    """Each thing with the states (not open or closed) of what it is part of (`whole`) in `state`."""
    known = {name for fact in state for name in fact[1:]}
    return tuple((t, states_of(whole(t.name, known), state)) for t in things)


def states_of(name: str, state: frozenset[Fact]) -> frozenset[str]:
    """The state predicates (not open or closed) `state` gives the thing called `name`."""
    return frozenset(fact[0] for fact in state if len(fact) == 2 and fact[1] == name
                     and fact[0].startswith(STATE) and fact[0] not in ACCESS)


def whole(name: str, known: Collection[str]) -> str:
    """The known thing `name` says it is a part of ("anode in electric motor": the electric
    motor), else `name` itself."""
    for match in re.finditer(r" (?:in|on) ", name):
        if name[match.end():] in known:
            return name[match.end():]
    return name


def _on_the_way(action: str, domain: Domain) -> bool:
    """A move, or the opening of a way through (a door): the map of rooms finds these again."""
    if domain.movement(action) is not None:
        return True
    names = domain.entities(action)
    opens = names and action in {domain.open_action.format(names[0]), *domain.inverse(domain.open_action.format(names[0]))}
    return bool(opens and domain.is_passage(names[0]))


def _undone_left_out(route: list[tuple[str | None, str, LiftedAction]], domain: Domain
                     ) -> list[tuple[str | None, str, LiftedAction]]:
    """The route without each action undone later (its inverse, `Domain.inverse`) with nothing
    done in between to what it acted on: a cupboard opened and closed again."""
    kept = list(route)
    changed = True
    while changed:
        changed = False
        for i, (room, action, _) in enumerate(kept):
            things = set(domain.entities(action))
            for j in range(i + 1, len(kept)):
                later = kept[j][1]
                if later in domain.inverse(action, room):
                    del kept[j], kept[i]
                    changed = True
                    break
                if things & set(domain.entities(later)):
                    break
            if changed:
                break
    return kept


def _gain(before: StepRecord, after: StepRecord, episode: EpisodeRecord, best: float) -> float:
    """What a step earned: the score's rise past the best so far (a drop, or a failed task, is
    negative); for a family without a score, 1 for the step that won."""
    if after.score is None or before.score is None:
        return 1.0 if episode.won and after is episode.steps[-1] else 0.0
    if after.score < before.score:
        return after.score - before.score
    return max(after.score - max(before.score, best), 0.0)


def _core(made: set[Fact], now: frozenset[Fact], acted: set[str], phrases: set[str],
          domain: Domain) -> tuple[tuple[LiftedFact, ...], tuple[LiftedFact, ...]]:
    """The facts made true that are the sub-goal (where the agent went, what the action acted on,
    what the goal names; all of them where none is), and the context: where the core's things
    were, with the goal's things, when it was reached."""
    about = {name for fact in made for name in fact[1:] if term(name, phrases, domain).phrase is not None}
    core = {fact for fact in made if fact[0] == AT or set(fact[1:]) & (acted | about)} or made
    things = {name for fact in core for name in fact[1:]}
    context = {fact for fact in now - core if fact[0] == PLACED and set(fact[1:]) & things
               and any(term(n, phrases, domain).phrase is not None for n in fact[1:])}
    return _lifted(core, phrases, domain), _lifted(context, phrases, domain)


def _spoken(name: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", name.lower()))


def _lifted(facts: Iterable[Fact], phrases: set[str], domain: Domain) -> tuple[LiftedFact, ...]:
    return tuple(sorted((fact[0], tuple(term(name, phrases, domain) for name in fact[1:])) for fact in facts))


def _lift_action(action: str, names: Mapping[str, str], phrases: set[str], domain: Domain) -> LiftedAction | None:
    """The command as a template over the names it acts on (prag.envs.sam.lift), each lifted."""
    lifted = lift(action, [name for name in names if name])
    if lifted is None:
        return None
    template, arguments = lifted
    lifted_terms = (term(names.get(name, name), phrases, domain) for name in arguments)
    return template, tuple(t if t.name == name else replace(t, said=name) for t, name in zip(lifted_terms, arguments))


def won_reading(goal: str, steps: Sequence[StepRecord], domain: Domain) -> str | None:
    """What a won episode shows its goal meant, as a facts sentence in the goal's own words
    (prag.envs.facts.read_facts): what the winning step made true, with what the agent held at
    the end and the states the things it placed or held were brought to ("you hold alarmclock;
    desklamp is on", "apple is clean; apple in fridge"); facts about things the goal does not
    name are left out. None where nothing it names was made true."""
    if len(steps) < 2:
        return None
    phrases = goal_phrases(goal)
    first, _ = facts_of(steps[0], domain)
    last, _ = facts_of(steps[-1], domain)
    core = made_true(steps[-2], steps[-1], domain)
    carried = {f[1] for f in core if f[0] == PLACED} | {f[1] for f in last if f[0] == HOLDS}
    named = {name for f in last for name in f[1:] if term(name, phrases, domain).phrase is not None}
    # States brought about on what was put or held, or on what the goal names (the lamp turned on
    # before the thing was taken); a place opened on the way is a means, not what was asked.
    gained = {f for f in last - first if f[0] == HOLDS or f[0].startswith(STATE) and (
        f[1] in carried or f[1] in named and f[0] not in ACCESS)}
    said = [_written(fact) for fact in _lifted(core | gained, phrases, domain)]
    sentence = SEPARATOR.join(dict.fromkeys(s for s in said if s is not None))
    return sentence if read_facts(sentence) is not None else None


def _written(fact: LiftedFact) -> str | None:
    """A lifted fact as a facts sentence says it, where the goal's words name all its things."""
    predicate, terms = fact
    if any(t.phrase is None for t in terms):
        return None
    return _sentence(predicate, [str(t.phrase) for t in terms])


# --- merging what several episodes teach -------------------------------------------------------


def merged(lessons: Sequence[Lesson]) -> list[Milestone]:
    """The sub-goals of several episodes of one task, in order: a correction's first, else the
    best-scoring episode's; then each other's not among them, after the one it reached before it.
    One episode's sub-goal reached again (the plant watered and waited for, cycle after cycle, the
    score rising at each) is kept as often as it was reached."""
    ordered: list[Milestone] = []
    keys: set[frozenset[tuple[str, tuple[str, ...]]]] = set()
    for one in sorted(lessons, key=lambda lesson: (lesson.rank, -lesson.score)):
        anchor = -1
        before = set(keys)
        for milestone in one.milestones:
            if milestone.key in before:
                anchor = next(i for i, m in enumerate(ordered) if m.key == milestone.key)
                continue
            anchor += 1
            ordered.insert(anchor, milestone)
            keys.add(milestone.key)
    return ordered


# --- binding to the present episode ------------------------------------------------------------


@dataclass
class Binder:
    """Re-binds terms to the names of the present episode: by the goal's words re-worded, by the
    same name, else by kind; `names` maps each name seen to its canonical name."""

    domain: Domain
    rewording: Mapping[str, str]  # the stored goal's phrases -> the present goal's
    names: dict[str, str] = field(default_factory=dict)  # name as the actions say it -> canonical
    # What the steps taken bound each thing to: a later step binds it so again, and another thing
    # not so (the stored circuit's black and orange wires are two wires here too, not one twice).
    kept: dict[Term, str] = field(default_factory=dict)

    def see(self, names: Mapping[str, str]) -> None:
        self.names.update(names)

    def candidates(self, term: Term) -> list[str]:
        """The canonical names `term` may stand for here, the likeliest first."""
        known = list(dict.fromkeys(self.names.values()))
        if term.phrase is not None:
            # Called so, or so with words before it (the goal's gallium, molten, is also the scene's
            # "liquid gallium"), else by the last words of it (the goal's "electric buzzer" is the
            # scene's "buzzer") or by its stem (the goal's "soapy" is the scene's "soap").
            phrase = _reworded(term.phrase, self.rewording)
            return [n for n in known if _spoken(n) == phrase] + [n for n in known if _spoken(n).endswith(" " + phrase)] \
                or [n for n in known if phrase.endswith(" " + _spoken(n)) or _inflected(phrase, _spoken(n))]
        # Said here as the step said it, re-worded (the seed sprouted: the "seedling pear tree" is
        # the person's "seedling banana tree", whatever its own name); called so, or so re-worded
        # (the stored "banana seed" is the "pear seed" of the goal's pear plant).
        said = [canon for name, canon in self.names.items()
                if term.said is not None and _spoken(name) == self._said(term)]
        same = [n for n in known if n in (term.name, _reworded(term.name, self.rewording))]
        return list(dict.fromkeys(said + same)) or [n for n in known if self.domain.kind(n) == term.kind]

    def names_it(self, term: Term, said: str, canonical: str) -> bool:
        """Whether the person's own words for `term`, re-worded to this goal, name the thing here
        said so (`said`, its `canonical` name): the goal's words, its name or the words the step
        said it by ("seedling banana tree" is this "seedling pear tree"); not a thing only of its kind,
        nor one only called as theirs was where the goal's words do not say so (their crocodile was
        the longest-lived of their animals, not of these)."""
        if term.phrase is not None:
            return canonical in self.candidates(term) and (term.said is None or _spoken(said) == self._said(term))
        if term.said is not None:
            return _spoken(said) == self._said(term) != _spoken(term.said)
        return canonical == _reworded(term.name, self.rewording) != term.name

    def holds(self, facts: Sequence[LiftedFact], state: frozenset[Fact], by_role: bool = False) -> dict[Term, str] | None:
        """A binding of the facts' terms under which every fact is in `state`, or None. With
        `by_role`, where no binding by name or kind holds, a thing the goal does not name that held
        a thing it names is whatever thing holds that one here: the stored marshmallow was in a
        metal pot, here the mercury is in a cup, and the pot's steps ("move metal pot to freezer")
        are the cup's. A thing, not a room: one that is itself somewhere or held; and only those
        facts are held to (what else held then is another house's)."""
        strict = self._bind(list(facts), state, {})
        held_in = [fact for fact in facts if fact[0] == PLACED and fact[1][0].phrase is not None
                   and fact[1][1].phrase is None]
        if strict is not None or not by_role or not held_in:
            return strict
        things = frozenset(fact[1] for fact in state if fact[0] in (PLACED, HOLDS))
        return self._bind(held_in, state, {}, things)

    def _bind(self, facts: list[LiftedFact], state: frozenset[Fact], bound: dict[Term, str],
              any_thing: frozenset[str] | None = None) -> dict[Term, str] | None:
        """`any_thing`, where given, is what a term the goal does not name may bind to (`holds`' by_role)."""
        if not facts:
            return bound
        (predicate, terms), rest = facts[0], facts[1:]
        options: list[Collection[str]] = [
            [bound[t]] if t in bound else any_thing if any_thing is not None and t.phrase is None
            else self.candidates(t) for t in terms]
        for fact in state:
            if fact[0] != predicate or len(fact) != len(terms) + 1:
                continue
            if all(value in option for value, option in zip(fact[1:], options)):
                found = self._bind(rest, state, {**bound, **dict(zip(terms, fact[1:]))}, any_thing)
                if found is not None:
                    return found
        return None

    def command(self, action: LiftedAction, bound: Mapping[Term, str], admissible: Sequence[str],
                exact: bool = False) -> str | None:
        """The admissible action a lifted one stands for here, its terms bound as `bound` says and
        the rest as `candidates` does; None where none is admissible. With `exact`, a thing the
        stored action said otherwise than by its name is taken only by those words re-worded."""
        found = self.binding(action, bound, admissible, exact)
        return found[0] if found is not None else None

    def binding(self, action: LiftedAction, bound: Mapping[Term, str], admissible: Sequence[str],
                exact: bool = False, stand_in: bool = False) -> tuple[str, dict[Term, str]] | None:
        """`command`'s action with the thing each term was bound to; the binding kept from the
        steps taken is tried first, a thing kept for another term last. With `stand_in`, a term
        the goal does not name and nothing here is called or is a kind of stands for any thing the
        action can be taken on that no other term of it may be (the stored circuit's electric motor
        is this one's buzzer)."""
        template, terms = action
        by_canonical: dict[str, list[str]] = {}
        for name, canon in self.names.items():
            by_canonical.setdefault(canon, []).append(name)
        options = [[bound[t]] if t in bound else self._kept_first(t) for t in terms]
        if stand_in:  # never for a thing the goal names: that one is sought, not stood in for
            taken = {name for option in options for name in option} | set(self.kept.values())
            others = sorted(set(self.names.values()) - taken)
            options = [option or (others if t.phrase is None else []) for option, t in zip(options, terms)]
        wanted = set(admissible)
        # Said as the step said it first, whichever thing that is (the seed sprouted is the "seedling
        # pear tree", a thing kept for the seed), then as `exact` allows.
        for strictly in dict.fromkeys((True, exact)):
            for choice in _product(options):
                said = [self._said_first(by_canonical.get(c, [c]), t, strictly) for c, t in zip(choice, terms)]
                for names in _product(said):
                    command = template.format(*names)
                    if command in wanted:
                        return command, dict(zip(terms, choice))
        return None

    def keep(self, binding: Mapping[Term, str]) -> None:
        """A step bound so was taken."""
        self.kept.update(binding)

    def _kept_first(self, term: Term) -> list[str]:
        """`candidates`, the one kept for this term first (a stand-in too), those kept for others last."""
        others = {name for t, name in self.kept.items() if t != term}
        kept = [self.kept[term]] if term in self.kept else []
        return sorted(dict.fromkeys(kept + self.candidates(term)), key=lambda name: (name not in kept, name in others))

    def _said_first(self, names: list[str], term: Term, exact: bool) -> list[str]:
        """The names a thing goes by here, the one its stored words re-worded first ("baby baby
        beaver" for the stored "baby baby wolf", where "wolf" is re-worded "beaver"); with `exact`,
        only that one (the adult "dove" is no "baby baby dove")."""
        if term.said is None:
            return names
        said = self._said(term)
        if exact:
            return [name for name in names if _spoken(name) == said]
        return sorted(names, key=lambda name: _spoken(name) != said)

    def named_in(self, action: LiftedAction, command: str, binding: Mapping[Term, str]) -> bool:
        """Whether `command`, the person's step re-bound by `binding`, takes it on things their own
        words name here (`names_it`), every one."""
        template, terms = action
        if not terms or any(t not in binding for t in terms):
            return False
        said = [[name for name, canon in self.names.items() if canon == binding[t]] or [binding[t]] for t in terms]
        return any(template.format(*names) == command
                   and all(self.names_it(t, n, binding[t]) for t, n in zip(terms, names)) for names in _product(said))

    def _said(self, term: Term) -> str:
        return _reworded(_spoken(term.said or term.name), self.rewording)


def _product(options: Sequence[Sequence[str]], limit: int = 64) -> list[tuple[str, ...]]:
    """The first `limit` combinations, one from each option list in order."""
    combos: list[tuple[str, ...]] = [()]
    for option in options:
        combos = [(*c, o) for c in combos for o in option][:limit]
    return combos


def _reworded(phrase: str, rewording: Mapping[str, str]) -> str:
    if not rewording:
        return phrase
    keys = sorted(rewording, key=len, reverse=True)
    return re.sub(r"\b(?:" + "|".join(re.escape(k) for k in keys) + r")\b", lambda m: rewording[m.group(0)], phrase)
