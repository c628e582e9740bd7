"""The planner's prompt, laid out for the backend's prefix cache: what stays for the episode
first, then the episode appended step by step, then the step's short suffix.

Messages, most stable first:
1. system: the rules of the game, the environment family's (never changes);
2. user: the matching corrections (console transcripts corrected by a person), then the
   retrieved experiences, chosen once an episode (`PromptLimits.retrieve`) and shown by the
   steps that mattered (changes only when either set changes);
3. user: the goal and the episode so far, appended step by step, then the part that changes
   every step (scene graph, admissible actions, this step's new notes) last. Past
   `PATTERNS_OVER` admissible actions (`RoomCards`), the scene graph and the actions are shown
   once a room, inside the history, and only the new notes follow it. A note said once stands
   in the history where it was said.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence, Set
from dataclasses import dataclass

from prag.agent.config import PromptLimits
from prag.agent.plans import Names
from prag.envs.base import Triple
from prag.envs.domain import Domain
from prag.llm.base import Message
from prag.retrieval.corrections import CorrectionHit
from prag.retrieval.episodes import Experience, never_opened, where_things_were
from prag.store.records import EpisodeRecord, StepRecord
from prag.store.transcripts import Transcript
from prag.text import clip

THINK = "Think in one short sentence about what to do next. Reply with the sentence only."
ACT = "Now reply with the next action only, exactly as written in the admissible actions."
ACT_BY_NUMBER = "Now reply with the number of the next action only, as the admissible actions are numbered."


def act_instruction(plan_length: int, numbered: bool = False) -> str:
    """What the model is asked for: the next action (`ACT`; its number where the actions are
    `numbered`), or with `plan_length` n > 1 the next action and up to n - 1 actions planned
    after it, one per line."""
    if plan_length <= 1:
        return ACT_BY_NUMBER if numbered else ACT
    return (
        "Now reply with the next action, exactly as written in the admissible actions, on the first "
        f"line; then, one per line, up to {plan_length - 1} further actions you plan to take after it "
        "(they will be checked when their turn comes). Reply with the actions only: no numbers, no "
        "explanation."
    )


def experience_block(experiences: Sequence[Experience], limits: PromptLimits, domain: Domain) -> str:
    """The retrieved episodes by the steps that mattered: a success's steps that raised its score
    or met a sub-goal (where the family keeps neither, its actions, what followed a move left
    out), to copy; a failure as what it found and what it kept doing, to learn from without
    paying for its every step. Nothing in it depends on the scene at the step it was retrieved
    for, so a block kept for the episode is read once."""
    parts = [
        "Past attempts at similar tasks, from your own experience. Follow what worked in the "
        "successful ones; in the failed ones, use where things were and avoid what they repeated."
    ]
    for number, experience in enumerate(experiences, start=1):
        episode = experience.episode
        acted = [step for step in episode.steps if step.action is not None]
        outcome = "SUCCESS (goal reached)" if episode.won else f"FAILURE (goal not reached in {len(acted)} steps)"
        lines = [f"## Attempt {number}: {outcome}", f"Goal: {episode.goal}"]
        lines += _success(episode, acted, limits, domain) if episode.won else _failure_summary(episode, acted, domain)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _success(episode: EpisodeRecord, acted: Sequence[StepRecord], limits: PromptLimits, domain: Domain) -> list[str]:
    """A won episode's steps that mattered: those that raised the score or met a sub-goal; where
    the family keeps neither, every action, with what followed it unless it was a move."""
    milestones = _score_summary(episode) + _subgoals_met(episode)
    if milestones:
        return milestones
    lines = []
    for step in acted[: limits.example_steps]:
        moved = domain.movement(step.action or "") is not None
        lines.append(f"> {step.action}" if moved else f"> {step.action}\n{clip(step.observation, limits.observation_chars)}")
    if len(acted) > limits.example_steps:
        lines.append(f"... ({len(acted) - limits.example_steps} more steps)")
    return lines


def _subgoals_met(episode: EpisodeRecord) -> list[str]:
    by_step = {step.t: step.action for step in episode.steps}
    met = [f"{goal.command} (step {goal.met_at}: {by_step.get(goal.met_at)})"
           for goal in episode.extra.subgoals if goal.met_at is not None]
    return [f"Sub-goals met, with the step that met each: {'; '.join(met)}."] if met else []


def _failure_summary(episode: EpisodeRecord, acted: Sequence[StepRecord], domain: Domain) -> list[str]:
    places = where_things_were(episode, domain)
    scored = _score_summary(episode)
    if scored:
        # Where the family keeps a score, the steps that raised it say what worked; of the rest, only
        # where the things the goal names were. ScienceWorld's hundreds of things and one-off actions
        # made 4-5k characters an episode, 50 s of prompt a call; what was never opened and what
        # was repeated, another 70 tokens an episode.
        goal = episode.goal.lower()
        places = {thing: place for thing, place in places.items()
                  if re.search(rf"\b{re.escape(domain.kind(thing).lower())}\b", goal)}
    lines = [f"Where things were: {'; '.join(f'{thing} {place}' for thing, place in places.items())}."] if places else []
    if scored:
        return lines + scored
    closed = never_opened(step.triples for step in episode.steps)
    lines += [f"Never opened: {', '.join(closed)}."] if closed else []
    tally = ", ".join(f"{action} ({count})" for action, count in Counter(step.action for step in acted).items())
    return lines + [f"Its actions (times done): {tally}"]


def _score_summary(episode: EpisodeRecord) -> list[str]:
    """Where the family keeps a score: the steps that raised it, and the one that failed the task."""
    if not episode.steps or episode.steps[-1].score is None:
        return []
    raised, last, best = [], 0.0, 0.0
    for step in episode.steps[1:]:
        score = step.score if step.score is not None else last
        if score > last and step.action:
            raised.append(f"{step.action} (+{score - last:g})")
        last, best = score, max(best, score)
    final = episode.steps[-1]
    lines = [f"Score {max(last, 0):g} of 100 at the end (best {best:g}); steps that raised it: {', '.join(raised) or 'none'}."]
    if final.score is not None and final.score < 0 and final.action:
        lines.append(f"It failed the task at once with: {final.action}.")
    return lines


def correction_block(corrections: Sequence[CorrectionHit], limits: PromptLimits) -> str:
    """The matching corrections, each as its console transcript cut to its first actions."""
    parts = [
        "Examples corrected by a person: this is how the person wants such tasks done, so follow "
        "them before anything else. Each is a console transcript: act(\"...\") is an action and the "
        "lines below it are what happened; wait_for_trigger() returns what the person said."
    ]
    for number, hit in enumerate(corrections, start=1):
        correction = hit.correction
        status = "checked: it reaches the goal" if correction.verified else "unchecked: its replay did not reach the goal"
        shown = _first_actions(hit.transcript, limits.correction_steps)
        parts.append(
            f"## Corrected by a person {number} ({status})\nGoal: {correction.goal}\n"
            + shown.render(limits.observation_chars).rstrip()
        )
    return "\n\n".join(parts)


def _first_actions(transcript: Transcript, count: int) -> Transcript:
    entries, acts = [], 0
    for entry in transcript.entries:
        acts += entry.call == "act"
        if acts > count:
            break
        entries.append(entry)
    return Transcript(tuple(entries))


def episode_text(
    goal: str,
    history: Sequence[tuple[str | None, str]],
    limits: PromptLimits,
    utterances: Sequence[tuple[int, str]] = (),
    notes: Sequence[tuple[int, str]] = (),
    start: int = 0,
) -> str:
    """The goal and the episode so far: the reset observation, then `> action` and its result;
    what the person said (`utterances`: (history index it followed, text)) where they said it,
    and the `notes` (room cards) likewise. From history index `start` on, when not 0."""
    lines = [f"Your goal: {goal}"]
    if start:
        lines.append(f"({start} earlier steps not shown.)")
    for index, (action, observation) in enumerate(history[start:], start=start):
        if action is not None:
            lines.append(f"> {action}")
        lines.append(clip(observation, limits.observation_chars))
        lines += [f'The person says: "{text}"' for at, text in utterances if at == index]
        lines += [text for at, text in notes if at == index]
    return "\n".join(lines)


# Past this many admissible actions the prompt shows their patterns and the things they name
# instead (ScienceWorld offers thousands; ALFWorld's rooms a hundred or so), and the scene graph
# grouped: the answer is still held to the admissible ones, by constrained decoding or by the
# check of the answer.
PATTERNS_OVER = 200
THING = "OBJ"
_MARK = "\x00"  # a name found, while the rest of the action is read (no grammar finds it as a name)


def action_list(admissible: Sequence[str], names: Names | None = None, known: Sequence[str] = ()) -> str:
    """The admissible actions, with actions sharing a verb folded: `go to: a, b, c`; past
    `PATTERNS_OVER` of them (with a Domain to read names), their patterns and the things named.

    This part of the prompt changes every step, so its length is paid for every step.
    """
    if names is not None and len(admissible) > PATTERNS_OVER:
        return action_patterns(admissible, names, known)
    groups: dict[str, list[str]] = {}
    for action in admissible:
        verb, _, rest = action.partition(" ")
        if verb == "go" and rest.startswith("to "):
            verb, rest = "go to", rest[3:]
        groups.setdefault(verb if rest else action, []).append(rest)
    return "; ".join(
        verb if rests == [""] else f"{verb} {rests[0]}" if len(rests) == 1 else f"{verb}: {', '.join(rests)}"
        for verb, rests in groups.items()
    )


def action_patterns(admissible: Sequence[str], names: Names, known: Sequence[str] = ()) -> str:
    """Many actions as their patterns, each name replaced by OBJ ("move OBJ to OBJ"), then the
    names, most often named first; patterns naming one thing list their things when few. Names
    are the `known` ones first (the scene's, longest first: "orange in bowl" is one name), then
    what the Domain's grammar finds in the rest."""
    return patterns_of(admissible, names, known).render()


# A verb with more general patterns than this shows its first two and how many more: the workshop's
# thirty forms of `connect` (terminals, cathodes) were a third of its card.
_FORMS_SHOWN = 4


@dataclass(frozen=True)
class Patterns:
    """Admissible actions as patterns over names, in the parts a room card shows (`render`)."""

    count: int  # the admissible actions
    listed: tuple[str, ...]  # patterns naming one thing, with their things ("open: fridge, oven")
    general: tuple[str, ...]  # patterns over names ("move OBJ to OBJ")
    things: tuple[str, ...]  # the names, most often named first

    def render(self, shown: Set[str] = frozenset(), scene: Set[str] = frozenset()) -> str:
        """The patterns, those already `shown` in the prompt named by their verb alone, and the
        names the `scene` lines do not already give."""
        new = [p for p in self.general if p not in shown]
        old = list(dict.fromkeys(_verb(p) for p in self.general if p in shown))
        parts = list(self.listed) + _folded(new) + ([f"as above: {', '.join(old)}"] if old else [])
        things = [name for name in self.things if name not in scene]
        return (f"{self.count} actions, as patterns where {THING} is a thing named here (only some "
                "combinations are possible): " + "; ".join(parts) + (f". Things: {', '.join(things)}" if things else ""))


def patterns_of(admissible: Sequence[str], names: Names, known: Sequence[str] = ()) -> Patterns:
    """The parts of `action_patterns`."""
    longest = sorted(set(known), key=len, reverse=True)
    patterns: dict[str, list[str]] = {}
    counts: Counter[str] = Counter()
    for action in admissible:
        pattern, named = _named(action, longest)
        for name in names.entities(pattern):
            if _MARK not in name and name in pattern:
                pattern = pattern.replace(name, _MARK, 1)
                named.append(name)
        patterns.setdefault(pattern.replace(_MARK, THING), []).extend(named)
        counts.update(named)
    listed, general = [], []
    for pattern, named in patterns.items():
        things = list(dict.fromkeys(named))
        if pattern.count(THING) == 1 and len(things) <= 12:
            listed.append(f"{pattern.replace(THING, '', 1).rstrip()}: {', '.join(things)}")
        else:
            general.append(pattern)
    return Patterns(len(admissible), tuple(listed), tuple(general), tuple(name for name, _ in counts.most_common()))


def _verb(pattern: str) -> str:
    return pattern.split(f" {THING}", 1)[0] if f" {THING}" in pattern else pattern


def _folded(patterns: Sequence[str]) -> list[str]:
    """The patterns, a verb's forms past `_FORMS_SHOWN` said by their number."""
    by_verb: dict[str, list[str]] = {}
    for pattern in patterns:
        by_verb.setdefault(_verb(pattern), []).append(pattern)
    out: list[str] = []
    for verb, forms in by_verb.items():
        out += forms if len(forms) <= _FORMS_SHOWN else [*forms[:2], f"{verb} ... ({len(forms) - 2} more forms)"]
    return out


def _named(action: str, longest: Sequence[str]) -> tuple[str, list[str]]:
    """`action` with the known names it holds (whole words, longest first) marked, and those
    names in the order they stand."""
    found: list[tuple[int, str]] = []
    for name in longest:
        start = f" {action} ".find(f" {name} ")
        if start >= 0:
            found.append((start, name))
            action = action[:start] + _MARK + action[start + len(name):]
    return action, [name for _, name in sorted(found)]


def scene_lines(location: str | None, triples: Sequence[Triple]) -> str:
    """A large scene graph grouped by relation and object ("in kitchen: air, chair, ..."), its
    key node first: the same facts in a third of the words."""
    groups: dict[str, list[str]] = {}
    for subject, relation, obj in triples:
        groups.setdefault(f"{relation} {obj}", []).append(subject)
    head = [f"at: {location}"] if location else []
    return "\n".join(head + [f"{key}: {', '.join(subjects)}" for key, subjects in groups.items()])


def room_card(location: str | None, triples: Sequence[Triple], admissible: Sequence[str], names: Names) -> str:
    """A room's scene graph grouped (`scene_lines`) and its actions as patterns over the scene's
    names (`action_patterns`)."""
    return Card.of(0, location, triples, admissible, names).render()


@dataclass(frozen=True)
class Card:
    """A room as a card shows it: its scene graph grouped, and its actions (listed, or as patterns)."""

    at: int  # the history index it follows
    location: str | None
    scene: str  # `scene_lines`
    names: frozenset[str]  # what the scene lines name
    actions: Patterns | str  # patterns past `PATTERNS_OVER` actions, else the folded list

    @classmethod
    def of(cls, at: int, location: str | None, triples: Sequence[Triple], admissible: Sequence[str],
           names: Names) -> Card:
        known = [subject for subject, _, _ in triples]
        actions: Patterns | str = (patterns_of(admissible, names, known) if len(admissible) > PATTERNS_OVER
                                   else action_list(admissible))
        named = frozenset(known) | {obj for _, _, obj in triples} | ({location} if location else set())
        return cls(at, location, scene_lines(location, triples), named, actions)

    def render(self, shown: Set[str] = frozenset()) -> str:
        """The card, the general patterns already `shown` in the prompt named by their verb alone."""
        actions = self.actions if isinstance(self.actions, str) else self.actions.render(shown, self.names)
        return f"Scene graph now:\n{self.scene}\nAdmissible actions: {actions}"


def step_text(
    scene: str, admissible: Sequence[str], warnings: Sequence[str], names: Names | None = None, numbered: bool = False
) -> str:
    """What changes every step: the scene graph, the actions (by number, where `numbered`), and
    warnings or notes (one per line)."""
    actions = ("\n".join(f"{number}. {action}" for number, action in enumerate(admissible, start=1)) if numbered
               else action_list(admissible, names))
    lines = [f"Scene graph now:\n{scene}", ("Admissible actions, by number:\n" if numbered else "Admissible actions: ") + actions]
    return "\n".join(lines + list(warnings))


class RoomCards:
    """Past `PATTERNS_OVER` admissible actions, the episode's prompt only grows: the room card
    (`Card`) is shown once a room, in the history where the agent was in it, and each step
    adds just its action and what it saw. A card after the history, remade every step, cost
    about 500 tokens the prefix cache could not cover: 13 s a step for the 1.5B model on 2 cores.
    What a card would repeat of the cards shown before it is left out: a general pattern is
    named by its verb alone, and a room whose scene graph is as its last card showed says so in
    a line (walking between two rooms made a 400-token card a step). The answer is still held
    to the admissible actions by the decoder."""

    def __init__(self) -> None:
        self.cards: list[Card] = []
        self._room: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.cards)

    def see(
        self, index: int, location: str | None, triples: Sequence[Triple], admissible: Sequence[str], names: Names
    ) -> None:
        """The step at history `index` is about to be chosen: card the room if it is new here."""
        if (not self.cards and len(admissible) <= PATTERNS_OVER) or (self.cards and location == self._room):
            return
        self._room = location
        self.cards.append(Card.of(index, location, triples, admissible, names))

    def notes(self, start: int) -> list[tuple[int, str]]:
        """The cards to show from history index `start`: the one in force there, then the later
        ones, each without what the ones shown before it said."""
        cards = [card for card in self.cards if card.at >= start]
        before = [card for card in self.cards if card.at < start]
        if before and not (cards and cards[0].at == start):
            cards.insert(0, before[-1])
        shown: set[str] = set()
        last: dict[str | None, str] = {}  # the scene lines each room's last card showed
        notes = []
        for card in cards:
            at = max(card.at, start)
            if last.get(card.location) == card.scene:
                notes.append((at, f"Back in the {card.location}: the scene graph is as its card above shows."))
                continue
            notes.append((at, card.render(shown)))
            last[card.location] = card.scene
            if isinstance(card.actions, Patterns):
                shown.update(card.actions.general)
        return notes


