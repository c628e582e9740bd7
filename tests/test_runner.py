"""Runner semantics with a scripted stand-in LLM on the real grid world (no model needed).

The stand-in plays each task's solver plan (or a fixed wrong answer), so the tests check
what the runner does with the store: progressive visibility, train -> test with a frozen
store, resume after a real kill, re-asks, and that success is the environment's `won`.
"""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from conftest import held_cli, plan_follower, plans_of, signal_when_stored, write_spec
from support import minilm

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.envs.domain import ALFWORLD, GRID
from prag.envs.spec import load_spec
from prag.errors import PragError
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.run.config import ExperimentConfig, RetrievalConfig, RunConfig
from prag.run.runner import Runner, play_episode, resume_config, start_run
from prag.store import Store


def make_runner(store: Store, config: RunConfig, llm) -> Runner:
    run = start_run(store, config)
    return Runner(store, run, config, llm=llm, encoder=minilm())


def run_config(spec: str, rounds: int = 1, k: int = 0, mode: str = "none", **experiment) -> RunConfig:
    return RunConfig(ExperimentConfig(spec=spec, rounds=rounds, **experiment), RetrievalConfig(mode=mode, k=k))


def test_rounds_retrieve_only_from_earlier_rounds(tmp_path):
    spec = write_spec(tmp_path, "two", ["throw_away_trash", "collect_toys"])
    llm = ScriptedLLM(plan_follower(plans_of(spec)))
    with Store(tmp_path / "s.db") as store:
        runner = make_runner(store, run_config(spec, rounds=3, k=2, mode="prag"), llm)
        runner.play()
        episodes = list(store.episodes(runner.run.id))
        assert [(e.round, e.won) for e in episodes] == [(r, True) for r in range(3) for _ in range(2)]
        by_id = {e.id: e for e in episodes}
        for e in episodes:
            retrieved = [by_id[i] for i in e.extra.retrieved]
            assert all(r.round < e.round for r in retrieved)
            assert len(retrieved) == min(2, 2 * e.round)
        # Round 0 prompts carry no experience block; round 1 prompts do.
        round0_calls = llm.calls[: sum(e.n_actions for e in episodes if e.round == 0)]
        assert not any("Past attempts" in m["content"] for call in round0_calls for m in call["messages"])
        assert any("Past attempts" in m["content"] for m in llm.calls[-1]["messages"])
        assert store.run(runner.run.id).status == "finished"


def test_train_then_test_freezes_the_store(tmp_path):
    train = write_spec(tmp_path, "train", ["throw_away_trash"], per_task=2)
    test = write_spec(tmp_path, "test", ["throw_away_trash"], per_task=2, seed=10)
    plans = plans_of(train) | plans_of(test)
    with Store(tmp_path / "s.db") as store:
        runner = make_runner(store, run_config(test, train=train, rounds=2, k=3, mode="goal"), ScriptedLLM(plan_follower(plans)))
        runner.play()
        episodes = list(store.episodes(runner.run.id))
        assert [(e.round, e.extra.spec) for e in episodes] == [(0, "train")] * 2 + [(1, "train")] * 2 + [(2, "test")] * 2
        test_ids = {e.id for e in episodes if e.round == 2}
        for e in episodes[4:]:
            assert e.extra.retrieved and not set(e.extra.retrieved) & test_ids


def test_a_lost_episode_is_stored_as_lost_at_the_step_cap(tmp_path):
    spec = write_spec(tmp_path, "cap", ["collect_toys"], max_steps=5)
    plans = plans_of(spec)
    with Store(tmp_path / "s.db") as store:
        llm = ScriptedLLM(plan_follower(plans, spoil=set(plans)))
        runner = make_runner(store, run_config(spec), llm)
        runner.play()
        (episode,) = store.episodes(runner.run.id)
        assert not episode.won and episode.n_actions == 5
        # Each step: the invalid answer, re-asked twice, then sent as it is (never mapped).
        assert episode.reasks == 2 * 5 and episode.extra.invalid_actions == 5
        assert {s.action for s in episode.steps[1:]} == {"look around the room"}
        assert len(llm.calls) == 3 * 5


