"""Import every dbt project under a folder and report what came out (and, optionally, what dbt says).

For each project (a folder holding ``dbt_project.yml``): models built as tables, ephemeral and
disabled models left out, source tables, tables per layer, warnings, seconds, or the error that
stopped it. With ``--dbt PATH`` (a dbt executable with the project's adapter installed, e.g. in a
scratch venv: it is not a schemarag dependency), ``dbt ls`` is run on a temporary copy of each
project and every node both list is compared: relation name (target database left out, as the
import does) and materialization. Projects dbt itself cannot parse are reported as such.

    schemarag bench dbt --projects ../spider2-dbt/examples [--dbt /tmp/dbt/bin/dbt] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from schemarag.tools.commands.json_output import add_json_output

_LS_KEYS = "name resource_type config relation_name package_name source_name"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--projects", required=True, help="folder whose sub-folders are dbt projects")
    parser.add_argument("--only", nargs="*", default=None, help="project folder names to run (default: all)")
    parser.add_argument("--dbt", default=None, help="dbt executable to compare with (`dbt ls`), optional")
    add_json_output(parser)


def _dbt_nodes(dbt: str, project: Path) -> tuple[dict[str, dict[str, Any]], str]:
    """``({node: ls entry}, error)`` from ``dbt ls`` on a temporary copy of ``project``."""
    with tempfile.TemporaryDirectory(prefix="schemarag-dbt-ls-") as tmp:
        work = Path(tmp) / project.name
        shutil.copytree(project, work, symlinks=True)
        kinds = [a for k in ("model", "seed", "snapshot", "source") for a in ("--resource-type", k)]
        cmd = [dbt, "ls", *kinds, "--output", "json", "--output-keys", _LS_KEYS, "--profiles-dir", "."]
        proc = subprocess.run(
            [*cmd, "--log-format", "json", "--quiet"], cwd=work, capture_output=True, text=True, timeout=900
        )
    nodes: dict[str, dict[str, Any]] = {}
    error = ""
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        info = json.loads(line).get("info", {})
        if info.get("level") == "error" and not error:
            error = " ".join(str(info.get("msg", "")).split())[:240]
        if info.get("name") != "PrintEvent":
            continue
        entry = json.loads(info["msg"])
        key = (
            f"{entry['source_name']}.{entry['name']}" if entry["resource_type"] == "source" else entry["name"]
        )
        nodes[key] = entry
    return nodes, error if not nodes else ""


def compare(ours: dict[str, dict[str, str]], theirs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Node-by-node agreement of relation names and materializations."""
    from schemarag.tools.importers.dbt.manifest import relation_parts

    both = sorted(set(ours) & set(theirs))
    names = mats = external = 0
    differ: list[str] = []
    for key in both:
        entry, mine = theirs[key], ours[key]
        mat = (entry.get("config") or {}).get("materialized") or ""
        relation = str(entry.get("relation_name") or "")
        if "(" in relation or relation.startswith("'"):  # dbt-duckdb external source: a file, read_*()
            external += 1
            continue
        parts = [p.lower() for p in relation_parts(entry)] if entry.get("relation_name") else []
        # the import leaves the target database out: either spelling is the same relation
        if mat == "ephemeral" or mine["relation"].lower() in (".".join(parts[1:]), ".".join(parts)):
            names += 1
        else:
            differ.append(f"{key}: ours {mine['relation']}, dbt {'.'.join(parts)}")
        if mine["kind"] == "source" or mine["materialized"] == mat:
            mats += 1
        else:
            differ.append(f"{key}: ours {mine['materialized'] or '?'}, dbt {mat}")
    return {
        "dbt_nodes": len(theirs),
        "compared": len(both) - external,
        "external_sources": external,
        "names_agree": names,
        "materializations_agree": mats,
        "only_dbt": sorted(set(theirs) - set(ours)),
        "only_ours": sorted(set(ours) - set(theirs)),
        "differences": differ,
    }


