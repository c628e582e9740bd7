"""The ScienceWorld family behind `prag.envs.base.Environment`.

A spec's `[params]`:

    [params]
    tasks = ["boil", "find-living-thing"]   # task names, or "all" (the 30 of ScienceWorld)
    split = "dev"                           # whose variations: "train", "dev" or "test"
    variations = 2                          # how many per task (drawn by `seed`), or "all"
    seed = 0
    simplifications = ""                    # ScienceWorld's own, e.g. "easy" or "teleportAction"

What the family does beyond passing actions through, each a fact of ScienceWorld's interface:
- the admissible actions are the simulator's valid action-object combinations, less those naming
  a thing inside a closed container (the simulator lists them; acting on them answers "No known
  action matches that input.") and less "reset task", which would restart the episode;
- an action the simulator refuses ("No known action matches that input.": its list of valid
  combinations holds some it cannot parse, such as "pick up sewer") is not offered again in the
  episode;
- an action the simulator finds ambiguous ("Ambiguous request: Please enter the number ...") is
  answered with its first reading, as one step;
- a part of a thing is worded "part in thing" in every action ("cathode in blue light bulb", where
  the simulator says "blue light bulb cathode" of one bulb and "cathode in buzzer" of another);
  the action is sent in the simulator's own words;
- a room's look text lists what is there in no fixed order (the same room reads differently from
  one load to the next): its lines are sorted, so the same state reads the same;
- the score (0-100, partial credit) is the observation's `score`; the task is won at 100; a score
  below 0 means the task failed (a wrong `focus on`), which ends the episode.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from prag.envs.base import Observation, Task, scene_text_from_triples
from prag.envs.sciworld import engine
from prag.envs.sciworld.scene import FOCUS, door_names, living_names, part_first, referents, visible
from prag.errors import PragError, SpecError

SPLITS = ("train", "dev", "test")
_NEVER_OFFERED = ("reset task",)
_AMBIGUOUS = "Ambiguous request"
_READING = re.compile(r"^(\d+):\t(.*)$", re.MULTILINE)  # one reading of an ambiguous request
_HOLDER = re.compile(r"\(in ([^,)]+)")  # what holds a thing a reading names: its first "in"
_REFUSED = "No known action matches that input."
_TASK_PREFIX = "Task Description:"
_TICK = "wait1"  # the simulator's action that only lets one step of time pass
# The gold path's words for what the actions offer otherwise: "drop apricot" is "put down apricot".
_GOLD_VERBS = (("drop ", "put down "),)
# A thing's own terminal ("apricot terminal 1"), which the actions name by the thing ("connect apricot to ...").
_OWN_TERMINAL = re.compile(r" terminal \d+")


def task_names() -> list[str]:
    """ScienceWorld's 30 task names, in its own order (read from the package, no JVM started)."""
    return [task["task_name"] for task in _catalogue()]


def _catalogue() -> list[dict[str, str]]:
    try:
        text = resources.files("scienceworld").joinpath("tasks.json").read_text()
    except ModuleNotFoundError:
        raise PragError(f"the sciworld family needs the scienceworld package: `pip install "
                        f"scienceworld=={engine.VERSION}`") from None
    catalogue: list[dict[str, str]] = json.loads(text)
    return catalogue


def variations(task: str, split: str) -> list[int]:
    """The variation numbers of `task` in `split`, as the simulator splits them (prag ships the
    table read from scienceworld 1.2.3, so listing tasks starts no JVM)."""
    table = json.loads(resources.files("prag").joinpath("data/sciworld_variations.json").read_text())
    return list(table[task][split])


