"""The README's examples return what they promise, on the bundled samples.

Every ``schemarag retrieve`` line of a ``text`` block is run for real; where the README shows its
output, every table it lists must be among the focused tables the command returns now (the
first one first), and a table it marks ``[FK neighbour of X]`` must be one the ranking took as
such, after X.
The Python block is executed against the same index, and the tables its comment names must be
in the ranking. Scores and keys are not compared: they move with every model or data change.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from schemarag.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SHOWN_TABLE = re.compile(r"^\s+\d+\.\s+\d\.\d{3}\s+([\w.]+): .*?(\[FK neighbour of ([\w.]+)\])?$")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.DOTALL)


def _retrieve_examples() -> list[tuple[list[str], list[str]]]:
    """``(argv after 'schemarag', README output lines)`` per retrieve example."""
    found = []
    for block in _blocks("text"):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"\$ \.venv/bin/schemarag (retrieve .*?)(\s+#.*)?$", line)
            if not m:
                continue
            output = []
            for follow in lines[i + 1 :]:
                if follow.startswith("$ "):
                    break
                output.append(follow)
            found.append((shlex.split(m.group(1)), output))
    return found


EXAMPLES = _retrieve_examples()


def test_the_readme_has_the_examples_this_test_pins() -> None:
    assert any("unpaid invoices by sales rep" in argv for argv, _ in EXAMPLES)
    assert any(out for _, out in EXAMPLES)  # at least one shows its output


@pytest.mark.parametrize("argv, shown", EXAMPLES, ids=[" ".join(a) for a, _ in EXAMPLES])
def test_retrieve_example_returns_what_the_readme_shows(
    argv: list[str], shown: list[str], built_artifacts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--artifacts", str(built_artifacts)]) == 0
    actual = capsys.readouterr().out.splitlines()
    listed = [(m.group(1), m.group(3)) for m in map(SHOWN_TABLE.match, shown) if m]
    got = {m.group(1): m.group(3) for m in map(SHOWN_TABLE.match, actual) if m}
    for table, joins in listed:
        assert table in got, f"README shows {table} for {argv}; the command now returns {list(got)}"
        assert got[table] == joins, f"{table}: [FK neighbour of ...] marker differs from the README"
    if listed:
        assert next(iter(got)) == listed[0][0]  # the best table is the one the README shows first
    if "unpaid invoices by sales rep" in argv:  # the example: the rep and the invoices
        assert {"invoices", "sales_reps"} <= set(got)


def test_python_example_runs_and_ranks_the_tables_it_names(
    built_artifacts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (block,) = [b for b in _blocks("python") if "Retriever.open(" in b]
    # Run the README's lines unchanged from a folder whose ./artifacts is the built index, as a
    # user does from the repository root after `schemarag build` (a clean clone has no build).
    (tmp_path / "artifacts").symlink_to(built_artifacts, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCHEMARAG_ARTIFACTS", raising=False)
    code = block
    named = re.search(r"# the focused tables, best first: (.*)", block)
    assert named is not None
    tables = [t.strip() for t in named.group(1).split(",") if t.strip() not in ("...", "")]
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)  # the README's own lines, in order
    ranking = scope["result"].ranking  # type: ignore[attr-defined]
    assert ranking.tables[0] == tables[0] and set(tables) <= set(ranking.tables)
