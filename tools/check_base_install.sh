#!/usr/bin/env bash
# The base install, proved the way a user gets it: `pip install .` (no extras, no Makefile) into a
# fresh venv must be a working, offline query runtime within its size budget.
#
#   tools/check_base_install.sh [ARTIFACTS]
#
# ARTIFACTS: an artifacts folder holding a b2b_saas index built by the full install; without it
# one is built with $FULL_PYTHON (default .venv/bin/python, i.e. `make install`). Checks:
#   0. `pip install .` is quiet (no setuptools warnings) and leaves no build/ or *.egg-info in the
#      tree; `from schemarag import Retriever` works from the repository root (where a root folder
#      named schemarag would shadow the installed package) and from elsewhere, for the wheel and
#      then for an editable install (`pip install -e .`) of the same sources;
#   1. pip check is clean; torch, dagster, lancedb, pyarrow are not installed;
#   2. site-packages <= $LIMIT_MB (default 450) MB, measured with du;
#   3. `import schemarag.runtime` time (fresh interpreter, best of 3);
#   4. with no network (unshare -n when allowed) and HF_HUB_OFFLINE=1: Retriever.open().search(),
#      `schemarag retrieve` and `schemarag generate --prompt-only` work from an empty folder;
#   5. build/import/eval/bench/docs/chunks each fail with exactly one line naming the extra, exit 2.
# pip reuses its download/wheel cache, so a second run costs about a minute.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
LIMIT_MB="${LIMIT_MB:-450}"
PYTHON="${PYTHON:-python3}"
FULL_PYTHON="${FULL_PYTHON:-$REPO/.venv/bin/python}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/schemarag-base-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "check-base-install: FAIL: $*" >&2; exit 1; }

# A clean copy of the sources (tracked + new, not ignored): an in-tree build/ could leak stale files.
mkdir "$WORK/src"
(cd "$REPO" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) \
  | tar -xf - -C "$WORK/src"

ARTIFACTS="${1:-}"
if [[ -z "$ARTIFACTS" ]]; then
  ARTIFACTS="$WORK/artifacts"
  (cd "$REPO" && "$FULL_PYTHON" -m schemarag.cli build --db b2b_saas --data data/schemas \
    --artifacts "$ARTIFACTS" >/dev/null)
fi
ARTIFACTS="$(cd "$ARTIFACTS" && pwd)"
# The searches below run from an empty folder: no data/ or artifacts/ may be found by accident.
cd "$WORK"

"$PYTHON" -m venv "$WORK/base"
BIN="$WORK/base/bin"
SITE="$("$BIN/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

# `from schemarag import Retriever` in a fresh interpreter started in folder $1; the package must
# come from $2 (a path prefix), not from a folder that happens to be in the working directory.
import_from() {  # cwd, expected location prefix, label
  local where
  where="$(cd "$1" && "$BIN/python" -c \
    'import schemarag, schemarag.runtime; from schemarag import Retriever; print(schemarag.__file__)')" \
    || fail "from schemarag import Retriever ($3, run in $1)"
  [[ "$where" == "$2"* ]] || fail "schemarag imported from $where, expected under $2 ($3, run in $1)"
  echo "from schemarag import Retriever ($3, run in ${1/#$WORK/\$WORK}): ok"
}
# pip's own chatter aside, a build must print nothing: every setuptools warning is a defect.
quiet_install() {  # pip install arguments...
  local out
  out="$("$BIN/pip" install -q --disable-pip-version-check "$@" 2>&1 | grep -v "^WARNING: Location" || true)"
  [[ -z "$out" ]] || fail "pip install $* is not quiet: $out"
  if [[ -e "$WORK/src/build" ]] || compgen -G "$WORK/src/*.egg-info" >/dev/null \
    || compgen -G "$WORK/src/src/*.egg-info" >/dev/null; then
    fail "pip install $* left build files in the tree: $(ls -d "$WORK"/src/build "$WORK"/src/*.egg-info \
      "$WORK"/src/src/*.egg-info 2>/dev/null)"
  fi
}

echo "== pip install . (wheel), then -e . (editable)"
quiet_install "$WORK/src"
import_from "$WORK/src" "$SITE/schemarag/" "wheel"
import_from "$WORK" "$SITE/schemarag/" "wheel"
"$BIN/pip" check --disable-pip-version-check >/dev/null || fail "pip check (wheel)"
quiet_install --no-deps -e "$WORK/src"
import_from "$WORK/src" "$WORK/src/src/schemarag/" "editable"
import_from "$WORK" "$WORK/src/src/schemarag/" "editable"
"$BIN/pip" check --disable-pip-version-check >/dev/null || fail "pip check (editable)"
# back to the wheel: what a query service runs, and what the size check below measures
"$BIN/pip" uninstall -q -y schemarag
quiet_install --no-deps "$WORK/src"
import_from "$WORK/src" "$SITE/schemarag/" "wheel again"

