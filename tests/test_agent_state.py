"""The episode's state as one record (prag.agent.world.state): one step per observation, with who chose it."""
from prag.agent.protocol import Decision
from prag.agent.world.state import EpisodeState
from prag.envs.base import Observation
from prag.envs.domain import ALFWORLD
from prag.sources import StepSource


def seen(text: str, location: str) -> Observation:
    return Observation(text=text, goal="put a mug in the sink", admissible=["look"], scene_text=f"at {location}",
                       scene_triples=[("agent", "at", location)], location=location)


def test_steps_record_actions_observations_places_and_who_chose_them():
    state = EpisodeState.start(seen("You are in a kitchen.", "kitchen"), ALFWORLD, "put a mug in the sink")
    state.decided(Decision("go to sink 1", source=StepSource.SEARCH))
    state.add("go to sink 1", seen("You arrive at sink 1.", "sink 1"))
    state.add("look", seen("You arrive at sink 1.", "sink 1"))  # not the agent's decision: no source
    assert state.history == [(None, "You are in a kitchen."), ("go to sink 1", "You arrive at sink 1."),
                             ("look", "You arrive at sink 1.")]
    assert state.locations == ["kitchen", "sink 1", "sink 1"]
    assert [step.source for step in state.steps] == [None, StepSource.SEARCH, None]
    assert state.graphs[1] == [("agent", "at", "sink 1")]
    assert not state.last_changed and state.tried[("You arrive at sink 1.", "at sink 1", "look")] == 1
