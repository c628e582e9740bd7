"""`prag console`: a person watches the agent on the real grid world, speaks to it mid-episode
(the words reach the prompt and the stored episode), and `learn` turns feedback into a stored
correction. The agent and the improvement LLM are scripted stand-ins; the person is stdin."""
from __future__ import annotations

import io
import signal

import pytest
from conftest import (
    ADVICE,
    PROBLEM,
    plan_follower,
    plan_transcript,
    plans_of,
    stop_at_first_llm_call,
    write_spec,
)
from rich.console import Console
from support import minilm
from typer.testing import CliRunner

from prag.cli import _register, app, common
from prag.cli.console_cmd import ConsolePerson, ConsoleSession
from prag.llm.scripted import ScriptedLLM
from prag.run.config import ExperimentConfig, RetrievalConfig, RunConfig
from prag.store import Store
from prag.store.episode_extra import Effort

_register()


@pytest.fixture(scope="module")
def dishes(tmp_path_factory):
    directory = tmp_path_factory.mktemp("console")
    spec = write_spec(directory, "dishes", ["wash_dishes"], max_steps=3)
    (goal, plan), = plans_of(spec).items()
    return spec, goal, plan


def session(store, spec, lines, agent, improver, confirm=False, prompts=None):
    """A console session reading `lines`; the prompts shown go to `prompts` when given."""
    script = iter(lines)
    out = Console(file=io.StringIO(), width=200)
    config = RunConfig(ExperimentConfig(spec=spec, rounds=1), RetrievalConfig(prior=False))

    def read_line(prompt):
        if prompts is not None:
            prompts.append(prompt)
        return next(script, None)

    s = ConsoleSession(store, config, 0, llm=agent, encoder=minilm(), improver=improver,
                       read_line=read_line, out=out, confirm=confirm)
    return s, out


def test_the_person_speaks_mid_episode_then_teaches_with_learn(dishes, tmp_path):
    spec, goal, plan = dishes
    agent = ScriptedLLM(plan_follower({goal: plan}))
    improver = ScriptedLLM([PROBLEM, ADVICE, plan_transcript(goal, plan)])
    lines = ["", "the plate is dirty: wash it at the sink", "", "", "you stopped too early", "learn"]
    with Store(tmp_path / "s.db") as store:
        s, out = session(store, spec, lines, agent, improver)
        outcome = s.run()
        (episode,) = [e for e in store.episodes() if e.run_id.startswith("console-dishes")]
        assert not episode.won and episode.n_actions == 3  # the spec's step cap
        assert episode.extra.utterances == [(1, "the plate is dirty: wash it at the sink")]
        # The agent's next prompt carries what the person said.
        assert 'The person says: "the plate is dirty: wash it at the sink"' in agent.calls[1]["messages"][-1]["content"]
        assert "the plate is dirty" not in agent.calls[0]["messages"][-1]["content"]
        (stored,) = store.corrections.list()
        assert outcome.stored == stored and stored.verified and stored.source_episode == episode.id
        assert stored.feedback == "you stopped too early"
        given = stored.input_transcript
        assert given.index("the plate is dirty") < given.index("you stopped too early") < given.index(">>> learn_from_interaction()")
    text = out.file.getvalue()
    assert f'>>> act("{plan[0]}")' in text and "'text': 'the plate is dirty: wash it at the sink'" in text
    assert "not won after 3 actions" in text and "stored verified correction" in text


def test_learn_mid_episode_follows_the_persons_words_and_a_late_learn_is_refused(dishes, tmp_path):
    spec, goal, plan = dishes
    with Store(tmp_path / "s.db") as store:
        improver = ScriptedLLM([PROBLEM, ADVICE, plan_transcript(goal, plan)])
        s, _ = session(store, spec, ["", "open the door first", "learn"], ScriptedLLM(plan_follower({goal: plan})), improver)
        outcome = s.run()
        assert outcome.stored is not None and outcome.stored.feedback == ""
        assert outcome.stored.input_transcript.endswith("'open the door first'}\n>>> learn_from_interaction()\n")
        # `learn` with no words from the person right before it: nothing is learnt, nothing asked.
        late = ScriptedLLM([])
        s, _ = session(store, spec, ["", "", "", "learn"], ScriptedLLM(plan_follower({goal: plan})), late)
        outcome = s.run()
        assert outcome.stored is None and "right after a person's utterance" in outcome.message
        assert late.calls == [] and len(store.corrections.list()) == 1
        # `quit` ends the episode at once, without learning.
        s, _ = session(store, spec, ["", "quit"], ScriptedLLM(plan_follower({goal: plan})), late)
        assert s.run() is None
        assert store.episode(max(e.id for e in store.episodes())).n_actions == 1


