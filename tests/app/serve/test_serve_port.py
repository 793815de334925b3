"""``schemarag serve`` binds before it says where it listens: a taken port is one line, exit 2."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path


def test_a_taken_port_is_one_line_before_any_url(serve_artifacts: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["serve", "--artifacts", str(serve_artifacts), "--port", str(port)]
        proc = subprocess.run(
            [sys.executable, "-m", "schemarag", *argv], capture_output=True, text=True, timeout=300
        )
    assert proc.returncode == 2, proc.stderr
    assert "http://" not in proc.stdout + proc.stderr  # no URL for a server that never listened
    errors = [line for line in proc.stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and f"127.0.0.1:{port} is already in use" in errors[0]
    assert "choose another --port" in errors[0] and "Traceback" not in proc.stderr
