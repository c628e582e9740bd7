"""Written instructions, read by what reward showed they meant.

A task's text, or a text the world shows in play (a note, a recipe in a book read), may say what
to do line by line in words that are not the game's commands: "red potato" (fetch it), "fry the
red potato" (cook it on the stove), "prepare meal". No family need say what such lines mean:
the score does. A step that raised it is explained by a line read before it that names the thing
the step acted on (the name of a thing in the scene its words begin with, after the verb):

- the line with that thing made a slot is a *pattern* ("fry the {x}"), and the step with the
  same slot is what the pattern *means* ("cook {x} with stove"). A last part that names where the
  thing was when taken is left out ("take {x} from counter" means "take {x}": it is found where it is);
- each line explains one step of an episode: among the lines naming the thing, one that begins
  with the step's own verb, else one not beginning with another verb the episodes' actions use;
  the fewest other words first, then in the order read; where two such lines are alike in both
  (the stove used before the knife: "chop the red potato" or "fry the red potato"), neither;
- the step that ended a lost episode before its step cap marks what it did as what the line does
  *not* mean.

An action on a thing the task's text names ("check the cookbook": "examine cookbook") whose text
held lines that explained rewarded steps is a *reading*: a later episode takes it (`readings`)
and follows what its text says (`commands`), each line by its most rewarded meaning that failed
less often than it was rewarded; a line no reward explained yet is guessed at (`trial`), and the
guess that raises the score teaches the next episode. Nothing here knows a world: the words are
the texts' and the actions'.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from os.path import commonprefix

from prag.envs.domain import Domain
from prag.store.records import EpisodeRecord, StepRecord

SLOT = "{x}"
LINE_WORDS = 7  # longer lines are prose, not an instruction
THING_WORDS = 4  # the longest name a slot binds
ECHO = 2  # letters a line's verb and a word of the world's answer begin alike with to echo it
ARTICLES = frozenset({"a", "an", "the", "some"})
# Words that lead to a thing without naming one ("look around", "look in table"): a goal that says
# "around the kitchen" names no thing "around".
PARTICLES = frozenset({"in", "into", "on", "onto", "at", "around", "to", "from", "with", "inside", "under", "over",
                       "through", "up", "down", "out", "off", "about"})
_GOAL = -1  # the line was the task's own text


@dataclass(frozen=True)
class Written:
    """What lines mean, as rewards showed: pattern -> meaning -> rewarded steps it explained; the
    (pattern, meaning) pairs that failed a task; and the actions whose texts held such lines."""

    meanings: Mapping[str, Counter[str]] = field(default_factory=dict)
    failed: Counter[tuple[str, str]] = field(default_factory=Counter)
    read_by: Counter[str] = field(default_factory=Counter)
    verbs: frozenset[str] = frozenset()  # the first words of the actions taken: a slot's name begins with none
    kinds: frozenset[str] = frozenset()  # the last words of the names of things seen: a name alone ends in one
    shapes: Mapping[str, Counter[str]] = field(default_factory=dict)  # verb -> its actions, the thing a slot

    def readings(self) -> list[str]:
        """The actions to take for their texts, the best attested first."""
        return [action for action, _ in self.read_by.most_common()]

    def commands(self, text: str, listed: bool = True) -> list[str]:
        """What the text's lines say to do, in their order, as commands; a line of no known meaning
        as itself (for `trial`). A line that is a name alone (an item of a list: "red potato") is
        read so only where the text is `listed`, not in the task's own sentences ("you are hungry")."""
        found = []
        for line in lines(text):
            command = self.command(line, listed)
            if command is not None:
                found.append(command)
        return list(dict.fromkeys(found))

    def command(self, line: str, listed: bool = True) -> str | None:
        """The line's command: by the most literal pattern it fits, that pattern's most rewarded
        meaning that was rewarded more often than it failed a task (it may fail for another
        reason: a thing cooked twice burns)."""
        for pattern in sorted(self.meanings, key=lambda p: (-len(p.replace(SLOT, "")), p)):
            thing = _fit(pattern, line)
            if thing is None or thing.split()[0] in self.verbs or pattern == SLOT and (
                    not listed or thing.split()[-1] not in self.kinds):
                continue
            meanings = [m for m, n in self.meanings[pattern].most_common() if n > self.failed[(pattern, m)]]
            # A meaning of the verb the line says first ("chop the {x}": "chop {x} with knife").
            meanings.sort(key=lambda m: m.split()[0] != pattern.split()[0])
            if meanings:
                return meanings[0].replace(SLOT, thing)
        verb, rest = line.split()[0], line.split(" ", 1)[-1]
        thing = rest.split(" ", 1)[1] if rest.split()[0] in ARTICLES and " " in rest else rest
        if listed and verb in self.shapes and thing != line:
            # The line says an action's verb ("chop the red potato"): as that verb's actions go.
            return self.shapes[verb].most_common(1)[0][0].replace(SLOT, thing)
        return line  # for `trial`

    def trial(self, line: str, admissible: Sequence[str], tried: Collection[str] = (), goal: str = ""
              ) -> tuple[str, bool] | None:
        """An action to try for a line of no known meaning, and whether taking it is the try (not
        what readies one); None where none is. Not one `tried` for another line; the first of:

        0. an action on the thing the line names (a run of words it ends with) of the line's own verb;
        1. where that verb is an action's, what readies it: an action of a verb some rewarded
           meaning uses on a tool one used ("take knife": "slice {x} with knife");
        2. one on the thing of a verb a rewarded meaning uses, whose meaning no line was rewarded
           for yet (one meaning to one line) and that never failed for this line;
        3. the readying of 1 for a verb no action has;
        4. as 2, of any verb the episodes used, on a thing the task's own words (`goal`) name: the
           end it asks for, not a means read on the way (eating an ingredient lost many games);
        5. a verb a rewarded meaning uses on the thing alone ("take {x}"), on another thing: what
           the line needs may be something to hold."""
        if line.split()[0] in self.verbs and not ARTICLES & set(line.split()):
            return None  # a command already ("take red potato"), not a line to guess for
        claimed = {meaning for counts in self.meanings.values() for meaning in counts}
        rewarded = {meaning.split()[0] for meaning in claimed}
        tools = {tool for meaning in claimed for tool in _tools(meaning)}
        bare = {meaning.split()[0] for meaning in claimed if meaning.endswith(" " + SLOT)}  # "take {x}"
        said = line.split()[0]
        options = []
        for action in (a for a in admissible if a not in tried):
            verb, rest = action.lower().split(" ", 1) if " " in action else (action.lower(), "")
            on = [thing for thing in named_things(line) if re.fullmatch(rf"{re.escape(thing)}(?: .+)?", rest)]
            for thing in on:
                pattern, meaning = _slotted(line, thing), _slotted(action.lower(), thing)
                if verb == said:
                    options.append((0, action))
                elif verb in rewarded and meaning not in claimed and not self.failed[(pattern, meaning)]:
                    options.append((2, action))
                elif verb in self.verbs and meaning not in claimed and not self.failed[(pattern, meaning)] and _names(
                        goal.lower(), thing):
                    options.append((4, action))
            if verb in rewarded and any(rest == tool or rest.startswith(tool + " ") for tool in tools):
                options.append((1 if said in self.verbs else 3, action))
            elif verb in bare and not on:
                options.append((5, action))
        if not options:
            return None
        rank, action = min(options)
        return action, rank in (0, 2, 4)