def measure(projects: Path, only: list[str] | None = None, dbt: str | None = None) -> list[dict[str, Any]]:
    from schemarag.tools.importers.dbt import import_dbt

    folders = sorted(p for p in projects.iterdir() if (p / "dbt_project.yml").is_file())
    folders = [p for p in folders if not only or p.name in only]
    rows: list[dict[str, Any]] = []
    logging.getLogger("schemarag.tools.importers.dbt").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="schemarag-bench-dbt-") as tmp:
        for n, folder in enumerate(folders, 1):
            started = time.perf_counter()
            row: dict[str, Any] = {"project": folder.name}
            try:
                report = import_dbt(folder, Path(tmp) / "out", name=folder.name)
                row.update(
                    tables=report.tables,
                    models=report.models,
                    ephemeral=len(report.ephemeral),
                    disabled=len(report.disabled),
                    sources=report.sources,
                    layers=report.layers,
                    warnings=len(report.warnings),
                    error="",
                )
                nodes = report.nodes
            except Exception as exc:  # a project that fails is a row of the report, not the end of it
                row.update(tables=0, error=f"{type(exc).__name__}: {exc}"[:300])
                nodes = {}
            row["seconds"] = round(time.perf_counter() - started, 2)
            if dbt:
                theirs, error = _dbt_nodes(dbt, folder)
                row["dbt"] = compare(nodes, theirs) if theirs else {"error": error or "dbt ls listed nothing"}
            rows.append(row)
            print(
                f"  {n}/{len(folders)} {folder.name}: {row['tables']} tables {row['seconds']}s",
                file=sys.stderr,
            )
    return rows


def _print(rows: list[dict[str, Any]]) -> None:
    cells = ("tables", "models", "eph", "dis", "src", "warn", "sec")
    print(f"{'project':30} " + " ".join(f"{c:>6}" for c in cells) + "  layers / error")
    for r in rows:
        tail = r["error"] or ", ".join(
            f"{k} {v}" for k, v in sorted(r["layers"].items(), key=lambda x: -x[1])
        )
        values = [r.get(k, 0) for k in ("tables", "models", "ephemeral", "disabled", "sources", "warnings")]
        print(f"{r['project']:30} " + " ".join(f"{v:>6}" for v in [*values, r["seconds"]]) + f"  {tail}")
    ok = [r for r in rows if not r["error"]]
    print(
        f"\n{len(ok)}/{len(rows)} projects imported; {sum(r['tables'] for r in ok)} tables, "
        f"{sum(r['ephemeral'] for r in ok)} ephemeral and {sum(r['disabled'] for r in ok)} disabled left out"
    )
    cmp = [r["dbt"] for r in rows if "dbt" in r and "compared" in r["dbt"]]
    if any("dbt" in r for r in rows):
        failed = [r["project"] for r in rows if "dbt" in r and "error" in r["dbt"]]
        total = sum(c["compared"] for c in cmp)
        print(
            f"dbt ls: {len(cmp)} projects parsed by dbt ({len(failed)} not: {', '.join(failed)}); "
            f"{total} nodes compared: names agree {sum(c['names_agree'] for c in cmp)}/{total}, "
            f"materializations agree {sum(c['materializations_agree'] for c in cmp)}/{total}; "
            f"{sum(len(c['only_dbt']) for c in cmp)} nodes only in dbt, "
            f"{sum(len(c['only_ours']) for c in cmp)} only in the import; "
            f"{sum(c['external_sources'] for c in cmp)} external file sources (dbt-duckdb) not compared"
        )
        for r in rows:
            for diff in r.get("dbt", {}).get("differences", [])[:3]:
                print(f"  differs in {r['project']}: {diff}")


def run(args: argparse.Namespace) -> int:
    projects = Path(args.projects)
    if not projects.is_dir():
        from schemarag.runtime.core.errors import ConfigError

        raise ConfigError(f"--projects {projects}: not a folder; pass the folder holding the dbt projects")
    rows = measure(projects, args.only, args.dbt)
    _print(rows)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0 if all(not r["error"] for r in rows) else 1
