"""mkdocs hooks (mkdocs.yml `hooks:`): the README is the site's home page.

The README links into the docs as `docs/PAGE.md`, which works on a repository's front page; on the
site the same pages are at `PAGE.md`. The home page is made from the README at build time with
those links made site-relative, so there is one text, and `mkdocs build --strict` checks its links.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

README = Path(__file__).resolve().parent.parent / "README.md"


def home_page(readme: str) -> str:
    """The README with its links into docs/ made relative to the site's root."""
    return re.sub(r"\]\(docs/", "](", readme)


def on_files(files: Files, config: Any) -> Files:
    if files.get_file_from_path("index.md") is None:
        files.append(File.generated(config, "index.md", content=home_page(README.read_text(encoding="utf-8"))))
    return files