def _tools(meaning: str) -> list[str]:
    """The other things a meaning names after its slot ("cook {x} with stove": stove)."""
    _, _, after = meaning.partition(SLOT)
    words = after.split()
    return [" ".join(words[1:])] if len(words) > 1 else []


def named_things(line: str) -> list[str]:
    """What a line may name, the longest first: the runs of words it ends with, up to an article
    ("fry the red potato": red potato, potato; "once done, enjoy your meal": ..., meal)."""
    words = line.split()
    ends = [" ".join(words[i:]) for i in range(max(0, len(words) - THING_WORDS), len(words))]
    return [end for end in ends if not ARTICLES & set(end.split())]


def lines(text: str) -> list[str]:
    """The text's short lines and sentences, lower case, without their punctuation; a header that
    introduces a list (it ends in a colon) and a line of symbols or numbers are none."""
    found = []
    for raw in re.split(r"\n|(?<=[.!?])\s+", text):
        raw = raw.strip()
        if not raw or raw.endswith(":") or re.search(r"[^\w\s'.,!?-]|\d", raw):
            continue
        line = " ".join(re.findall(r"[a-z]+(?:[-'][a-z]+)*", raw.lower()))
        if line and len(line.split()) <= LINE_WORDS:
            found.append(line)
    return found


def _fit(pattern: str, line: str) -> str | None:
    head, _, tail = pattern.partition(SLOT)
    if not (line.startswith(head) and line.endswith(tail)) or len(line) <= len(head) + len(tail):
        return None
    thing = line[len(head): len(line) - len(tail)]
    # A name, not a phrase: "fry the red potato" is no thing's name.
    return thing if len(thing.split()) <= THING_WORDS and thing.strip() == thing and not ARTICLES & set(
        thing.split()) else None


@dataclass(frozen=True)
class _Line:
    text: str
    at: int  # the step whose text held it, _GOAL for the task's own
    answered: str = ""  # the action whose answer it was: "you take the carrot" instructs nothing about the carrot


