"""Episodes spread over several OpenAI-compatible servers: the least-loaded choice, one episode's
requests on one server (real HTTP to two fake servers, played by the runner's threads)."""
from __future__ import annotations

from conftest import FakeOpenAI, write_spec
from support import minilm

from prag.llm.balance import LeastLoaded, server_urls
from prag.llm.openai_backend import OpenAILLM
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.runner import Runner, start_run
from prag.store import Store


def test_a_new_episode_goes_to_the_server_with_fewest_in_flight_ties_to_the_first():
    servers = LeastLoaded(["a", "b", "c"])
    assert [servers.acquire() for _ in range(4)] == ["a", "b", "c", "a"]
    servers.release("b")
    servers.release("c")
    assert servers.acquire() == "b"  # b and c hold none now: the first listed
    servers.release("a")
    assert servers.in_flight == {"a": 1, "b": 1, "c": 0}
    with servers.episode() as url:
        assert url == "c" and servers.in_flight["c"] == 1
    assert servers.in_flight["c"] == 0  # released with the block


def test_without_servers_every_episode_gets_the_backends_default():
    servers = LeastLoaded([])
    assert servers.acquire() is None and servers.acquire() is None


def test_servers_come_from_the_options_else_from_a_comma_list_in_openai_base_url(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://a:8000/v1, http://b:8000/v1/,http://a:8000/v1")
    assert server_urls() == ["http://a:8000/v1", "http://b:8000/v1"]
    assert server_urls(["http://c/v1"]) == ["http://c/v1"]
    # A backend built alone (prag console, prag correct) uses the first of the list.
    assert OpenAILLM("m").base_url == "http://a:8000/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert server_urls() == []


def goals_by_server(servers: list[FakeOpenAI]) -> list[set[str]]:
    """The goals of the episodes whose requests each server answered."""
    found = []
    for server in servers:
        goals = set()
        for _, body in server.requests:
            task = next(m["content"] for m in reversed(body["messages"]) if m["content"].startswith("Your goal"))
            goals.add(task.split("\n", 1)[0])
        found.append(goals)
    return found


def balanced_config(spec: str, urls: tuple[str, ...], executor: str = "threads") -> RunConfig:
    return RunConfig(ExperimentConfig(spec=spec, rounds=1, llm="openai:m"), RetrievalConfig(mode="none", k=0, corrections=False),
                     execution=ExecutionConfig(workers=2, executor=executor, llm_urls=urls, answer_cache=False))


def test_episodes_spread_over_two_servers_each_on_one(tmp_path, fake_openai):
    other = FakeOpenAI()
    try:
        spec = write_spec(tmp_path, "spread", ["throw_away_trash", "collect_toys"], per_task=2, max_steps=2)
        config = balanced_config(spec, (fake_openai.url, other.url))
        with Store(tmp_path / "s.db") as store:
            Runner(store, start_run(store, config), config, encoder=minilm()).play()
            assert len(list(store.episodes())) == 4
        first, second = goals_by_server([fake_openai, other])
        assert first and second  # two at a time: one on each server
        assert not first & second  # an episode's requests all went to its server
        assert len(first | second) == 4
    finally:
        other.close()