def test_an_invalid_answer_is_reasked_with_the_error(tmp_path):
    spec = write_spec(tmp_path, "reask", ["throw_away_trash"])
    source = load_spec(spec).open()
    env = source.make(source.tasks()[0])
    first = env.reset()
    plan = env.oracle_plan()
    answers = ["Action: fly to the moon", plan[0]]
    llm = ScriptedLLM(answers)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(think=False), domain=GRID)
    agent.reset(first)
    decision = agent.act(first)
    assert decision.action == plan[0] and decision.valid and agent.llm_step.usage.reasks == 1
    assert "'Action: fly to the moon' is not an admissible action" in llm.calls[1]["messages"][-1]["content"]


def test_repeating_an_action_that_changes_nothing_is_pointed_out_then_banned(tmp_path):
    spec = write_spec(tmp_path, "loop", ["throw_away_trash"], max_steps=8)
    source = load_spec(spec).open()
    env = source.make(source.tasks()[0])
    first = env.reset()
    a, b = [action for action in first.admissible if action.startswith("go to")][:2]

    def shuttle(messages):  # back and forth between two places, the loop small models fall into
        task = next(m["content"] for m in reversed(messages) if m["content"].startswith("Your goal"))
        return (a, b)[sum(line.startswith("> ") for line in task.split("\n")) % 2]

    llm = ScriptedLLM(shuttle)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(think=False, loop_limit=3), domain=GRID)
    steps, won, trace = play_episode(env, agent)
    prompts = [call["messages"][-1]["content"] for call in llm.calls]
    assert not any("Warning" in p for p in prompts[:3])
    assert f"Warning: you did '{a}' 2 times and nothing changed" in prompts[4]
    # After the third identical visit the action is out of the choices: the stand-in's answer
    # is then not admissible and gets re-asked.
    assert len(steps) == 9 and trace.usage.banned_actions > 0 and trace.usage.reasks > 0
    last_list = [p for p in prompts if "Admissible actions: " in p][-1].split("Admissible actions: ")[1].split("\n")[0]
    go_to = last_list.split(";")[0]
    assert go_to.startswith("go to") and a.removeprefix("go to ") not in go_to and b.removeprefix("go to ") not in go_to
    assert not won


