"""How retrieved episodes reach the model: a success step by step; a failure as where things were,
what stayed closed and what it kept doing; and, for an attempt at the very same task, where the
goal objects were, said next to the actions."""
from __future__ import annotations

from prag.agent.agent import PragAgent
from prag.agent.asking.prompt import experience_block
from prag.agent.config import AgentConfig
from prag.agent.config import PromptLimits
from prag.envs.base import Observation, Triple, scene_text_from_triples
from prag.envs.domain import ALFWORLD
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.episodes import Experience
from prag.retrieval.index import Hit, Visibility
from prag.store.records import EpisodeRecord, StepRecord

GOAL = "look at keychain under the desklamp."
ROOM = "You are in the middle of a room. You see a safe 1, a sidetable 1, and a fridge 1."


def step(t: int, action: str | None, text: str, at: str, *triples: Triple) -> StepRecord:
    return StepRecord(t, action, text, scene_text_from_triples(at, triples), at, sorted(triples))


def seen(text: str, at: str, *triples: Triple, admissible: tuple[str, ...] = ()) -> Observation:
    return Observation(GOAL, text, list(admissible), list(triples), scene_text_from_triples(at, triples), location=at)


def lost_episode(goal: str = GOAL, room: str = ROOM) -> EpisodeRecord:
    """A failed attempt: it saw the lamp, opened the safe once, looped between two places."""
    steps = [
        step(0, None, room, "middle of room"),
        step(1, "go to sidetable 1", "On the sidetable 1, you see a desklamp 1.", "sidetable 1", ("desklamp 1", "on", "sidetable 1")),
        step(2, "go to fridge 1", "The fridge 1 is closed.", "fridge 1", ("fridge 1", "is", "closed")),
        step(3, "go to safe 1", "The safe 1 is closed.", "safe 1", ("safe 1", "is", "closed")),
        step(4, "open safe 1", "In it, you see a keychain 1.", "safe 1", ("keychain 1", "in", "safe 1"), ("safe 1", "is", "open")),
        step(5, "take keychain 1 from safe 1", "You pick up the keychain 1.", "safe 1", ("agent", "holds", "keychain 1"), ("safe 1", "is", "open")),
        step(6, "go to fridge 1", "The fridge 1 is closed.", "fridge 1", ("agent", "holds", "keychain 1"), ("fridge 1", "is", "closed")),
        step(7, "go to safe 1", "Nothing here.", "safe 1", ("agent", "holds", "keychain 1"), ("safe 1", "is", "open")),
    ]
    return EpisodeRecord("r", 0, "look-1", "look_at_obj_in_light", goal, False, steps, id=7)


def hit(episode: EpisodeRecord) -> Hit:
    return Hit(episode.id, 1.0, 1.0, 0.0, None)


def test_a_failure_is_shown_as_where_things_were_and_what_it_repeated():
    episode = lost_episode()
    block = experience_block([Experience(hit(episode), episode)], PromptLimits(), ALFWORLD)
    assert "FAILURE (goal not reached in 7 steps)" in block
    assert "Where things were: desklamp 1 on sidetable 1; keychain 1 in safe 1." in block
    assert "Never opened: fridge 1." in block
    assert "go to fridge 1 (2), go to safe 1 (2), open safe 1 (1)" in block
    assert "Nothing here." not in block  # a failure's observations are not paid for


def test_a_success_is_shown_step_by_step_what_followed_a_move_left_out():
    episode = lost_episode()
    episode.won = True
    block = experience_block([Experience(hit(episode), episode)], PromptLimits(example_steps=4), ALFWORLD)
    assert "SUCCESS" in block and "> take keychain 1 from safe 1" not in block and "... (3 more steps)" in block
    assert "> go to safe 1\n> open safe 1\nIn it, you see a keychain 1." in block
    assert "The safe 1 is closed." not in block and "Where things were" not in block
    assert ROOM not in block  # nor the first observation, nor the scene the retrieval matched


