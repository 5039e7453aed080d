"""The docs' Python examples run: every ```python block of the Markdown files below (unless its info
string says ``no-run``) is executed, in order and in one namespace per file, in a fresh working
directory holding a link to the repository's ``examples``. The console, sh and SQL examples are run
by the CLI's tests (``crates/varve-cli/tests/it/docs.rs``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import varve

REPO = Path(__file__).resolve().parents[3]

# Each doc, and what its examples expect to exist before they run (made as the doc's own console
# examples make it: the quickstart's and the README's tour import market.stocks into ./varve-lake).
DOCS = {
    "README.md": "stocks",
    "docs/quickstart.md": "stocks",
    "docs/python.md": None,
}


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The runnable ```python blocks of ``text``: (line of the block's first line, code)."""
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\S*)(.*)$", lines[i].strip())
        if m:
            words = (m.group(1) + " " + m.group(2)).replace(",", " ").split()
            j = i + 1
            while not lines[j].strip().startswith("```"):
                j += 1
            if words[:1] == ["python"] and "no-run" not in words:
                out.append((i + 2, "\n".join(lines[i + 1:j])))
            i = j + 1
        else:
            i += 1
    return out


@pytest.mark.parametrize("doc", list(DOCS))
def test_python_examples_in_the_docs_run(doc, tmp_path, monkeypatch):
    text = (REPO / doc).read_text()
    blocks = python_blocks(text)
    assert blocks, f"{doc} has no python blocks"
    os.symlink(REPO / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    if DOCS[doc] == "stocks":
        with varve.Lake("./varve-lake", create=True) as lake:
            lake.import_files("market.stocks", ["examples/data/stocks.csv.gz"], series_key=["Ticker"])
    namespace: dict = {"__name__": "__docs__"}
    for line, code in blocks:
        try:
            exec(compile(code, f"{doc}:{line}", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - re-raised with where it came from
            raise AssertionError(f"{doc}, the python block at line {line} failed: {e!r}") from e
