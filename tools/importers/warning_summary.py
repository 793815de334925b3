"""An import's warnings as a reader takes them: one line per kind, with a count and the fix.

A dbt project built on packages (Fivetran's shopify, hubspot, ...) gives a warning per model
whose Jinja calls a package macro or ``adapter``: 87 near-identical lines for one project. The
CLI prints :func:`summarize` instead (``--verbose`` lists each warning too); the report keeps
every warning for callers of the Python API.

>>> for line in summarize([
...     "a.sql: Jinja not rendered, columns from the yml only: 'adapter' is undefined (a package ...)",
...     "b.sql: Jinja not rendered, columns from the yml only: 'adapter' is undefined (a package ...)",
...     "m.yml: model 'c' has no known columns (none in yml, SQL not readable); skipped",
... ]):
...     print(line)
warning: 2 models: Jinja not rendered ('adapter' is undefined x2), columns from the yml only; fix: run
  `dbt deps` and `dbt parse`, then --manifest target/manifest.json (`import dbt --parse` does both);
  for their columns, `dbt docs generate` for --catalog target/catalog.json
warning: 1 model skipped: no known columns (none in the yml, SQL not readable); fix: `dbt docs
  generate`, then --manifest target/manifest.json --catalog target/catalog.json
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

PARSE_FIX = (
    "run `dbt deps` and `dbt parse`, then --manifest target/manifest.json (`import dbt --parse` does both)"
)
CATALOG_FIX = "`dbt docs generate` for --catalog target/catalog.json"


@dataclass(frozen=True)
class Kind:
    """A family of warnings: ``pattern`` finds them, its ``detail`` group says why each."""

    pattern: re.Pattern[str]
    what: str  # "{n} models: ..." with {n} and {s} (plural s)
    fix: str = ""
    per_node_kind: bool = False  # details are node kinds: "43 models, 2 sources skipped"


_KINDS = (
    Kind(
        re.compile(r"Jinja not rendered, columns from the yml only: (?P<detail>[^(]*)"),
        "{n} model{s}: Jinja not rendered ({details}), columns from the yml only",
        f"{PARSE_FIX}; for their columns, {CATALOG_FIX}",
    ),
    Kind(
        re.compile(r"macros skipped: (?:\w+Error: )?(?P<detail>[^(]*)"),
        "{n} macro file{s} not loaded ({details}); models calling them keep the yml's columns only",
        PARSE_FIX,
    ),
    Kind(
        re.compile(r"(?P<detail>model|source|seed|snapshot) '[^']*' has no known columns"),
        "{n} {details} skipped: no known columns (none in the yml, SQL not readable)",
        "`dbt docs generate`, then --manifest target/manifest.json --catalog target/catalog.json",
        per_node_kind=True,
    ),
    Kind(
        re.compile(r"\S+ listed twice; first kept"),
        "{n} column{s} listed twice in a yml: the first entry kept",
    ),
    Kind(
        re.compile(r"model '[^']*' is documented but has no \.sql file"),
        "{n} model{s} documented in a yml without a .sql file: left out (dbt does not build {them})",
    ),
)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _details(found: Counter[str], counted: bool, limit: int = 4) -> str:
    shown = [
        f"{d} x{n}" if counted else f"{n} {d}{'' if n == 1 else 's'}" for d, n in found.most_common(limit)
    ]
    more = len(found) - limit
    return ", ".join(shown) + (f", {more} more" if more > 0 else "")


def summarize(warnings: list[str]) -> list[str]:
    """One ``warning:`` line per kind (count, the causes seen most, the fix); warnings of no known
    kind are printed as they are, a repeated one once with its count."""
    hits: dict[int, Counter[str]] = {}
    others: Counter[str] = Counter()
    for text in warnings:
        for i, kind in enumerate(_KINDS):
            m = kind.pattern.search(text)
            if m:
                detail = (m.groupdict().get("detail") or "").strip()
                hits.setdefault(i, Counter())[detail] += 1
                break
        else:
            others[text] += 1
    lines = []
    for i, found in sorted(hits.items()):
        kind, n = _KINDS[i], sum(found.values())
        by_node = kind.per_node_kind
        what = kind.what.format(
            n=n,
            s="" if n == 1 else "s",
            them="it" if n == 1 else "them",
            details=_details(found, counted=not by_node),
        )
        if by_node:
            what = what.removeprefix(f"{n} ")
        lines.append(f"warning: {what}" + (f"; fix: {kind.fix}" if kind.fix else ""))
    alike: dict[str, list[str]] = {}
    for text in others:
        alike.setdefault(_template(text), []).append(text)
    for texts in alike.values():
        n = sum(others[t] for t in texts)
        lines.append(f"warning: {texts[0]}" + (f" (and {n - 1} more like it)" if n > 1 else ""))
    return lines


_PATH_HEAD = re.compile(r"^[^\s:]*[/\\.][^\s:]*: ")  # "models/x.yml: " before the message
_NAMES = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\b\w+(?:\.\w+)+\b|\d+")


def _template(text: str) -> str:
    """The message with its file and names left out: warnings that differ only there are alike."""
    return _NAMES.sub("_", _PATH_HEAD.sub("", text))


__all__ = ["CATALOG_FIX", "PARSE_FIX", "summarize"]