def test_prag_console_reads_the_person_from_stdin(dishes, tmp_path, monkeypatch):
    spec, goal, plan = dishes
    llms = {"local:agent": ScriptedLLM(plan_follower({goal: plan})), "local:improver": ScriptedLLM([PROBLEM, ADVICE, plan_transcript(goal, plan)])}
    monkeypatch.setattr(common, "test_llm", lambda name: llms[name])
    store = tmp_path / "s.db"
    result = CliRunner().invoke(
        app,
        ["console", spec, "--store", str(store), "--llm", "local:agent", "--improver", "local:improver", "--no-prior", "--no-confirm"],
        input="\nwash the plate at the sink\n\n\nyou stopped too early\nlearn\n",
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "'text': 'wash the plate at the sink'" in result.output and "stored verified correction" in result.output
    with Store(store) as opened:
        (stored,) = opened.corrections.list()
        assert stored.instructions == [goal]
    bad = CliRunner().invoke(app, ["console", spec, "--store", str(store), "--task", "5", "--llm", "local:agent", "--no-prior"])
    assert bad.exit_code == 1 and "has 1 tasks" in bad.output


def test_the_person_says_yes_or_no_to_the_llms_proposals_and_is_asked_in_words_after_three_noes(dishes, tmp_path):
    spec, _, _ = dishes
    agent = ScriptedLLM([
        "go to door 1", "go to table 1",  # step 1: no, then yes
        "pick up plate 1", "go to door 1", "go to kitchen",  # step 2: three noes, then the person's words
        "go to kitchen", "go to kitchen",  # step 3: words instead of yes/no are heard, then yes
    ])
    lines = ["", "n", "y", "", "n", "no", "N", "pick up cup 1", "", "take it to the sink", ""]
    prompts: list[str] = []
    with Store(tmp_path / "s.db") as store:
        s, out = session(store, spec, lines, agent, ScriptedLLM([]), confirm=True, prompts=prompts)
        assert s.run() is None
        (episode,) = store.episodes()
        assert [step.action for step in episode.steps[1:]] == ["go to table 1", "pick up cup 1", "go to kitchen"]
        assert [d.source for d in episode.extra.decisions] == ["llm", "person", "llm"]
        assert episode.extra.effort == Effort(2, 9, 6)
        assert episode.extra.utterances == [(2, "take it to the sink")]
    # A rejected action is not offered again at that step; the words reach the next prompt.
    assert "go to door 1" not in agent.calls[1]["messages"][-1]["content"].split("Admissible actions:")[1]
    assert 'The person says: "take it to the sink"' in agent.calls[6]["messages"][-1]["content"]
    shown = [p for p in prompts if "proposes" in p]
    assert shown[:2] == [r"The agent proposes: go to door 1. OK? \[y/n, or type an instruction] "] * 1 + [
        r"The agent proposes: go to table 1. OK? \[y/n, or type an instruction] "]
    assert sum("what should it do next" in p for p in prompts) == 1
    assert "your effort: 2 instructions (9 words), 6 yes/no answers" in out.file.getvalue()


def test_prag_console_confirms_by_default_and_an_enter_is_a_yes(dishes, tmp_path, monkeypatch):
    spec, goal, plan = dishes
    monkeypatch.setattr(common, "test_llm", lambda name: ScriptedLLM(plan_follower({goal: plan})))
    result = CliRunner().invoke(
        app, ["console", spec, "--store", str(tmp_path / "s.db"), "--llm", "local:agent", "--no-prior"],
        input="\n\n\nn\n\n", env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    # Enter: yes; n, then the LLM's next proposal; end of input stands for a yes, and the episode ends.
    assert result.output.count("The agent proposes:") == 3
    assert "your effort: 0 instructions (0 words), 3 yes/no answers" in result.output
    with Store(tmp_path / "s.db") as store:
        (episode,) = store.episodes()
        assert episode.n_actions == 2 and episode.extra.effort.answers == 3


def test_prag_console_plays_with_search_among_the_sources_and_the_llm_never_asked(tmp_path, monkeypatch):
    spec = write_spec(tmp_path, "dishes-long", ["wash_dishes"], max_steps=40)
    llm = ScriptedLLM([])  # any call fails
    monkeypatch.setattr(common, "test_llm", lambda name: llm)
    result = CliRunner().invoke(
        app, ["console", spec, "--store", str(tmp_path / "s.db"), "--llm", "local:agent", "--no-prior",
              "--ask", "hard-coded", "--sources", "experience,search,llm"],
        input="\n" * 60, env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "The agent proposes:" not in result.output  # search's steps are not the LLM's to confirm
    with Store(tmp_path / "s.db") as store:
        (episode,) = store.episodes()
        assert episode.won and episode.llm_calls == 0 and llm.calls == []
        assert {d.source for d in episode.extra.decisions} <= {"find", "search"}
    refused = CliRunner().invoke(app, ["console", spec, "--store", str(tmp_path / "t.db"), "--sources", "llm,telepathy"])
    assert refused.exit_code == 1 and "telepathy" in refused.output and not (tmp_path / "t.db").exists()


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_sigterm_sighup_and_ctrl_c_stop_prag_console_and_leave_its_run_interrupted(tmp_path, signum, status):
    # Before: the console died of the signal (exit -15, -1); then its run was left `running (stale)`.
    spec = write_spec(tmp_path, "dishes", ["wash_dishes"], max_steps=3)
    code, err = stop_at_first_llm_call(tmp_path, signum, "console", spec, "--store", str(tmp_path / "s.db"),
                                       "--no-prior", "--no-confirm", "--sources", "llm", "--readers", "template", typed="\n")
    said = "interrupted" if signum == signal.SIGINT else f"interrupted by {signal.Signals(signum).name}"
    assert code == status and said in err and "Traceback" not in err, err
    with Store(tmp_path / "s.db", create=False) as store:
        assert list(store.run_states().values()) == ["interrupted"]


def test_the_person_asked_about_a_reading_is_shown_the_words_read():
    prompts: list[str] = []
    replies = iter(["", "n", "put a candle on the toilet"])
    person = ConsolePerson(lambda prompt: prompts.append(prompt) or next(replies))
    words = "Put a bottle of nail polish on the toilet."
    assert person.confirm_reading(words, "put a glassbottle in toilet") is True
    assert person.confirm_reading(words, "put a glassbottle in toilet") is False
    assert person.confirm_reading(words, "put a glassbottle in toilet") == "put a candle on the toilet"
    # Asked before the goal is shown, the prompt itself names the words it read.
    assert all(words in prompt and "put a glassbottle in toilet" in prompt for prompt in prompts)


def test_go_plays_on_without_an_enter_a_step_and_still_asks_the_person(tmp_path):
    spec = write_spec(tmp_path, "dishes-go", ["wash_dishes"], max_steps=40)
    (goal, plan), = plans_of(spec).items()
    agent = ScriptedLLM(plan_follower({goal: plan}))
    prompts: list[str] = []
    with Store(tmp_path / "s.db") as store:
        s, out = session(store, spec, ["go"] + ["y"] * len(plan), agent, ScriptedLLM([]), confirm=True, prompts=prompts)
        s.run()
        (episode,) = store.episodes()
        assert episode.won and episode.n_actions == len(plan) > 1
        assert episode.extra.effort.answers == len(plan)
    # One prompt between steps (the `go`), then only what the agent asks the person.
    assert sum("next action" in p for p in prompts) == 1
    assert sum("proposes" in p for p in prompts) == len(plan)