def test_a_scored_success_is_shown_by_the_steps_that_raised_its_score() -> None:
    from prag.envs.sciworld.domain import SCIWORLD

    steps = [StepRecord(0, None, "hallway", "at: hallway", score=0.0),
             StepRecord(1, "open door to kitchen", "The door is now open.", "s", score=0.0),
             StepRecord(2, "go to kitchen", "You move to the kitchen.", "s", score=8.0),
             StepRecord(3, "look around", "This room is called the kitchen. In it, you see ...", "s", score=8.0),
             StepRecord(4, "focus on apple", "You focus on the apple.", "s", score=100.0)]
    episode = EpisodeRecord("r", 0, "t", "find-plant", "find an apple", True, steps, id=3)
    block = experience_block([Experience(hit(episode), episode)], PromptLimits(), SCIWORLD)
    assert "steps that raised it: go to kitchen (+8), focus on apple (+92)." in block
    assert "open door to kitchen" not in block and "In it, you see" not in block


class OneEpisode:
    """A stand-in experience source that retrieves the same episode every time."""

    k = 1

    def __init__(self, episode: EpisodeRecord) -> None:
        self.episode = episode

    def retrieve(self, goal, scene, visibility, k=None):
        return [Experience(hit(self.episode), self.episode)]


def last_prompt(past: EpisodeRecord, now: Observation) -> str:
    agent = PragAgent(ScriptedLLM(lambda messages: now.admissible[0]), OneEpisode(past), Visibility(), AgentConfig(think=False),
                      domain=ALFWORLD)
    agent.reset(now)
    agent.act(now)
    return agent.settings.llm.calls[-1]["messages"][-1]["content"]


def test_a_past_attempt_at_the_same_task_says_where_the_goal_objects_were():
    start = seen(ROOM, "middle of room", admissible=("go to safe 1",))
    assert "Note: in your past attempts at this same task, desklamp 1 was on sidetable 1; keychain 1 was in safe 1." in last_prompt(lost_episode(), start)
    # Another room, or another goal: its places say nothing about this one.
    other_room = seen(ROOM.replace("safe 1", "safe 2"), "middle of room", admissible=("go to safe 2",))
    assert "past attempts" not in last_prompt(lost_episode(), other_room)
    assert "past attempts" not in last_prompt(lost_episode(goal="look at watch under the desklamp."), start)


def test_closed_places_are_pointed_out_while_the_hands_are_free():
    agent = PragAgent(ScriptedLLM(["go to safe 1"] * 2), None, Visibility(), AgentConfig(think=False), domain=ALFWORLD)
    start = seen(ROOM, "middle of room", admissible=("go to safe 1",))
    agent.reset(start)
    agent.observe("go to fridge 1", seen("The fridge 1 is closed.", "fridge 1", ("fridge 1", "is", "closed")))
    agent.observe("go to safe 1", seen("The safe 1 is closed.", "safe 1", ("safe 1", "is", "closed")))
    agent.observe("open safe 1", seen("In it, you see a keychain 1.", "safe 1", ("safe 1", "is", "open")))
    agent.act(start)
    assert "Note: closed, not opened yet: fridge 1." in agent.settings.llm.calls[-1]["messages"][-1]["content"]
    holding = seen("", "safe 1", ("agent", "holds", "keychain 1"), admissible=("go to safe 1",))
    agent.act(holding)
    assert "not opened yet" not in agent.settings.llm.calls[-1]["messages"][-1]["content"]


