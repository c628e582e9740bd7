"""A `prag run` played by a benchmark: timed, its failure shown, its results card read back."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def played(prag: list[str], command: list[str], store: Path, name: str, code: Path) -> tuple[float, dict]:
    """Play `command` (a `prag run` of `prag`, the checkout at `code` first on the path) beside its
    store; its wall seconds and its results card (`prag compare --card --json`). A run that fails
    ends the benchmark with its command and the end of its output."""
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_WAIT_POLICY": "PASSIVE"}
    start = time.perf_counter()
    run = subprocess.run(command, cwd=store.parent, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if run.returncode:
        sys.exit(f"{' '.join(command)}\nexited with {run.returncode}:\n{(run.stdout + run.stderr)[-3000:]}")
    card = subprocess.run([*prag, "compare", str(store), name, "--card", "--json"], cwd=store.parent, env=env,
                          capture_output=True, text=True, check=True)
    return wall, json.loads(card.stdout)