echo "== pip check"
"$BIN/pip" check --disable-pip-version-check || fail "pip check"
for pkg in torch dagster lancedb pyarrow; do
  if "$BIN/pip" show -q "$pkg" >/dev/null 2>&1; then fail "$pkg is in the base install"; fi
done

SIZE_MB="$(du -sm "$SITE" | cut -f1)"
VENV_MB="$(du -smc "$SITE"/pip "$SITE"/pip-* "$SITE"/setuptools "$SITE"/setuptools-* "$SITE"/pkg_resources \
  "$SITE"/_distutils_hack 2>/dev/null | tail -1 | cut -f1)"
echo "== site-packages: ${SIZE_MB} MB (of which ${VENV_MB} MB are the venv's own pip/setuptools); limit ${LIMIT_MB} MB"
(( SIZE_MB <= LIMIT_MB )) || { du -sm "$SITE"/* | sort -rn | head -10; fail "base install is ${SIZE_MB} MB"; }

echo "== import time of schemarag.runtime (fresh interpreter, best of 3)"
"$BIN/python" - "$BIN/python" <<'EOF'
import subprocess, sys, time
best = min(
    (lambda t0: (subprocess.run([sys.argv[1], "-c", "import schemarag.runtime"], check=True),
                 time.perf_counter() - t0)[1])(time.perf_counter())
    for _ in range(3)
)
base = min(
    (lambda t0: (subprocess.run([sys.argv[1], "-c", "pass"], check=True), time.perf_counter() - t0)[1])(
        time.perf_counter())
    for _ in range(3)
)
print(f"import schemarag.runtime: {best * 1000:.0f} ms wall (bare interpreter start {base * 1000:.0f} ms)")
EOF

# No network: a fresh network namespace when the kernel allows it, else proxies that refuse.
OFFLINE=(env HF_HUB_OFFLINE=1 HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 NO_PROXY=)
if unshare -n true 2>/dev/null; then OFFLINE=(unshare -n "${OFFLINE[@]}"); fi

echo "== offline search (${OFFLINE[0]})"
"${OFFLINE[@]}" "$BIN/python" - "$ARTIFACTS" <<'EOF'
import sys
from schemarag.runtime import Retriever

r = Retriever.open("b2b_saas", artifacts=sys.argv[1])
res = r.search("Which accounts have unpaid invoices, and who is their sales rep?", top_k=5)
tables, chunks = list(res.tables), [c.chunk.table for c in res.chunks]
assert chunks, "no chunks retrieved"
assert "invoices" in tables, (tables, chunks)
heavy = sorted(m for m in ("dagster", "lancedb", "pyarrow", "markdown_it", "matplotlib", "torch")
               if m in sys.modules)
assert not heavy, heavy
print("search ok, tables:", tables[:8])
EOF
Q="Which accounts have unpaid invoices older than 30 days?"
"${OFFLINE[@]}" "$BIN/schemarag" retrieve --db b2b_saas --artifacts "$ARTIFACTS" "$Q" >/dev/null \
  || fail "schemarag retrieve"
"${OFFLINE[@]}" "$BIN/schemarag" generate --db b2b_saas --artifacts "$ARTIFACTS" --prompt-only "$Q" \
  | grep -q "CREATE TABLE" || fail "schemarag generate --prompt-only"
echo "retrieve, generate --prompt-only: ok"

echo "== missing extras"
check_extra() {  # extra, command...
  local extra="$1"; shift
  local rc=0 err
  err="$("$BIN/schemarag" "$@" 2>&1 >/dev/null)" || rc=$?
  [[ $rc -eq 2 ]] || fail "schemarag $* exited $rc, expected 2: $err"
  [[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]] || fail "schemarag $* printed more than one line: $err"
  [[ "$err" == *"pip install 'schemarag[$extra]'"* ]] || fail "schemarag $* does not name [$extra]: $err"
  echo "schemarag $*: $err"
}
check_extra build build
check_extra build chunks --db b2b_saas
check_extra build docs init --help
check_extra build import bird --tables x.json --out y
check_extra eval eval --questions q.jsonl
check_extra eval bench retrieve
echo "check-base-install: OK (${SIZE_MB} MB)"