class SciworldEnv:
    """One ScienceWorld task variation, played on the process's simulator."""

    goal_sentence: str | None = None  # its goals are told in its own words

    def __init__(self, task: Task, name: str, variation: int, simplifications: str) -> None:
        self.task = task
        self.name = name
        self.variation = variation
        self.simplifications = simplifications
        self._sim: Any = None
        self._goal = ""
        self._focused: set[str] = set()  # ids of the things focused on: their names change as they move
        self._names: dict[str, str] = {}  # object id -> the simulator's words for it, at the last observation
        self._ours: dict[str, str] = {}  # object id -> the words prag's actions and scene name it by
        self._said: dict[str, str] = {}  # admissible action -> the simulator's words for it, where they differ
        self._refused: set[str] = set()
        self._taken: list[str] = []  # the actions taken since reset, in prag's words (played again as taken)
        self._plan: list[str] | None = None

    @property
    def shortest_path_length(self) -> int | None:
        # The simulator's gold sequence is a winning path, not a shortest one: no SPL reference.
        return None

    def oracle_plan(self) -> list[str]:
        """The simulator's gold action sequence (for checks only, never shown to an agent), in
        the words of the admissible actions: the gold path says "open door to hallway" where the
        actions name that door "door" (many doors have no referents of their own)."""
        if self._plan is None:
            sim = engine.simulator()
            sim.load(self.name, self.variation, self.simplifications, generateGoldPath=True)
            # "0": the gold path's answer to an ambiguous request, which `step` gives itself.
            gold = [a for a in sim.get_gold_action_sequence() if a and a != "0"]
            taken, playing = list(self._taken), self._sim is not None
            self._plan = self._worded(gold)
            if playing:  # the plan was played from the start: back to where the game being played was
                self.reset()
                for action in taken:
                    self.step(action)
            else:
                self._sim = None
        return list(self._plan)

    def _worded(self, gold: list[str]) -> list[str]:
        """The gold actions played from the start, each in the admissible actions' words where
        they name it otherwise (by a referent, another verb, a thing for its own terminal); one
        that is not admissible and changes nothing (the gold path picks up a pot already held) is
        left out."""
        observation = self.reset()
        worded: list[str] = []
        for action in gold:
            if action not in observation.admissible:
                alternatives = self._alternatives()
                # The gold path may say where the thing is ("baby wolf in outside"), which the actions do not.
                said = [action, action.replace(" in inventory", ""), action.rsplit(" in ", 1)[0],
                        " into ".join(action.rsplit(" in ", 1))]  # "pour cup ... in bowl": the actions pour into
                said += [ours + action[len(verb):] for verb, ours in _GOLD_VERBS if action.startswith(verb)]
                said += [action[:m.start()] + action[m.end():] for m in _OWN_TERMINAL.finditer(action)]
                action = next((alternatives.get(a, a) for a in said if a in alternatives or a in observation.admissible),
                              _in_words(action, observation))
            if action not in observation.admissible and _TICK in observation.admissible and not action.startswith(FOCUS):
                action = _TICK  # a look the actions do not offer ("examine apple juice" while it heats): time passes alike
            after = self.step(action)
            changed = (after.scene_triples, after.score, after.location) != (
                observation.scene_triples, observation.score, observation.location)
            if action in observation.admissible or changed:
                worded.append(action)
            observation = after
            if observation.done:
                break
        return worded

    def reset(self) -> Observation:
        sim = engine.simulator()
        sim.load(self.name, self.variation, self.simplifications)
        sim.server.reset()
        self._sim = sim
        self._focused = set()
        self._refused = set()
        self._taken = []
        self._goal = _goal(sim.get_task_description())
        return self._observe(self._act("look around"))

    def step(self, action: str) -> Observation:
        if self._sim is None:
            raise PragError("call reset() before step()")
        said = self._said.get(action, action)
        text = self._act(said)
        self._taken.append(action)
        if text.startswith(_AMBIGUOUS):  # the simulator counts the answer as the step
            text = self._act(_reading(text, action))
        if text.strip() == _REFUSED:
            self._refused.add(said)
        if said.startswith(FOCUS) and text.startswith("You focus on"):
            self._focused |= {object_id for object_id, name in self._names.items() if name == said[len(FOCUS):]}
        return self._observe(text)

    def close(self) -> None:
        self._sim = None  # the simulator stays up for the process's next game

    def _alternatives(self) -> dict[str, str]:
        """Other words the simulator takes for the admissible actions -> the admissible action:
        each thing an action names called by any of its referents ("seed jar" for "jar")."""
        sim = self._sim
        lut = sim.get_all_object_ids_types_referents_LUTJSON()
        alternatives: dict[str, str] = {}
        for combo in sim.get_valid_action_object_combinations_with_templates():
            action = combo["action"]
            variants = {action}
            for object_id in combo["obj_ids"]:
                theirs = self._names.get(str(object_id))
                said = lut.get(str(object_id), {}).get("referents", ()) if theirs else ()
                variants |= {v.replace(str(theirs), ref, 1) for v in variants for ref in said if str(theirs) in v}
            worded = self._worded_as(combo)
            for variant in variants | {worded}:
                alternatives.setdefault(variant, worded)
        return alternatives

    def _worded_as(self, combo: dict[str, Any]) -> str:
        """The combination's action with every thing it names in prag's words: a part "part in
        thing" (`part_first`), a living thing by the words it has in every load (`living_names`)."""
        action = str(combo["action"])
        for object_id in combo["obj_ids"]:
            name = self._names.get(str(object_id))
            if name and (worded := part_first(self._ours.get(str(object_id), name))) != name:
                action = action.replace(name, worded)
        return action

    def _act(self, action: str) -> str:
        # The simulator's own, not the Python wrapper's `step`, which also lists every valid
        # action as text (a third of a step's time) for an `infos` this family does not read.
        text: str = engine.simulator().server.step(action)
        return text

    def _observe(self, text: str) -> Observation:
        sim = self._sim
        combos = sim.get_valid_action_object_combinations_with_templates()
        tree = sim.getObjectTree()
        lut = sim.get_all_object_ids_types_referents_LUTJSON()
        self._names = referents(combos)
        names = self._ours = living_names(self._names, tree, lut)
        doors = door_names(names, lut)
        location, triples = visible(tree, names, sim.server.freeActionLook(), self._focused, doors)
        hidden = _hidden_ids(tree)
        offered = [c for c in combos if not hidden.intersection(str(i) for i in c["obj_ids"])
                   and c["action"] not in _NEVER_OFFERED and c["action"] not in self._refused]
        worded = {self._worded_as(c): str(c["action"]) for c in offered}
        self._said = {ours: theirs for ours, theirs in worded.items() if ours != theirs}
        admissible = sorted(worded)
        score = int(round(100 * sim.server.getScore()))
        won = score >= 100
        return Observation(
            goal=self._goal,
            text=_in_order(text.strip()),
            admissible=admissible,
            scene_triples=triples,
            scene_text=scene_text_from_triples(location, triples),
            won=won,
            done=won or score < 0,
            infos={"score": score, "moves": sim.get_num_moves(), "location": location},
            location=location,
            score=float(score),
        )