def learn(episodes: Iterable[EpisodeRecord], domain: Domain, cap: int | None = None) -> Written:
    """What the episodes' rewarded steps show their lines meant (see the module's doc)."""
    meanings: dict[str, Counter[str]] = {}
    failed: Counter[tuple[str, str]] = Counter()
    read_by: Counter[str] = Counter()
    played = list(episodes)
    verbs = frozenset(step.action.split()[0] for episode in played for step in episode.steps if step.action)
    kinds = frozenset(name.split()[-1].lower() for episode in played for step in episode.steps
                      for triple in step.triples for name in (triple[0], triple[2]) if name.split())
    for episode in played:
        steps = episode.steps
        named = " ".join(re.findall(r"[a-z]+(?:[-'][a-z]+)*", episode.goal.lower()))
        read = [_Line(line, _GOAL) for line in lines(episode.goal)]
        used: set[_Line] = set()
        for before, after in zip(steps, steps[1:]):
            action = after.action
            ended = not episode.won and after is steps[-1] and cap is not None and after.t < cap
            rose = _rose(before, after) or (episode.won and after is steps[-1])
            if action and (rose or ended):
                explained = _explain(action, read, used, verbs, before, after, domain)
                if explained is not None:
                    best, thing, meaning = explained
                    if rose and len(best) == 1:
                        line = best[0]
                        used.add(line)
                        meanings.setdefault(_slotted(line.text, thing), Counter())[meaning] += 1
                        reader = steps[line.at].action if line.at != _GOAL else None
                        if reader and _acts_on_named(reader, named, domain):
                            read_by[reader] += 1
                    elif not rose:  # a failure is cheap to credit to every line it may have followed
                        for line in best:
                            failed[(_slotted(line.text, thing), meaning)] += 1
            read += [_Line(line, after.t, (action or "").lower()) for line in dict.fromkeys(lines(after.observation))]
    shapes: dict[str, Counter[str]] = {}
    for episode in played:
        for before, after in zip(episode.steps, episode.steps[1:]):
            taken = after.action
            names = {name.lower() for triple in (*before.triples, *after.triples) for name in triple}
            acted = _object(taken, names) if taken else None
            if taken and acted is not None:
                shapes.setdefault(taken.split()[0], Counter())[_meaning(taken, acted, before, domain)] += 1
    return Written(meanings, failed, read_by, verbs, kinds, shapes)


def _rose(before: StepRecord, after: StepRecord) -> bool:
    return before.score is not None and after.score is not None and after.score > before.score


def _acts_on_named(action: str, goal: str, domain: Domain) -> bool:
    """Whether the action, not a move, acts first on a thing the task's words name."""
    words = action.lower().split()[1:]
    while words and words[0] in PARTICLES | ARTICLES:
        words = words[1:]
    return domain.movement(action) is None and any(
        re.search(rf"\b{re.escape(' '.join(words[:n]))}\b", goal) for n in range(len(words), 0, -1))


def _explain(action: str, read: Sequence[_Line], used: set[_Line], verbs: frozenset[str], before: StepRecord,
             after: StepRecord, domain: Domain) -> tuple[list[_Line], str, str] | None:
    """The lines that may explain the action (one, or those alike for a step that failed), the
    thing it acted on and its meaning; None where no line read names that thing as an instruction
    to do this."""
    thing = _object(action, {name.lower() for triple in (*before.triples, *after.triples) for name in triple})
    if thing is None:
        return None
    verb = action.split()[0]
    echoed = set(re.findall(r"[a-z]+", after.observation.lower())) - set(thing.split())
    candidates = []
    for order, line in enumerate(read):
        said = line.text.split()
        if line in used or not _names(line.text, thing) or _names(line.answered, thing):
            continue
        rank = 0 if said[0] == verb else 2 if said[0] in verbs and said[0] not in thing.split() else 1
        # The world's answer may echo the line's verb ("fry the X": "You fried the X").
        echo = max((len(commonprefix([said[0], word])) for word in echoed), default=0)
        candidates.append((rank, len(said), -(echo >= ECHO), order, line))
    candidates.sort(key=lambda c: c[:4])
    if not candidates or candidates[0][0] == 2:
        return None  # every line naming it says to do something else
    best = [c[4] for c in candidates if c[:3] == candidates[0][:3]]
    return best, thing, _meaning(action, thing, before, domain)


def _names(text: str, thing: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(thing)}(?![\w-])", text) is not None


def _slotted(text: str, thing: str) -> str:
    return re.sub(rf"(?<![\w-]){re.escape(thing)}(?![\w-])", SLOT, text, count=1)


def _object(action: str, names: set[str]) -> str | None:
    """The thing the action acts on first: the longest name in the scene its words after the verb begin with."""
    words = action.lower().split()[1:]
    for size in range(min(THING_WORDS, len(words)), 0, -1):
        phrase = " ".join(words[:size])
        if phrase in names and re.fullmatch(r"[a-z]+(?:[ -][a-z]+)*", phrase):
            return phrase
    return None


def _meaning(action: str, thing: str, before: StepRecord, domain: Domain) -> str:
    """The action with the thing made the slot, less a last part naming where it was."""
    meaning = _slotted(action.lower(), thing)
    for placed, _, place in domain.placed(before.triples):
        if placed.lower() == thing:
            meaning = re.sub(rf" \w+ {re.escape(place.lower())}$", "", meaning)
    return meaning