def test_resume_after_a_real_kill_plays_each_task_once_per_round(tmp_path):
    spec = write_spec(tmp_path, "kill", ["throw_away_trash", "collect_toys"], per_task=2)
    db = tmp_path / "s.db"
    # The stand-in stops answering once 5 episodes are stored: the kill lands in round 1, after
    # round 0's four episodes and one of round 1's, whatever the machine's speed.
    script = held_cli(tmp_path, spec, db, episodes=5)
    args = ["run", spec, "--store", str(db), "--rounds", "2", "--k", "2", "--name", "victim", "--no-prior"]
    process = subprocess.Popen([sys.executable, str(script), *args], cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    signal_when_stored(process, db, 5, signal.SIGKILL)
    with Store(db) as store:
        assert [e.round for e in store.episodes("victim")] == [0, 0, 0, 0, 1]
        assert store.run("victim").status == "running"  # a crash leaves it as it was
        run, resumed = resume_config(store, "victim")
        Runner(store, run, resumed, llm=ScriptedLLM(plan_follower(plans_of(spec))), encoder=minilm()).play()
        keys = [(e.round, e.task_id) for e in store.episodes("victim")]
        assert len(keys) == len(set(keys)) == 2 * 4
        assert store.run("victim").status == "finished"
        with pytest.raises(PragError, match="finished"):
            resume_config(store, "victim")


def test_an_action_taken_from_the_same_state_is_not_offered_there_again():
    from prag.envs.base import Observation

    goal = "put some newspaper on ottoman."
    here = Observation(goal, "You arrive at safe 1. The safe 1 is closed.", ["go to shelf 1", "go to ottoman 1", "open safe 1"], [], "at: safe 1")
    shelf = Observation(goal, "You arrive at shelf 1.", ["go to safe 1", "go to ottoman 1"], [], "at: shelf 1")
    agent = PragAgent(ScriptedLLM(lambda messages: "open safe 1"), None, Visibility(), AgentConfig(think=False), domain=ALFWORLD)
    agent.reset(here)
    agent.observe("go to shelf 1", shelf)
    agent.observe("go to safe 1", here)
    agent.act(here)
    assert offered(agent.settings.llm) == "go to ottoman 1; open safe 1"  # shelf 1 was left for from here
    # Holding something is another state: going to the shelf is new from there.
    holding = Observation(goal, here.text, here.admissible, [("agent", "holds", "newspaper 1")], "at: safe 1\nagent holds newspaper 1")
    agent.act(holding)
    assert offered(agent.settings.llm) == "go to: shelf 1, ottoman 1; open safe 1"
    # Every choice tried from here: the least tried ones stay, so the ban still steers.
    for action in ["go to ottoman 1", "open safe 1"]:
        agent.observe(action, shelf)
        agent.observe("go to safe 1", here)
    agent.observe("go to shelf 1", shelf)
    agent.observe("go to safe 1", here)
    agent.act(here)
    assert offered(agent.settings.llm) == "go to ottoman 1; open safe 1"


def test_the_spec_action_filter_hides_actions_from_the_planner(tmp_path):
    spec = write_spec(tmp_path, "hide", ["throw_away_trash"], max_steps=1, hide=["go to door"])
    assert load_spec(spec).hide_actions == ("go to door",)
    llm = ScriptedLLM(lambda messages: "look around the room")
    with Store(tmp_path / "s.db") as store:
        make_runner(store, run_config(spec), llm).play()
    offered = llm.calls[0]["messages"][-1]["content"].split("Admissible actions: ")[1].split("\n")[0]
    assert "door" not in offered and "bin 1" in offered


def test_the_agent_notes_where_goal_objects_were_seen():
    from prag.envs.base import Observation

    agent = PragAgent(ScriptedLLM(["go to shelf 1"]), None, Visibility(), AgentConfig(think=False), domain=ALFWORLD)
    start = Observation("put some newspaper on ottoman.", "You see a cabinet 1, a ottoman 1, and a shelf 1.", ["go to shelf 1"], [], "")
    agent.reset(start)
    agent.observe("go to shelf 1", Observation(start.goal, "On the shelf 1, you see a book 1, and a newspaper 1.", [],
                                               [("book 1", "on", "shelf 1"), ("newspaper 1", "on", "shelf 1")], ""))
    agent.observe("go to cabinet 1", Observation(start.goal, "The cabinet 1 is closed.", [], [], ""))
    agent.act(start)
    assert "Note: seen so far: newspaper 1 at shelf 1." in agent.settings.llm.calls[0]["messages"][-1]["content"]


def test_the_goal_object_note_leaves_out_what_the_agent_holds():
    from prag.envs.base import Observation

    agent = PragAgent(ScriptedLLM(["go to ottoman 1"]), None, Visibility(), AgentConfig(think=False), domain=ALFWORLD)
    start = Observation("put some newspaper on ottoman.", "You see a ottoman 1, and a shelf 1.", ["go to ottoman 1"], [], "")
    agent.reset(start)
    agent.observe("go to shelf 1", Observation(start.goal, "On the shelf 1, you see a newspaper 1.", [], [("newspaper 1", "on", "shelf 1")], ""))
    holding = Observation(start.goal, "You pick up the newspaper 1 from the shelf 1.", ["go to ottoman 1"],
                          [("agent", "holds", "newspaper 1")], "agent holds newspaper 1")
    agent.observe("take newspaper 1 from shelf 1", holding)
    agent.act(holding)
    assert "seen so far" not in agent.settings.llm.calls[0]["messages"][-1]["content"]


def test_the_example_block_changes_only_for_clearly_better_examples():
    from prag.agent.asking.llm_step import stable_top

    def top(shown, ranked, k=2):
        return stable_top(shown, ranked, k, lambda item: item[0], lambda item: item[1], 0.1)

    shown = [("a", 1.50), ("b", 1.40)]
    # c edges past b by less than the margin: the block (and its cached tokens) stays as shown.
    assert top(shown, [("a", 1.52), ("c", 1.45), ("b", 1.38)]) == shown
    # c beats b by more than the margin: b's place goes to c, a keeps its place and text.
    assert top(shown, [("c", 1.70), ("a", 1.51), ("b", 1.20)]) == [("a", 1.50), ("c", 1.70)]
    # A shown item no longer ranked at all is dropped; the first prompt takes the top k.
    assert top(shown, [("d", 1.9), ("e", 1.8), ("a", 1.2)]) == [("d", 1.9), ("e", 1.8)]
    assert top([], [("d", 1.9), ("e", 1.8), ("a", 1.2)]) == [("d", 1.9), ("e", 1.8)]


def test_corrections_are_retrieved_again_only_when_the_person_says_something():
    from prag.envs.base import Observation

    class CountingCorrections:
        """A stand-in corrections source that records the instructions it is asked about."""

        k = 1

        def __init__(self):
            self.asked = []

        def retrieve(self, instructions, scene, k=None):
            self.asked.append(list(instructions))
            return []

    corrections = CountingCorrections()
    agent = PragAgent(ScriptedLLM(["go to shelf 1"] * 4), None, Visibility(), AgentConfig(think=False), corrections=corrections, domain=ALFWORLD)
    start = Observation("put some newspaper on ottoman.", "You see a shelf 1.", ["go to shelf 1"], [], "at: middle of room")
    agent.reset(start)
    agent.act(start)
    agent.observe("go to shelf 1", Observation(start.goal, "On the shelf 1, you see nothing.", [], [], "at: shelf 1"))
    agent.act(start)
    agent.hear("the newspaper is in the drawer")
    agent.act(start)
    agent.act(start)
    assert corrections.asked == [[start.goal], [start.goal, "the newspaper is in the drawer"]]


def test_a_run_can_start_from_another_runs_round_0(tmp_path):
    spec = write_spec(tmp_path, "branch", ["throw_away_trash", "collect_toys"])
    plans = plans_of(spec)
    with Store(tmp_path / "s.db") as store:
        first = make_runner(store, run_config(spec, rounds=1, k=2, mode="prag"), ScriptedLLM(plan_follower(plans)))
        first.play()
        llm = ScriptedLLM(plan_follower(plans))
        branch = make_runner(store, run_config(spec, rounds=2, k=2, mode="goal", round0_from=first.run.id), llm)
        branch.play()
        original = {e.task_id: e for e in store.episodes(first.run.id)}
        episodes = list(store.episodes(branch.run.id))
        assert [e.round for e in episodes] == [0, 0, 1, 1]
        for copy in episodes[:2]:
            assert copy.extra.copied_from == original[copy.task_id].id
            assert [s.action for s in copy.steps] == [s.action for s in original[copy.task_id].steps]
        # Round 0 was not played again, and round 1 retrieved the copies, not the originals.
        assert len(llm.calls) == sum(e.n_actions for e in episodes[2:])
        copies = {e.id for e in episodes[:2]}
        assert all(set(e.extra.retrieved) <= copies for e in episodes[2:])
        with pytest.raises(PragError, match="experiment.max_steps"):
            start_run(store, run_config(spec, rounds=2, max_steps=3, round0_from=first.run.id))


def offered(llm) -> str:
    """The admissible actions the last prompt offered."""
    return llm.calls[-1]["messages"][-1]["content"].split("Admissible actions: ")[1].split("\n")[0]


def test_the_agent_is_not_offered_to_undo_its_last_action():
    from prag.envs.base import Observation

    llm = ScriptedLLM(["go to ottoman 1"] * 2)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(think=False), domain=ALFWORLD)
    start = Observation("put some newspaper on ottoman.", "You see a ottoman 1, and a shelf 1.", [], [], "")
    agent.reset(start)
    agent.observe("take newspaper 1 from shelf 1", Observation(start.goal, "You pick up the newspaper 1 from the shelf 1.", [], [], ""))
    agent.act(Observation(start.goal, "", ["go to ottoman 1", "move newspaper 1 to shelf 1", "take book 1 from shelf 1"], [], ""))
    assert offered(llm) == "go to ottoman 1; take book 1 from shelf 1"
    agent.observe("open drawer 1", Observation(start.goal, "You open the drawer 1.", [], [], ""))
    agent.act(Observation(start.goal, "", ["close drawer 1", "go to ottoman 1"], [], ""))
    assert offered(llm) == "go to ottoman 1"


def test_answers_in_the_prompts_folded_form_are_the_action_they_name():
    from prag.agent.asking.llm_step import normalise

    assert normalise("go to: shelf 1") == normalise("go to shelf 1") == "go to shelf 1"
    assert normalise("take: apple 1 from fridge 1") == "take apple 1 from fridge 1"
    # Only our own notation is undone: other answers stay what they are, and are re-asked.
    assert normalise("go to shelf") == "go to shelf"
    assert normalise("Action: open drawer 1.") == "open drawer 1"