def _in_words(action: str, observation: Observation) -> str:
    """`action` as the admissible actions word it: a door named by where it leads ("door to
    hallway") by the name the scene gives the door leading there."""
    if action in observation.admissible:
        return action
    for door, relation, room in observation.scene_triples:
        if relation == "leadsTo":
            for said in (f"door to {room}", f"door to the {room}"):
                worded = action.replace(said, door)
                if said in action and worded in observation.admissible:
                    return worded
    located = _located(action, observation)
    if located and len(set(located.values())) == 1:
        return min(located)  # things of one kind in one place: the gold path tells them no further apart
    return action


def _located(action: str, observation: Observation) -> dict[str, str | None]:
    """The admissible actions -> what holds the thing each names, where `action` says "X in P"
    (or "X on P") and the thing is an X in P: "cherry seed in flower pot 2" is the scene's "cherry
    seed in flower pot" where that is in flower pot 2 (the gold path says where a thing is; the actions
    name it by what holds it, the pot's number left out). A P that is no thing's name ("seed
    jar") is P's kind where the scene says it is ("ceramic cup" isa "seed jar"), else not checked."""
    things = {subject for subject, _, _ in observation.scene_triples}
    where = {s: o for s, r, o in observation.scene_triples if r == "in"}
    kinds = {(s, o) for s, r, o in observation.scene_triples if r == "isa"}
    named_places = things | {kind for _, kind in kinds}
    found: dict[str, str | None] = {}
    for candidate in observation.admissible:
        for thing in things:
            start = candidate.find(thing)
            if start < 0:
                continue
            prefix, suffix = candidate[:start], candidate[start + len(thing):]
            if not (action.startswith(prefix) and action.endswith(suffix)) or len(action) <= len(prefix) + len(suffix):
                continue
            said = action[len(prefix):len(action) - len(suffix)]
            for preposition in (" in ", " on "):
                named, _, place = said.rpartition(preposition)
                is_named = thing == named or thing.startswith(f"{named} ") or (thing, named) in kinds
                in_place = where.get(thing) == place or (where.get(thing), place) in kinds
                if named and is_named and (in_place or place not in named_places):
                    found[candidate] = where.get(thing)
    return found