def test_past_two_hundred_actions_the_prompt_shows_patterns_over_the_scenes_names() -> None:
    """ScienceWorld's kitchen: thousands of actions become their patterns and the names, whole
    names first ("orange in bowl" is one thing), and the scene graph is grouped by relation."""
    from prag.agent.asking.prompt import PATTERNS_OVER, room_card, step_text
    from prag.envs.sciworld.domain import SCIWORLD

    things = ["metal pot", "sink", "orange in bowl", "cup containing water", "stove", "table", "counter",
              "apple", "banana", "potato", "thermometer", "lighter", "oven", "freezer", "fridge"]
    admissible = ([f"move {a} to {b}" for a in things for b in things if a != b]
                  + [f"focus on {a}" for a in things] + ["open fridge", "open oven", "look around"])
    assert len(admissible) > PATTERNS_OVER
    triples = [(t, "in", "kitchen") for t in things] + [("fridge", "is", "closed"), ("oven", "is", "closed")]
    text = room_card("kitchen", triples, admissible, SCIWORLD)
    assert "move OBJ to OBJ" in text and "open: fridge, oven" in text and "orange in bowl" in text
    assert "in kitchen: metal pot, sink, orange in bowl" in text and "is closed: fridge, oven" in text
    assert len(text) < len("; ".join(admissible)) / 4
    few = step_text("at: kitchen", admissible[:20], [], SCIWORLD)
    assert "OBJ" not in few and "move: metal pot to sink" in few  # below the threshold: every action


def test_past_two_hundred_actions_the_prompt_only_grows_with_a_card_per_room() -> None:
    """With room cards each step's prompt extends the last one (the prefix cache covers all but
    the new step), a room's card is shown where it was entered, a room entered again as it was
    left says so in a line, patterns shown once are named by their verb after, and the history
    is shown whole until it is too long, then from a multiple of the window."""
    from prag.agent.asking.prompt import RoomCards, messages
    from prag.agent.config import PromptLimits
    from prag.envs.sciworld.domain import SCIWORLD

    def room(name: str) -> tuple[list[tuple[str, str, str]], list[str]]:
        things = [f"{name} thing {i}" for i in range(16)]
        return ([(t, "in", name) for t in things],
                [f"move {a} to {b}" for a in things for b in things if a != b] + [f"go to {name} door"])

    limits, cards = PromptLimits(history_window=4, history_chars=4000), RoomCards()
    history: list[tuple[str | None, str]] = [(None, "This room is called the kitchen.")]
    walk = ["kitchen", "kitchen", "hallway", "hallway", "kitchen", "kitchen", "hallway"] + ["hallway"] * 40
    contents = []
    for t, where in enumerate(walk):
        triples, admissible = room(where)
        cards.see(len(history) - 1, where, triples, admissible, SCIWORLD)
        prompt = messages(SCIWORLD, [], "find a living thing", history, f"at: {where}", admissible, [], limits, cards=cards)
        contents.append(prompt[-1]["content"])
        history.append((f"move {where} thing 0 to {where} thing {t + 1}", f"You move it, step {t} of a long walk."))
    assert [card.at for card in cards.cards] == [0, 2, 4, 6]  # a card where each room was entered
    assert all(later.startswith(earlier) for earlier, later in zip(contents[:30], contents[1:30]))
    assert contents[3].count("Scene graph now") == 2 and contents[3].count("move OBJ to OBJ") == 1
    assert "as above: move" in contents[3]  # the hallway's card names the kitchen's pattern by its verb
    assert "Back in the kitchen: the scene graph is as its card above shows." in contents[5]
    assert contents[6].count("Scene graph now") == 2  # and back in the hallway: a line, not a card
    # Too long: shown from a multiple of the window, with the card in force there shown again.
    assert "earlier steps not shown.)" in contents[-1] and "step 0 of" not in contents[-1]
    start = int(contents[-1].split("(")[1].split(" ")[0])
    assert start % 4 == 0 and contents[-1].count("in hallway: hallway thing 0") == 1
    assert len(contents[-1]) <= 4000