def shown_history(
    goal: str, history: Sequence[tuple[str | None, str]], limits: PromptLimits, utterances: Sequence[tuple[int, str]],
    cards: RoomCards, said: Sequence[tuple[int, str]] = (),
) -> str:
    """The goal and the episode with its room cards, whole while it fits `history_chars`; past
    that from the first multiple of `history_window` steps where it fits. The start moves
    seldom: each move re-costs the prompt after it (5,800 tokens, 134 s for the 1.5B model on a
    shared core, where 24,000 characters were reached near step 100)."""
    start = 0
    while True:
        text = episode_text(goal, history, limits, utterances, _merged(cards.notes(start), said), start)
        if len(text) <= limits.history_chars or start + limits.history_window >= len(history):
            return text
        start += limits.history_window


def _merged(cards: Sequence[tuple[int, str]], said: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """Room cards and notes said before, by the history index they follow; at one index the card
    first, as the card was in the history when the notes were said after it."""
    return [(at, text) for at, _, text in sorted([(at, 0, t) for at, t in cards] + [(at, 1, t) for at, t in said],
                                                 key=lambda note: note[:2])]


def messages(
    domain: Domain,
    experiences: Sequence[Experience],
    goal: str,
    history: Sequence[tuple[str | None, str]],
    scene: str,
    admissible: Sequence[str],
    warnings: Sequence[str],
    limits: PromptLimits,
    corrections: Sequence[CorrectionHit] = (),
    utterances: Sequence[tuple[int, str]] = (),
    cards: RoomCards | None = None,
    said: Sequence[tuple[int, str]] = (),
) -> list[Message]:
    """The whole prompt of one step, in the order above (the domain gives the rules). With active
    room `cards`, the scene and the actions are the cards in the history, not a part of their own.
    The `warnings` are this step's new notes; the notes `said` at an earlier step (history index,
    text) stand in the history where they were first said, not again at the end."""
    out: list[Message] = [{"role": "system", "content": domain.rules}]
    # Corrections by a person outrank the agent's own attempts: they come first.
    examples = ([correction_block(corrections, limits)] if corrections else []) + (
        [experience_block(experiences, limits, domain)] if experiences else []
    )
    if examples:
        out.append({"role": "user", "content": "\n\n".join(examples)})
        out.append({"role": "assistant", "content": "Understood."})
    if cards is not None and cards.active:
        # The notes follow the history as they will stand in it from the next step on.
        content = "\n".join([shown_history(goal, history, limits, utterances, cards, said), *warnings])
    else:
        actions = step_text(scene, admissible, warnings, domain, numbered=limits.numbered)
        content = episode_text(goal, history, limits, utterances, said) + "\n\n" + actions
    out.append({"role": "user", "content": content})
    return out


def with_instruction(prompt: list[Message], instruction: str, cards: RoomCards | None = None) -> list[Message]:
    """`prompt` with `instruction` after its last message's text; with active room `cards`,
    before the episode instead, where the prefix cache keeps it (after the history it is read
    again every step)."""
    last = dict(prompt[-1])
    first = cards is not None and cards.active
    last["content"] = f"{instruction}\n\n{last['content']}" if first else f"{last['content']}\n\n{instruction}"
    return prompt[:-1] + [last]
