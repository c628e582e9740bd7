"""What another variation of a task teaches this one: its progress, re-worded to this goal
(prag.agent.sources.past_episodes.progress_elsewhere), and what its instructions name (prag.agent.skills.instructed.verified_focuses)."""
from __future__ import annotations

from prag.agent.plans import reword, reworded
from prag.agent.proposal import Proposal, Standing, View
from prag.agent.skills.instructed import Instructed, verified_focuses
from prag.agent.sources.arbiter import Arbiter
from prag.agent.sources.past_episodes import ELSEWHERE, ThisTask, candidates, proposed
from prag.envs.base import Observation
from prag.envs.sciworld.domain import SCIWORLD
from prag.retrieval.episodes import Experience
from prag.store.records import EpisodeRecord, StepRecord

FIND = "Your task is to find a(n) living thing. First, focus on the thing. Then, move it to the {} box in the {}."
BOIL = ("Your task is to {} {}. For compounds without a boiling point, combusting the substance is also "
        "acceptable. First, focus on the substance. Then, take actions that will cause it to change its state of matter.")


def test_goals_of_one_template_bind_the_things_they_name_and_nothing_else() -> None:
    seen = "in kitchen: red box, sink\nin hallway: door to kitchen\nwater in sink"
    binding = reworded(FIND.format("red", "kitchen"), FIND.format("orange", "living room"), seen)
    assert binding == {"red": "orange", "kitchen": "living room"}
    assert reword("move egg to red box", binding) == "move egg to orange box"
    assert reword("go to kitchen", binding) == "go to living room"
    assert reword("open redwood door", binding) == "open redwood door"  # whole words only
    assert reworded(BOIL.format("boil", "water"), BOIL.format("boil", "lead"), seen) == {"water": "lead"}
    # Another verb is another task, not another thing: "boil" names nothing the episode saw.
    assert reworded(BOIL.format("boil", "water"), BOIL.format("melt", "water"), seen) is None
    assert reworded(BOIL.format("boil", "water"), BOIL.format("melt", "lead"), seen) is None  # one thing, one task
    # A trait no scene says, where the goals differ in more things the episode saw: one template.
    trait = ("Your task is to determine whether {} size is a dominant or recessive trait in the unknown {} plant. "
             "If the trait is dominant, focus on the {} box. If the trait is recessive, focus on the {} box.")
    plants = "unknown e plant in flower pot 1\nred box, green box"
    assert reworded(trait.format("small flower", "E", "red", "green"), trait.format("large leaf", "D", "green", "blue"),
                    plants) == {"small flower": "large leaf", "e": "d", "red": "green", "green": "blue"}
    assert reworded(trait.format("small flower", "E", "red", "green"), trait.format("large leaf", "E", "red", "blue"),
                    plants) is None  # the trait and one box: no more seen than unseen
    # A word added, or a goal of another template, is no binding at all.
    assert reworded("put a clean apple in fridge", "put a hot potato on countertop", "apple fridge") is None
    assert reworded(FIND.format("red", "kitchen"), FIND.format("red", "kitchen") + " Quickly.", seen) is None


def _step(t: int, action: str | None, score: float, room: str, scene: str = "") -> StepRecord:
    return StepRecord(t, action, "...", scene or f"at: {room}", room, [("door to kitchen", "is", "open")], score)


def _boil_water() -> EpisodeRecord:
    steps = [_step(0, None, 0, "hallway", "at: hallway\nwater in sink"), _step(1, "look around", 0, "hallway"),
             _step(2, "go to kitchen", 5, "kitchen"), _step(3, "focus on water", 40, "kitchen"),
             _step(4, "focus on blue box", 60, "kitchen"), _step(5, "look around", 60, "kitchen")]
    return EpisodeRecord("r", 0, "boil-1", "boil", BOIL.format("boil", "water"), False, steps, id=7)


def at_foundry(goal: str) -> ThisTask:
    return ThisTask(goal, "at: foundry", ("foundry", frozenset()), SCIWORLD)


def test_another_variations_progress_is_re_worded_and_stops_before_a_focus_this_goal_does_not_name() -> None:
    lead = BOIL.format("boil", "lead")
    offered = candidates(at_foundry(lead), [Experience(None, _boil_water())], [])  # type: ignore[arg-type]
    assert [(c.rank, c.plan.steps, c.score) for c in offered] == [
        (ELSEWHERE, ("go to kitchen", "focus on lead"), 60)]  # "focus on blue box" is no target of "boil lead"
    # Another task ("melt water") takes nothing from it.
    assert candidates(at_foundry(BOIL.format("melt", "water")), [Experience(None, _boil_water())], []) == []  # type: ignore[arg-type]


def test_another_variations_progress_is_adopted_only_where_its_first_step_can_be_taken() -> None:
    lead = BOIL.format("boil", "lead")
    offered = candidates(at_foundry(lead), [Experience(None, _boil_water())], [])  # type: ignore[arg-type]
    arbiter = Arbiter(SCIWORLD, [Replayed(proposed(offered))], Replayed(Proposal()))
    arbiter.consult(seen(["open door to outside", "look around"]))
    assert arbiter.plan is None  # it started in another room
    arbiter.consult(seen(["go to kitchen", "look around"]))
    assert arbiter.plan is not None and arbiter.step_now(["go to kitchen"]) == "go to kitchen"


class Replayed:
    """A scripted proven source: proposes what experience proposed, every step."""

    standing = Standing.PROVEN

    def __init__(self, proposal: Proposal) -> None:
        self.proposal = proposal

    def propose(self, view: View) -> Proposal:
        return self.proposal

    def restart(self) -> None:
        pass


def seen(admissible: list[str]) -> Observation:
    return Observation(BOIL.format("boil", "lead"), "This room is called the foundry.", admissible, [], "at: foundry")


def test_a_focus_that_scored_in_another_variation_says_what_the_substance_is_here() -> None:
    """"First, focus on the substance": in "boil water" a focus on water raised the score, so in
    "boil lead" the substance is lead; the focus on the blue box that scored after it is no
    instruction of this goal and is not read."""
    lead = BOIL.format("boil", "lead")
    episodes = [Experience(None, _boil_water())]  # type: ignore[arg-type]
    assert verified_focuses(lead, episodes, SCIWORLD) == ["lead"]
    instructed = Instructed("Your task is to boil the substance lead. First, focus on the substance.", SCIWORLD)
    assert instructed.next == "substance"  # a word of the task's own clause: the words alone name no thing here
    instructed.heed(verified_focuses(lead, episodes, SCIWORLD))
    assert instructed.next == "lead"
    # Another task's episode ("melt water") reads nothing for it, nor an episode that never scored a focus.
    assert verified_focuses(BOIL.format("melt", "water"), episodes, SCIWORLD) == []
    unscored = _boil_water()
    unscored.steps[3] = _step(3, "focus on water", 5, "kitchen")
    assert verified_focuses(lead, [Experience(None, unscored)], SCIWORLD) == []  # type: ignore[arg-type]