def test_a_scored_failure_shows_the_steps_that_raised_its_score_and_the_one_that_failed_it() -> None:
    from prag.agent.asking.prompt import _failure_summary
    from prag.envs.sciworld.domain import SCIWORLD
    from prag.store.records import EpisodeRecord, StepRecord

    kitchen = [("chair", "in", "kitchen"), ("red box", "in", "kitchen"), ("cup", "in", "kitchen")]
    steps = [StepRecord(0, None, "hallway", "at: hallway", score=0.0),
             StepRecord(1, "open door to kitchen", "The door is now open.", "s", score=8.0),
             StepRecord(2, "look around", "...", "s", score=8.0),
             StepRecord(3, "go to kitchen", "You move to the kitchen.", "s", "kitchen", kitchen, score=25.0),
             StepRecord(4, "look around", "...", "s", "kitchen", kitchen, score=25.0),
             StepRecord(5, "pick up cup", "...", "s", "kitchen", kitchen, score=25.0),
             StepRecord(6, "focus on chair", "You focus on the chair.", "s", score=-100.0)]
    episode = EpisodeRecord("r", 0, "t", "find-non-living-thing", "find a non-living thing, put it in the red box",
                            False, steps)
    text = "\n".join(_failure_summary(episode, [s for s in steps if s.action], SCIWORLD))
    assert "Score 0 of 100 at the end (best 25); steps that raised it: open door to kitchen (+8), go to kitchen (+17)." in text
    assert "It failed the task at once with: focus on chair." in text
    # Beside the steps that raised the score, only where the goal's things were: hundreds of
    # things and one-off actions would make an episode thousands of tokens.
    assert "Where things were: red box in kitchen." in text
    assert "look around" not in text and "pick up cup" not in text
    assert episode.score == 0.0  # a failed task counts 0


def test_a_success_with_sub_goals_is_shown_by_the_steps_that_met_them() -> None:
    from dataclasses import replace

    from prag.store.episode_extra import EpisodeExtra, SubGoal

    episode = lost_episode()
    episode.won = True
    episode.extra = replace(EpisodeExtra(), subgoals=[SubGoal("open safe 1", 4, "taken"), SubGoal("take keychain 1", 5, "taken"),
                                                      SubGoal("go to desk 1")])
    block = experience_block([Experience(hit(episode), episode)], PromptLimits(), ALFWORLD)
    assert ("Sub-goals met, with the step that met each: open safe 1 (step 4: open safe 1); "
            "take keychain 1 (step 5: take keychain 1 from safe 1).") in block
    assert "go to fridge 1" not in block and "go to desk 1" not in block


def test_a_note_said_once_stands_in_the_history_where_it_was_said() -> None:
    """A model that does the same thing over and over gets a warning; said again every step at
    the end, the warnings grew to 400 tokens read again every call. Each is said once, at the
    end, and from the next call on stands in the history where it was said: every prompt
    extends the one before it."""
    from prag.envs.sciworld.domain import SCIWORLD

    things = [f"thing {i}" for i in range(16)]
    admissible = [f"move {a} to {b}" for a in things for b in things if a != b] + ["wait"]
    triples = [(t, "in", "kitchen") for t in things]

    def kitchen(text: str) -> Observation:
        return Observation("find a living thing", text, admissible, triples, scene_text_from_triples("kitchen", triples),
                           location="kitchen")

    llm = ScriptedLLM(lambda messages: "wait")
    agent = PragAgent(llm, None, Visibility(), AgentConfig(think=False), domain=SCIWORLD)
    agent.reset(kitchen("This room is called the kitchen."))
    for _ in range(5):
        decision = agent.act(kitchen("You wait."))
        agent.observe(decision.action, kitchen("You wait."))
    contents = [call["messages"][-1]["content"] for call in llm.calls if len(call["messages"]) == 2]
    warning = "Warning: you did 'wait' 2 times and nothing changed; do something else."
    said = next(n for n, content in enumerate(contents) if warning in content)
    assert contents[said].endswith(warning)
    assert all(content.count(warning) == 1 for content in contents[said:])
    assert all(later.startswith(earlier) for earlier, later in zip(contents, contents[1:]))
