"""``SCHEMARAG_LLM_*`` settings for the chat client, typed and validated by pydantic-settings.

One model instead of hand-parsed ``os.environ`` lookups: every value is typed, an empty variable
counts as unset, the API key is a :class:`~pydantic.SecretStr` (never shown in reprs or logs),
and a bad value becomes one :class:`~schemarag.runtime.core.errors.ConfigError` naming the variable.

Example:
    >>> s = LLMSettings.load({"SCHEMARAG_LLM_BASE_URL": "http://127.0.0.1:11434/v1",
    ...                       "SCHEMARAG_LLM_MODEL": "m", "SCHEMARAG_LLM_API_KEY": "sk-1"})
    >>> s.timeout, s.max_response_bytes, s.api_key
    (60.0, 4194304, SecretStr('**********'))
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemarag.runtime.core.errors import ConfigError

PREFIX = "SCHEMARAG_LLM_"


class LLMSettings(BaseSettings):
    """The chat endpoint and the bounds on every call to it."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, extra="ignore")

    base_url: str = ""
    model: str = ""
    api_key: SecretStr | None = None
    timeout: float = Field(60.0, gt=0)  # seconds per phase: connect, write, each read, pool
    max_retries: int = Field(2, ge=0)  # retries after the first attempt (429, 5xx, transport errors)
    # Total seconds for one chat() call, retries and backoff included; a server trickling bytes
    # cannot hold a call longer. Default: timeout x (max_retries + 2) + the backoff waits.
    deadline: float | None = Field(None, gt=0)
    max_response_bytes: int = Field(4 * 1024 * 1024, gt=0)  # a body past this is cut off: an error
    json_mode: bool = False  # send response_format {"type": "json_object"}

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None) -> LLMSettings:
        """From the process environment, or from ``env`` only (tests, embedding applications)."""
        try:
            if env is None:
                return cls()
            # model_validate skips the environment sources: only ``env`` counts.
            values = {
                name: env[PREFIX + name.upper()]
                for name in cls.model_fields
                if (env.get(PREFIX + name.upper()) or "").strip()
            }
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{PREFIX}{'.'.join(map(str, e['loc'])).upper()}={_shown(e)}: {e['msg']}"
                for e in exc.errors()
            )
            raise ConfigError(f"invalid LLM setting: {problems}") from None


def _shown(error: dict) -> str:
    """The offending value for a message, except for the key."""
    if error["loc"] and error["loc"][0] == "api_key":
        return "***"
    return repr(error.get("input"))
