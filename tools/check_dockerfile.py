"""Replay the repository's ``Dockerfile`` without Docker, as CI's proof that the image works.

CI has no Docker daemon, and an untested Dockerfile rots. This reads the Dockerfile and does what
each instruction says on this machine: ``COPY . /app`` copies the sources (tracked and new files,
as ``git ls-files`` lists them: no ``.venv``, no ``artifacts``) into a scratch ``app/``;
``WORKDIR`` and ``ENV`` set the folder and environment (container paths mapped into the scratch
folder); each ``RUN`` runs there in a fresh venv standing in for the image's Python (``pip`` and
``python`` are the venv's); ``CMD`` is started with an index built by the full install mounted at
``/app/artifacts``, an API key in ``SCHEMARAG_SERVE_API_KEYS`` and the exposed port moved to a free
one, then queried over HTTP: ``/readyz``, ``POST /v1/retrieve`` with the key (200, the README's
question answered) and without it (401). Unknown instructions fail the check, so a new line in the
Dockerfile is either replayed here or noticed.

    python tools/check_dockerfile.py [--python python3] [--full-python .venv/bin/python]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KEY = "sr_dockerfile-check-key"
QUESTION = "unpaid invoices by sales rep"


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` in order; continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in dockerfile.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_sources(dest: Path) -> None:
    """What ``COPY . /app`` puts in the image: tracked and new files, nothing git ignores."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as buf:
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name in filter(None, files):
                path = REPO / name.decode()
                if path.exists():
                    tar.add(path, arcname=name.decode(), recursive=False)
        buf.seek(0)
        with tarfile.open(fileobj=buf) as tar:
            tar.extractall(dest, filter="data")


def request(url: str, body: dict | None = None, key: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default="python3", help="the interpreter standing in for FROM python:3.x")
    parser.add_argument("--full-python", default=str(REPO / ".venv" / "bin" / "python"),
                        help="a full install, to build the index the service serves")  # fmt: skip
    args = parser.parse_args()
    steps = instructions(REPO / "Dockerfile")
    with tempfile.TemporaryDirectory(prefix="schemarag-docker-") as tmp:
        root = Path(tmp)
        venv = root / "python"
        subprocess.run([args.python, "-m", "venv", str(venv)], check=True)
        env = {
            **os.environ,
            "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
        env.pop("VIRTUAL_ENV", None)
        workdir = root

        def here(container_path: str) -> Path:  # /app/x -> <scratch>/app/x
            return root / container_path.lstrip("/")

        cmd: list[str] | None = None
        exposed: list[str] = []
        for word, rest in steps:
            print(f"docker-replay: {word} {rest}", flush=True)
            if word == "FROM":
                want = rest.split(":", 1)[1].split("-", 1)[0] if ":" in rest else ""
                have = subprocess.run([str(venv / "bin" / "python"), "-c", "import sys; print(sys.version)"],
                                      capture_output=True, text=True, check=True).stdout  # fmt: skip
                if want and not have.startswith(want):
                    print(f"docker-replay: note: image Python {want}, replayed on {have.split()[0]}")
            elif word == "WORKDIR":
                workdir = here(rest)
                workdir.mkdir(parents=True, exist_ok=True)
            elif word == "COPY":
                src, dest = shlex.split(rest)
                if src != ".":
                    raise SystemExit(f"docker-replay: COPY {src}: only `COPY . <dir>` is replayed")
                copy_sources(here(dest))
            elif word == "ENV":
                for pair in shlex.split(rest):
                    name, _, value = pair.partition("=")
                    env[name] = str(here(value)) if value.startswith("/") else value
            elif word == "RUN":
                subprocess.run(["bash", "-c", rest], cwd=workdir, env=env, check=True)
            elif word == "EXPOSE":
                exposed += rest.split()
            elif word == "CMD":
                cmd = json.loads(rest)
            else:
                raise SystemExit(f"docker-replay: {word}: not replayed here; teach tools/check_dockerfile.py")
        if cmd is None:
            raise SystemExit("docker-replay: the Dockerfile has no CMD")
        # Leftovers of the build in the image's /app would be baked into every image.
        for litter in ("build",):
            if (here("/app") / litter).exists():
                raise SystemExit(f"docker-replay: `pip install` left {litter}/ in /app")

        # The index a deployment mounts at $SCHEMARAG_ARTIFACTS, built by the full install.
        artifacts = Path(env["SCHEMARAG_ARTIFACTS"])
        data = str(REPO / "data" / "schemas")
        build = ["build", "-q", "--db", "b2b_saas", "--data", data, "--artifacts", str(artifacts)]
        subprocess.run([args.full_python, "-m", "schemarag", *build], check=True)
        port = str(free_port())
        cmd = [port if part in exposed else part for part in cmd]
        env["SCHEMARAG_SERVE_API_KEYS"] = f"=sha256:{hashlib.sha256(KEY.encode()).hexdigest()}"
        log = root / "serve.log"
        with log.open("wb") as fh:
            proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=fh, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 300
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"docker-replay: CMD exited {proc.returncode}:\n{log.read_text()}")
                try:
                    if request(f"{base}/readyz")[0] == 200:
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit(f"docker-replay: not ready after 300 s:\n{log.read_text()}")
                time.sleep(0.5)
            status, body = request(f"{base}/v1/retrieve", {"database": "b2b_saas", "question": QUESTION}, KEY)
            if status != 200 or not {"invoices", "sales_reps"} <= {*body["tables"], *body["expanded_tables"]}:
                raise SystemExit(f"docker-replay: /v1/retrieve answered {status}: {body}")
            status, _ = request(f"{base}/v1/retrieve", {"database": "b2b_saas", "question": QUESTION})
            if status != 401:
                raise SystemExit(f"docker-replay: /v1/retrieve without a key answered {status}, not 401")
            print(f"docker-replay: CMD serves {base}: readyz 200, retrieve 200 with the key, 401 without")
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        shutil.rmtree(artifacts, ignore_errors=True)
    print("check-dockerfile: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
