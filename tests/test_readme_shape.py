"""The README stays the user's document, and no doc names a path only a developer's machine has.

* README.md is at most 350 lines (benchmark history lives in docs/benchmarks.md);
* its first ``bash`` block holds exactly the two commands a newcomer types;
* no README/docs markdown names a path outside the repository: a ``../`` that is not a link to a
  file of the repository, a ``/work/``, ``/tmp/`` or ``/home/`` path, or the benchmark folder of a
  development machine (``shared/benchmarks``). Benchmark data is written as a placeholder such as
  ``<spider2_lite>``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted([README, ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("*.md")])

LINK_UP = re.compile(r"\]\((\.\./[^)#\s]+)(#[^)]*)?\)")  # [text](../FILE#anchor)
UP = re.compile(r"(?<![.\w])\.\./")  # a ../ path segment (not the tail of an ellipsis ".../")
MACHINE = re.compile(r"(?<![\w.])(/work/|/tmp/|/home/|/Users/)|shared/benchmarks")


def test_readme_is_at_most_350_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 350, f"README.md has {len(lines)} lines; move detail to docs/"


def test_first_bash_block_is_the_two_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert blocks, "README.md has no ```bash block"
    commands = [line.strip() for line in blocks[0].splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]


@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_no_path_outside_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        for link in LINK_UP.finditer(line):
            target = (doc.parent / link.group(1)).resolve()
            if not target.is_relative_to(ROOT) or not target.exists():
                problems.append(f"{number}: link {link.group(1)} leaves the repository or is missing")
        rest = LINK_UP.sub("", line)
        if UP.search(rest):
            problems.append(f"{number}: '../' path: {line.strip()}")
        if m := MACHINE.search(rest):
            problems.append(f"{number}: machine path {m.group(0)!r}: {line.strip()}")
    assert not problems, f"{doc.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_checker_sees_what_it_should() -> None:
    assert UP.search("see ../shared/x") and not UP.search("error: .../model.onnx")
    assert MACHINE.search("--work /work/wh") and MACHINE.search("shared/benchmarks/spider2_lite")
    assert not MACHINE.search("s3://bucket/tmp/x") and not MACHINE.search("build/warehouse")
    assert LINK_UP.search("[SECURITY.md](../SECURITY.md#input-bounds)")