def _reading(question: str, action: str) -> str:
    """The answer to the simulator's "Ambiguous request": the reading whose things are where
    `action` says ("move cherry seed in seed jar to flower pot 2": the seed the jar holds, not the
    one planted), else the first. A reading says where each thing is: "cherry seed (in seed jar,
    in inventory, ...)"."""
    readings = _READING.findall(question)
    def fits(reading: str) -> int:
        return sum(f" in {holder}" in action for holder in _HOLDER.findall(reading))
    best = max(readings, key=lambda r: fits(r[1]), default=("0", ""))
    return best[0] if fits(best[1]) else "0"


def _in_order(text: str) -> str:
    """A look text with each run of its tab-indented lines (the things listed) sorted."""
    out: list[str] = []
    run: list[str] = []
    for line in text.split("\n") + [""]:
        if line.startswith("\t"):
            run.append(line)
            continue
        out += sorted(run) + [line]
        run = []
    return "\n".join(out[:-1])


def _goal(description: str) -> str:
    text = description.strip()
    return text[len(_TASK_PREFIX):].strip() if text.startswith(_TASK_PREFIX) else text


def _hidden_ids(tree: dict[str, Any]) -> set[str]:
    """The ids of everything inside a closed container, anywhere in the house."""
    hidden: set[str] = set()

    def walk(node: dict[str, Any], inside_closed: bool) -> None:
        for child in node["contents"].values():
            if inside_closed:
                hidden.add(str(child["uuid"]))
            container = child.get("propContainer")
            closed = bool(container) and not container.get("isOpen")
            walk(child, inside_closed or closed)

    walk(tree, False)
    return hidden


@dataclass(frozen=True)
class SciworldTasks:
    """A task set: task variations of one split."""

    chosen: dict[str, tuple[str, int]]  # task_id -> (task name, variation)
    simplifications: str

    def tasks(self) -> list[Task]:
        return [Task(task_id=task_id, task_type=name, seed=variation, ref=f"{name}/{variation}")
                for task_id, (name, variation) in self.chosen.items()]

    def make(self, task: Task) -> SciworldEnv:
        if task.task_id not in self.chosen:
            raise PragError(f"task {task.task_id!r} is not in this ScienceWorld task set")
        name, variation = self.chosen[task.task_id]
        return SciworldEnv(task, name, variation, self.simplifications)


_KEYS = ("tasks", "split", "variations", "seed", "simplifications")


def from_params(params: dict[str, Any], spec_dir: Path) -> SciworldTasks:
    """The family factory: validate `[params]` and choose the task variations."""
    unknown = sorted(set(params) - set(_KEYS))
    if unknown:
        raise SpecError(f"[params]: unknown key(s) {unknown} for env 'sciworld': use {', '.join(_KEYS)}")
    known = task_names()
    tasks = params.get("tasks", "all")
    if tasks == "all":
        tasks = known
    if not isinstance(tasks, list) or not tasks or not all(isinstance(t, str) for t in tasks):
        raise SpecError(f"[params]: 'tasks' must be \"all\" or a list of task names, got {tasks!r}")
    wrong = [t for t in tasks if t not in known]
    if wrong:
        raise SpecError(f"[params]: unknown ScienceWorld task(s) {wrong}: use some of {', '.join(known)}")
    split = params.get("split", "dev")
    if split not in SPLITS:
        raise SpecError(f"[params]: 'split' must be one of {', '.join(SPLITS)}, got {split!r}")
    count, seed = params.get("variations", 1), params.get("seed", 0)
    if count != "all" and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        raise SpecError(f"[params]: 'variations' must be a positive integer or \"all\", got {count!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise SpecError(f"[params]: 'seed' must be an integer, got {seed!r}")
    simplifications = params.get("simplifications", "")
    if isinstance(simplifications, list):
        simplifications = ",".join(simplifications)
    if not isinstance(simplifications, str):
        raise SpecError(f"[params]: 'simplifications' must be a string or a list of strings, got {simplifications!r}")
    engine.require_java()
    chosen: dict[str, tuple[str, int]] = {}
    for name in tasks:
        pool = variations(name, split)
        picked = pool if count == "all" or count >= len(pool) else sorted(random.Random(f"{seed}/{name}").sample(pool, count))
        chosen.update({f"{name}-{v}": (name, v) for v in picked})
    return SciworldTasks(chosen, simplifications)
