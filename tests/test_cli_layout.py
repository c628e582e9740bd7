"""Output a person can read anywhere (issue 11): at 80 columns (piped output is laid out for 80)
`prag compare`, `stats`, `query` and `corrections list` cut no figure, id or goal, and their
`--json` is the machine-readable path; the layout rules on their own (`prag.cli.layout`)."""
from __future__ import annotations

import dataclasses
import io
import json

import pytest
from rich.console import Console
from rich.table import Table
from support import episode, minilm, run
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.cli.layout import fit, records
from prag.corrections.prior import load_prior
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store

_register()

# Real run ids are this long: at 80 columns they alone take half the width.
PRAG = "alfworld-mini-prag-20261122-001517"
NONE = "alfworld-mini-none-20261122-093045"


def invoke(*args: object, columns: int = 80):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": str(columns)})


def readable(output: str, width: int = 80) -> list[str]:
    """The output's whitespace-separated words, once it is checked to fit `width` and cut nothing."""
    assert "…" not in output, output
    assert all(len(line) <= width for line in output.splitlines()), output
    return output.split()


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    """Two runs with real-length ids: PRAG won 2 of 5 in round 0 and 3 of 5 in round 1, NONE
    (left running by a process that is gone) 1 of 2 in round 0; vectors for `prag query`, and the
    grid's prior transcripts as corrections."""
    path = tmp_path_factory.mktemp("layout") / "runs.db"
    with Store(path) as store:
        cache = EmbeddingCache(store, minilm())
        store.add_run(run(PRAG, rounds=2))
        store.add_run(dataclasses.replace(run(NONE, rounds=1), mode="none"), claim=False)
        outcomes = {(PRAG, 0): [1, 1, 0, 0, 0], (PRAG, 1): [1, 1, 1, 0, 0], (NONE, 0): [1, 0]}
        for (run_id, round_), wins in outcomes.items():
            for n, won in enumerate(wins):
                record = episode(run_id, round_, f"pick_heat_then_place_in_recep-{n}", won=bool(won),
                                 goal=f"heat some egg {n} and put it in the garbagecan", task_type="pick_heat_then_place_in_recep")
                cache.vectors([record.goal] + [s.scene for s in record.steps])
                store.add_episode(record)
        assert load_prior(store, cache, domain="grid")
    return path


def test_compare_at_80_columns_cuts_no_figure(store_path):
    result = invoke("compare", store_path)
    assert result.exit_code == 0, result.output
    words = readable(result.output)
    assert PRAG in words and NONE in words
    assert {"40.0%", "(2/5)", "60.0%", "(3/5)", "50.0%", "(1/2)"} <= set(words)
    lines = [" ".join(line.split()) for line in result.output.splitlines()]
    assert any("Total SR: 40.0% (2/5)" in line for line in lines)  # one record per row: the figure on one line
    assert any("running (stale)" in line for line in lines)  # NONE's process is gone, as prag stats says


def test_compare_is_a_table_where_it_fits(store_path):
    wide = invoke("compare", store_path, columns=200)
    words = readable(wide.output, 200)
    assert "┃ run" in wide.output and "Total SR" in wide.output and "40.0%" in words


def test_compare_json_is_the_machine_readable_path_at_any_width(store_path):
    data = json.loads(invoke("compare", store_path, "--json", columns=40).output)
    assert {run["id"]: run["status"] for run in data["runs"]} == {PRAG: "running", NONE: "running (stale)"}
    rounds = {(r["run_id"], r["round"]): r["wins"] for r in data["rounds"]}
    assert rounds == {(PRAG, 0): 2, (PRAG, 1): 3, (NONE, 0): 1}


def test_stats_at_80_columns_cuts_no_id(store_path):
    result = invoke("stats", store_path)
    assert result.exit_code == 0, result.output
    words = readable(result.output)
    assert PRAG in words and NONE in words and "40.0%" in words
    assert json.loads(invoke("stats", store_path, "--json", columns=40).output)["episodes"] == 12


def test_query_at_80_columns_cuts_no_goal(store_path):
    goal = "heat an egg and put it in the garbage can"
    result = invoke("query", store_path, goal, "--k", "2")
    assert result.exit_code == 0, result.output
    text = " ".join(readable(result.output))
    hits = json.loads(invoke("query", store_path, goal, "--k", "2", "--json", columns=40).output)
    episodes = [hit for hit in hits if hit["layer"] == "episode"]
    assert len(episodes) == 2
    assert all(hit["goal"] in text and hit["run_id"] in text and f"{hit['score']:.3f}" in text for hit in episodes)


def test_corrections_list_at_80_columns_cuts_no_goal(store_path):
    result = invoke("corrections", "list", store_path)
    assert result.exit_code == 0, result.output
    text = " ".join(readable(result.output))
    listed = json.loads(invoke("corrections", "list", store_path, "--json", columns=40).output)
    assert listed and all(c["goal"] in text and c["task_type"] in text for c in listed)


# --- the layout rules ---------------------------------------------------------------------------


def table_of(rows: list[tuple[str, ...]], *headers: str) -> Table:
    table = Table(title="t")
    for header in headers:
        table.add_column(header)
    for row in rows:
        table.add_row(*row)
    return table


def rendered(width: int, renderable) -> str:
    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(renderable)
    return console.export_text()


def test_a_table_that_fits_is_left_as_it_is():
    table = table_of([("a", "1")], "name", "value")
    assert fit(Console(width=80, file=io.StringIO()), table) is table and all(c.width is None for c in table.columns)


def test_a_table_too_wide_wraps_at_spaces_and_cuts_no_word():
    table = table_of([(PRAG, "won 3 of 12 tasks in round two", "fine")], "run", "outcome", "note")
    console = Console(width=60, file=io.StringIO())
    text = rendered(60, fit(console, table))
    assert PRAG in text.split() and "…" not in text
    assert {"won", "3", "of", "12", "tasks", "in", "round", "two"} <= set(text.split())
    assert max(len(line) for line in text.splitlines()) <= 60


def test_a_table_whose_words_cannot_fit_becomes_records_of_whole_items():
    table = table_of([(PRAG, "40.0% (2/5)", "0.38 (4)")], "run", "Total SR", "SPL")
    console = Console(width=50, file=io.StringIO())  # the words alone need 53 columns in a table
    text = rendered(50, fit(console, table))
    assert text.splitlines() == ["t", f"run: {PRAG}", "  Total SR: 40.0% (2/5)  ·  SPL: 0.38 (4)"]


def test_records_pack_items_into_lines_and_never_split_one():
    table = table_of([("r", *(f"{n}.{n}% ({n}/9)" for n in range(6)))], "run", *(f"figure {n}" for n in range(6)))
    lines = rendered(50, records(Console(width=50, file=io.StringIO()), table)).splitlines()
    items = [item for line in lines[2:] for item in line.strip().split("  ·  ")]
    assert items == [f"figure {n}: {n}.{n}% ({n}/9)" for n in range(6)]
    assert all(len(line) <= 50 for line in lines) and len(lines) > 3
