"""Server settings: ``SCHEMARAG_SERVE_*`` environment variables, typed and checked once at start.

The command line writes its flags into the environment before uvicorn starts, because with
``--workers N`` every worker process builds its own app from the environment (uvicorn's
``factory=True``); one source of truth keeps the parent and the workers in agreement.

>>> s = ServeSettings(artifacts="artifacts")
>>> s.max_question_chars, s.loopback
(4000, True)
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemarag.runtime.core.errors import ConfigError

ENV_PREFIX = "SCHEMARAG_SERVE_"


def _default_threads() -> int:
    """Search threads per worker: one per core, at least 2 so one slow request never stalls the rest."""
    return max(2, os.cpu_count() or 1)


class ServeSettings(BaseSettings):
    """Everything ``schemarag serve`` and ``schemarag mcp`` can be told (flags or environment)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    artifacts: Path = Field(default=Path("artifacts"), description="artifacts folder served")
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    workers: int = Field(default=1, ge=1, le=64)
    keys_file: Path | None = Field(default=None, description="TOML file of hashed API keys")
    api_keys: str = Field(default="", description="hashed keys inline: 'tenant=sha256:HEX,...'")
    threads: int = Field(default_factory=_default_threads, ge=1, le=256)
    max_inflight: int = Field(default=256, ge=1, description="requests in progress per worker; more -> 503")
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    max_question_chars: int = Field(default=4000, ge=10)
    max_sql_chars: int = Field(default=100_000, ge=10)
    max_top_k: int = Field(default=100, ge=1)
    request_timeout: float = Field(default=30.0, gt=0)
    header_timeout: float = Field(
        default=10.0, gt=0, le=300, description="seconds for a request head to arrive (protocol.py)"
    )
    log_questions: bool = Field(default=False, description="include question text in access logs")
    refresh_seconds: float = Field(default=2.0, ge=0)
    mcp: bool = Field(default=True, description="mount the MCP streamable-HTTP endpoint at /mcp")
    query_cache: bool = Field(default=True, description="reuse embeddings of repeated questions")

    @property
    def loopback(self) -> bool:
        """Whether ``host`` only accepts local connections (what an unkeyed server must bind to)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @classmethod
    def load(cls, **overrides: object) -> ServeSettings:
        """Settings from the environment, with ``overrides`` (non-None flags) on top."""
        given = {k: v for k, v in overrides.items() if v is not None}
        try:
            return cls(**given)  # type: ignore[arg-type]
        except ValidationError as exc:
            bad = "; ".join(
                f"{ENV_PREFIX}{'.'.join(map(str, e['loc'])).upper()}={e.get('input')!r}: {e['msg']}"
                for e in exc.errors()
            )
            raise ConfigError(f"server settings (flag or environment): {bad}") from None

    def to_env(self) -> dict[str, str]:
        """These settings as ``SCHEMARAG_SERVE_*`` variables, for the worker processes."""
        out: dict[str, str] = {}
        for name, value in self.model_dump().items():
            if value is None:
                continue
            out[ENV_PREFIX + name.upper()] = str(value).lower() if isinstance(value, bool) else str(value)
        return out
