"""The small local model as a module's fixture, for the tests that run the real one."""
from __future__ import annotations

import pytest

from prag.errors import LLMError
from prag.llm import make_llm
from prag.llm.local import LocalLLM


@pytest.fixture(scope="module")
def llm() -> LocalLLM:
    """The 0.5B model (what CI can afford where only speed and mechanics are tested)."""
    try:
        model = make_llm("local:0.5b", n_ctx=4096)
    except LLMError as exc:
        pytest.skip(f"the local 0.5B model is not available: {exc}")
    assert isinstance(model, LocalLLM)
    return model
