"""The planner's prompt, laid out for the backend's prefix cache.

Messages, most stable first:
1. system: the rules of the game, the environment family's (never changes);
2. user: the matching corrections (console transcripts corrected by a person), then the
   retrieved experiences (changes only when either set changes);
3. user: the goal and the episode so far, appended step by step, then the part that changes
   every step (scene graph, admissible actions, warnings) last. Past `PATTERNS_OVER` admissible
   actions (`RoomCards`), the scene graph and the actions are shown once a room, inside the
   history, and only the warnings follow it.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

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


def act_instruction(plan_length: int) -> str:
    """What the model is asked for: the next action (`ACT`), or with `plan_length` n > 1 the
    next action and up to n - 1 actions planned after it, one per line."""
    if plan_length <= 1:
        return ACT
    return (
        "Now reply with the next action, exactly as written in the admissible actions, on the first "
        f"line; then, one per line, up to {plan_length - 1} further actions you plan to take after it "
        "(they will be checked when their turn comes). Reply with the actions only: no numbers, no "
        "explanation."
    )


@dataclass(frozen=True)
class PromptLimits:
    """How much of the examples and the history a prompt shows."""

    example_steps: int = 20  # actions shown per retrieved episode
    observation_chars: int = 200  # observation text kept per step (examples and history)
    correction_steps: int = 30  # actions shown per correction
    # With room cards, the history shown starts at a multiple of this many steps, between one and
    # two windows long: the prompt's prefix changes once a window, not every step.
    history_window: int = 25


def experience_block(experiences: Sequence[Experience], limits: PromptLimits, domain: Domain) -> str:
    """The retrieved episodes: a success step by step, to copy; a failure as what it found
    and what it kept doing, to learn from without paying for its every step."""
    parts = [
        "Past attempts at similar tasks, from your own experience. Follow what worked in the "
        "successful ones; in the failed ones, use where things were and avoid what they repeated."
    ]
    for number, experience in enumerate(experiences, start=1):
        episode, hit = experience.episode, experience.hit
        acted = [step for step in episode.steps if step.action is not None]
        outcome = "SUCCESS (goal reached)" if episode.won else f"FAILURE (goal not reached in {len(acted)} steps)"
        lines = [f"## Attempt {number}: {outcome}", f"Goal: {episode.goal}"]
        if hit.best_step is not None:
            scene = episode.steps[min(hit.best_step, len(episode.steps) - 1)].scene
            lines.append(f"Scene graph most like yours (step {hit.best_step}): {clip('; '.join(scene.splitlines()), 300)}")
        lines.append(clip(episode.steps[0].observation, limits.observation_chars))
        if episode.won:
            for step in acted[: limits.example_steps]:
                lines.append(f"> {step.action}\n{clip(step.observation, limits.observation_chars)}")
            if len(acted) > limits.example_steps:
                lines.append(f"... ({len(acted) - limits.example_steps} more steps)")
        else:
            lines += _failure_summary(episode, acted, domain)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _failure_summary(episode: EpisodeRecord, acted: Sequence[StepRecord], domain: Domain) -> list[str]:
    places = where_things_were(episode, domain)
    done = Counter(step.action for step in acted)
    closed = never_opened(step.triples for step in episode.steps)
    scored = _score_summary(episode)
    if scored:
        # Where the family keeps a score, the steps that raised it say what worked; of the rest, only
        # where the things the goal names were, and what was repeated. ScienceWorld's hundreds of
        # things and one-off actions made 4-5k characters an episode, 50 s of prompt a call.
        goal = episode.goal.lower()
        places = {thing: place for thing, place in places.items()
                  if re.search(rf"\b{re.escape(domain.kind(thing).lower())}\b", goal)}
        done = Counter(dict(item for item in done.most_common(12) if item[1] > 1))
    lines = [f"Where things were: {'; '.join(f'{thing} {place}' for thing, place in places.items())}."] if places else []
    lines += [f"Never opened: {', '.join(closed)}."] if closed else []
    lines += scored
    tally = ", ".join(f"{action} ({count})" for action, count in done.items())
    if not scored:
        return lines + [f"Its actions (times done): {tally}"]
    return lines + ([f"Its repeated actions (times done): {tally}"] if done else [])


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
    shown = []
    for pattern, named in patterns.items():
        things = list(dict.fromkeys(named))
        shown.append(f"{pattern.replace(THING, '', 1).rstrip()}: {', '.join(things)}"
                     if pattern.count(THING) == 1 and len(things) <= 12 else pattern)
    return (
        f"{len(admissible)} actions, as patterns where {THING} is a thing named here (only some "
        "combinations are possible): " + "; ".join(shown)
        + ". Things: " + ", ".join(name for name, _ in counts.most_common())
    )


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
    known = [subject for subject, _, _ in triples]
    return (f"Scene graph now:\n{scene_lines(location, triples)}\n"
            f"Admissible actions: {action_list(admissible, names, known)}")


def step_text(scene: str, admissible: Sequence[str], warnings: Sequence[str], names: Names | None = None) -> str:
    """What changes every step: the scene graph, the actions, and warnings or notes (one per line)."""
    lines = [f"Scene graph now:\n{scene}", "Admissible actions: " + action_list(admissible, names)]
    return "\n".join(lines + list(warnings))


class RoomCards:
    """Past `PATTERNS_OVER` admissible actions, the episode's prompt only grows: the room card
    (`room_card`) is shown once a room, in the history where the agent was in it, and each step
    adds just its action and what it saw. A card after the history, remade every step, cost
    about 500 tokens the prefix cache could not cover: 13 s a step for the 1.5B model on 2 cores.
    The answer is still held to the admissible actions by the grammar."""

    def __init__(self) -> None:
        self.cards: list[tuple[int, str]] = []  # (history index it follows, card)
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
        self.cards.append((index, room_card(location, triples, admissible, names)))

    def start(self, length: int, window: int) -> int:
        """Where a history of `length` is shown from: a multiple of `window`, one to two windows back."""
        return max(0, (length // window - 1) * window)

    def notes(self, start: int) -> list[tuple[int, str]]:
        """The cards to show from history index `start`: the one in force there, then the later ones."""
        shown = [(at, card) for at, card in self.cards if at >= start]
        before = [card for at, card in self.cards if at < start]
        if before and not (shown and shown[0][0] == start):
            shown.insert(0, (start, before[-1]))
        return shown


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
) -> list[Message]:
    """The whole prompt of one step, in the order above (the domain gives the rules). With active
    room `cards`, the scene and the actions are the cards in the history, not a part of their own."""
    out: list[Message] = [{"role": "system", "content": domain.rules}]
    # Corrections by a person outrank the agent's own attempts: they come first.
    examples = ([correction_block(corrections, limits)] if corrections else []) + (
        [experience_block(experiences, limits, domain)] if experiences else []
    )
    if examples:
        out.append({"role": "user", "content": "\n\n".join(examples)})
        out.append({"role": "assistant", "content": "Understood."})
    if cards is not None and cards.active:
        start = cards.start(len(history), limits.history_window)
        episode = episode_text(goal, history, limits, utterances, cards.notes(start), start)
        content = "\n\n".join([episode, *(["\n".join(warnings)] if warnings else [])])
    else:
        content = episode_text(goal, history, limits, utterances) + "\n\n" + step_text(scene, admissible, warnings, domain)
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
