"""Fixtures shared by test files: the real ALFWorld data, unpacked once per session."""
from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# The shared data lies beside the checkout (../shared), in CI as on the dev machines.
SHARED_ALFWORLD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alfworld"

_scratch: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    # `import alfworld` creates $ALFWORLD_DATA (default ~/.cache/alfworld): keep it out of $HOME.
    global _scratch
    if "ALFWORLD_DATA" not in os.environ:
        _scratch = tempfile.mkdtemp(prefix="prag-test-alfworld-")
        os.environ["ALFWORLD_DATA"] = _scratch


def pytest_unconfigure(config: pytest.Config) -> None:
    if _scratch:
        shutil.rmtree(_scratch, ignore_errors=True)


@pytest.fixture(scope="session")
def alfworld_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The shared ALFWorld splits (valid_seen, valid_train) unpacked into a temp dir.

    Yields the data root (the folder holding `json_2.1.1/` and `logic/`) and sets ALFWORLD_DATA
    to it for the session. Other fixtures may repoint ALFWORLD_DATA, so a test that relies on the
    variable should set it again itself (`monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_data))`).
    """
    tarballs = sorted(SHARED_ALFWORLD.glob("alfworld-*.tar.gz"))
    if not tarballs:
        pytest.skip(f"real ALFWorld data not found: no alfworld-*.tar.gz in {SHARED_ALFWORLD}")
    out = tmp_path_factory.mktemp("alfworld")
    for tarball in tarballs:
        with tarfile.open(tarball) as archive:
            archive.extractall(out, filter="data")
    root = out / "alfworld"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALFWORLD_DATA", str(root))
        yield root
