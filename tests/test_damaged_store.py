"""A store whose own records were damaged (issue 22): a value prag reads back to decide what to do
(the schema version, a run's config and status, an episode's counts and extra, a step's graph, a
vector's bytes, a claim's pid, a learned policy's curve and network) that is not what prag writes
gets an error naming the store, the value and what to do: no traceback, and the file is not
written. Before, `prag stats` on `schema_version = 'abc'` printed a ValueError traceback."""
from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing

import numpy as np
import pytest
from conftest import write_spec
from support import episode, run
from typer.testing import CliRunner

from prag.agent.sources.mediator import MediatorState
from prag.cli import _register, app, common
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.embed import DEFAULT_MODEL
from prag.store import Store
from prag.store.ask_policies import AskPolicyRecord
from prag.store.records import text_hash

_register()
PRAG_WRITES_NOTHING = "prag writes nothing into it"


@pytest.fixture
def store(tmp_path):
    """A store with run r1, one episode with a vector, and an ask policy `asker` v1."""
    path = tmp_path / "s.db"
    with Store(path) as opened:
        opened.add_run(run("r1"))
        record = episode()
        opened.add_vectors(DEFAULT_MODEL, {text_hash(record.goal): np.ones(4, dtype=np.float32)})
        opened.add_episode(record)
        opened.ask_policies.add(AskPolicyRecord(
            name="asker", spec="test", tasks=["t0"], llm="none", timesteps=8, penalty=0.1, gamma=0.99, seed=0,
            features=MediatorState.FEATURES,
            model=b"PK\x03\x04 not a network"))
    return path


def damage(path, sql: str) -> None:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(sql)
        conn.commit()


def written(path) -> tuple[str, bool]:
    """The store file's digest, and whether a write-ahead log beside it holds anything."""
    wal = path.with_name(path.name + "-wal")
    return hashlib.sha256(path.read_bytes()).hexdigest(), wal.exists() and wal.stat().st_size > 0


DAMAGES = [
    pytest.param("update prag_meta set value = 'abc' where key = 'schema_version'", ["stats"],
                 "prag_meta.schema_version is 'abc', not a whole number", "into prag_meta values ('schema_version'",
                 id="schema_version"),
    # Issue 47: a version of -1, or none, was taken for an old schema, and `prag delete` then skipped a
    # table of the newer one: sqlite3.IntegrityError (FOREIGN KEY constraint failed).
    pytest.param("update prag_meta set value = '-1' where key = 'schema_version'", ["delete", "--run", "r1", "--yes"],
                 "prag_meta.schema_version is '-1', not the newest migration applied",
                 "into prag_meta values ('schema_version'", id="schema_version below the migrations"),
    pytest.param("delete from prag_meta where key = 'schema_version'", ["delete", "--run", "r1", "--yes"],
                 "prag_meta.schema_version is None, not the newest migration applied",
                 "into prag_meta values ('schema_version'", id="schema_version missing"),
    pytest.param("update runs set config = '{not json'", ["run", "--resume", "r1", "--store"],
                 "runs.config of run r1 is '{not json', not JSON text", "", id="run config"),
    pytest.param("update runs set status = 'paused'", ["stats"],
                 "runs.status of run r1 is 'paused', not one of running, finished, interrupted", "", id="run status"),
    pytest.param("update runs set claim_pid = 'me'", ["stats"],
                 "runs.claim_pid of run r1 is 'me', not a whole number", "", id="claim pid"),
    pytest.param("update episodes set llm_calls = 'many'", ["compare"],
                 "episodes.llm_calls of episode 1 is 'many', not a whole number", "", id="episode count"),
    # `prag stats` reads an episode's round, outcome and length alone (Store.round_tallies).
    pytest.param("update episodes set n_steps = 'many'", ["stats"],
                 "episodes.n_steps of episode 1 is 'many', not a whole number", "", id="episode length"),
    pytest.param("update episodes set extra = '[1'", ["export"],
                 "episodes.extra of episode 1 is '[1', not JSON text", "", id="episode extra"),
    # `prag compare` reads of an extra what its figures count (Store.outcomes), and checks that.
    pytest.param("update episodes set extra = '[1'", ["compare"],
                 "episodes.extra of episode 1 is '[1', not JSON text", "", id="episode extra, compared"),
    pytest.param("update episodes set extra = '" + "[" * 100_000 + "'", ["compare"],
                 "episodes.extra of episode 1 is '[[[[", "not JSON text", id="extra nested 100k deep"),
    pytest.param("""update episodes set extra = json_set(extra, '$.decisions', json('[{"source": 3}]'))""", ["compare"],
                 "episodes.extra.decisions of episode 1 is [{'source': 3}], not what prag writes there "
                 "(value error, decisions, each naming its source)", "",
                 id="decision source"),
    pytest.param("""update episodes set extra = json_set(extra, '$.effort.words', 'many')""", ["compare"],
                 "episodes.extra.effort.words of episode 1 is 'many', not what prag writes there (input should be a valid integer",
                 "", id="effort"),
    pytest.param("""update episodes set extra = json_set(extra, '$.reading', 'read')""", ["compare"],
                 "episodes.extra.reading of episode 1 is 'read', not what prag writes there (input should be a dictionary",
                 "", id="reading"),
    pytest.param("update steps set graph = '{\"triples\": 3}' where t = 1", ["export"],
                 "steps.graph of step 1 of episode 1 is", "not an object of a location and a list of triples", id="step graph"),
    pytest.param("update embeddings set vector = x'010203'", ["export"],
                 f"the {DEFAULT_MODEL} vector of text", "not float32 numbers as bytes", id="vector bytes"),
    pytest.param("update ask_policies set curve = 'up'", ["run", "{spec}", "--ask", "learned", "--store"],
                 "ask_policies.curve of ask policy asker v1 is 'up', not JSON text", "", id="policy curve"),
    pytest.param("select 1", ["run", "{spec}", "--ask", "learned", "--store"],
                 "ask_policies.model of ask policy asker v1 is b'PK\\x03\\x04 not a network', not a network stable-baselines3 saved",
                 "train it again with `prag train-asker`", id="policy network"),
]


@pytest.mark.parametrize(("sql", "command", "said", "fix"), DAMAGES)
def test_a_damaged_value_is_named_with_what_to_do_and_nothing_is_written(store, tmp_path, monkeypatch, sql, command, said, fix):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(common, "test_llm", lambda spec: ScriptedLLM(["look"]))
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    damage(store, sql)
    before = written(store)
    assert not before[1]
    args = [part.format(spec=spec) for part in command] + [str(store)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    output = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert f"Error: {store} is damaged: {said}" in output and fix in output and PRAG_WRITES_NOTHING in output, output
    assert "Traceback" not in result.output
    assert written(store) == before
    with closing(sqlite3.connect(store)) as conn:
        assert conn.execute("select count(*) from runs").fetchone()[0] == 1  # no run recorded


def test_an_extra_json_reads_as_python_wrote_it_with_nan_and_a_lone_surrogate(store):
    """What json.dumps may write (NaN, an escaped lone surrogate) is no damage, though the fast
    reader of extras refuses it."""
    damage(store, """update episodes set extra = '{"env": "alfworld", "goal_sentence": "\\ud800", "score": NaN}'""")
    result = CliRunner().invoke(app, ["compare", str(store), "--json"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    with Store(store, create=False) as opened:
        assert opened.outcomes(["r1"])[0].goal_sentence == "\ud800"
