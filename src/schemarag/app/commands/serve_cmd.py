"""``schemarag serve``: the HTTP API (and MCP at ``/mcp``) over an artifacts folder.

    schemarag serve --artifacts DIR [--host 127.0.0.1] [--port 8765] [--workers N] [--keys FILE]
    schemarag serve --new-key TENANT      # print a fresh API key and the hash line that grants it

Without API keys the server is open, so it refuses any bind address but loopback and says so.
Flags become ``SCHEMARAG_SERVE_*`` variables, which is how ``--workers`` processes get them.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.paths import artifacts_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port (default 8765)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default 1)")
    parser.add_argument(
        "--threads", type=int, default=None, help="search threads per worker (default: cores)"
    )
    parser.add_argument("--keys", default=None, help="TOML file of hashed API keys (see docs/serving.md)")
    parser.add_argument("--no-mcp", action="store_true", help="do not mount the MCP endpoint at /mcp")
    parser.add_argument("--no-access-log", action="store_true", help="no per-request log line")
    parser.add_argument("--log-questions", action="store_true", help="include question text in access logs")
    parser.add_argument("--new-key", metavar="TENANT", default=None,
                        help="print a new API key for TENANT ('' = default namespace) and exit")  # fmt: skip


def _configure_logging(access: bool) -> None:
    access_log = logging.getLogger("schemarag.access")
    if access:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        access_log.addHandler(handler)
        access_log.setLevel(logging.INFO)
        access_log.propagate = False
    logging.getLogger("schemarag.app.serve").setLevel(logging.INFO)


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def run(args: argparse.Namespace) -> int:
    if args.new_key is not None:
        from schemarag.app.serve.keys import new_key

        key, line = new_key(args.new_key or None)
        print(f"API key (give it to the client; it is not stored anywhere): {key}")
        print("grant it in the shell that starts the server (other keys: join them with commas):")
        print(line)
        hexdigest = line.rsplit(":", 1)[1].rstrip("'")
        print(f'or in a keys file:\n[[keys]]\ntenant = "{args.new_key}"\nsha256 = "{hexdigest}"')
        return 0

    import uvicorn

    from schemarag.app.serve.keys import KeyStore
    from schemarag.app.serve.protocol import HeaderTimeoutProtocol
    from schemarag.app.serve.settings import ServeSettings

    settings = ServeSettings.load(
        artifacts=artifacts_dir(args.artifacts), host=args.host, port=args.port, workers=args.workers,
        threads=args.threads, keys_file=args.keys, mcp=False if args.no_mcp else None,
        log_questions=True if args.log_questions else None,
    )  # fmt: skip
    keys = KeyStore.from_settings(settings.keys_file, settings.api_keys)
    if not settings.artifacts.is_dir():
        raise ConfigError(f"--artifacts {settings.artifacts}: no such folder; run `schemarag build` first")
    if not len(keys):
        if not settings.loopback:
            raise ConfigError(
                f"--host {settings.host}: no API keys are configured, so the server only binds to "
                "loopback (127.0.0.1, ::1, localhost); add keys with --keys FILE or "
                "SCHEMARAG_SERVE_API_KEYS (create one with `schemarag serve --new-key TENANT`)"
            )
        print("schemarag serve: no API keys configured: open access to the default namespace, "
              "bound to loopback only", file=sys.stderr)  # fmt: skip
    else:
        tenants = ", ".join(t or "(default)" for t in keys.tenants)
        print(f"schemarag serve: {len(keys)} API key(s) for tenant(s) {tenants}", file=sys.stderr)
    _configure_logging(not args.no_access_log)
    os.environ.update(settings.to_env())
    metrics_dir = None
    if settings.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        metrics_dir = tempfile.mkdtemp(prefix="schemarag-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    sock = bind_socket(settings.host, settings.port)  # a taken port is one line, before any URL
    port = sock.getsockname()[1]
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    print(
        f"schemarag serve: {settings.artifacts} on http://{shown}:{port} "
        f"({settings.workers} worker(s) x {settings.threads} search threads; docs at /docs, MCP at /mcp)",
        file=sys.stderr,
    )
    # uvicorn shuts down gracefully on SIGTERM (stops accepting, finishes in-flight requests,
    # runs the lifespan shutdown) and then re-raises the signal; this handler turns that final
    # signal into a clean exit status 0 instead of death by signal.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    common = {
        "host": settings.host,
        "port": settings.port,
        "access_log": False,  # ours: one structured line per request
        "log_level": "warning",
        "timeout_graceful_shutdown": int(settings.request_timeout) + 5,
        "server_header": False,
        # closes a connection whose request head is not complete in SCHEMARAG_SERVE_HEADER_TIMEOUT s
        "http": HeaderTimeoutProtocol,
    }
    try:
        if settings.workers > 1:
            from uvicorn.supervisors import Multiprocess

            target = "schemarag.app.serve.app:app_from_env"
            config = uvicorn.Config(target, factory=True, workers=settings.workers, **common)
            Multiprocess(config, sockets=[sock]).run()  # what uvicorn.run does, on our socket
        else:
            from schemarag.app.serve.app import create_app

            server = uvicorn.Server(uvicorn.Config(create_app(settings, keys), **common))
            server.run(sockets=[sock])
            if not server.started:
                return 1
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        if metrics_dir:  # the workers' metric files are ours; do not leave them in /tmp
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def bind_socket(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything says where the server is.

    uvicorn would bind after its start-up and exit with its own log lines; binding here turns a
    taken port (or an address this machine does not have) into one line naming the fix, and the
    URL printed afterwards is one that answers. Same options as uvicorn's ``Config.bind_socket``.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"--port {port}: {host}:{port} is already in use (another `schemarag serve`?); "
                "stop it or choose another --port"
            ) from None
        raise ConfigError(f"--host {host} --port {port}: cannot listen there: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock
