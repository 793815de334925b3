"""API keys -> tenants: hashed at rest, compared in constant time.

A key file (TOML, read with the standard library) lists SHA-256 digests, never keys::

    [[keys]]
    tenant = "acme"            # serves artifacts/_tenants/acme/<db>/
    sha256 = "9f86d081..."     # sha256 of the key, hex
    [[keys]]
    sha256 = "..."             # no tenant: the default namespace, artifacts/<db>/

or the environment: ``SCHEMARAG_SERVE_API_KEYS="acme=sha256:HEX,=sha256:HEX"``. SHA-256 (not
scrypt) is the right hash here: keys are 256-bit random strings from :func:`new_key`, so there
is nothing to brute-force and a slow hash would only cost every request. The presented key's
digest is compared with *every* entry by :func:`hmac.compare_digest`, so timing reveals neither
which entry matched nor how many bytes did.

>>> key, line = new_key("acme")
>>> line.startswith("export SCHEMARAG_SERVE_API_KEYS='acme=sha256:")
True
>>> store = KeyStore.parse_env(line.split("=", 1)[1].strip("'"))
>>> store.tenant_for(key).tenant, store.tenant_for("wrong")
('acme', None)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import tomllib
from dataclasses import dataclass
from pathlib import Path

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.names import check_name

KEY_PREFIX = "sr_"


@dataclass(frozen=True)
class Principal:
    """Who is calling: ``tenant`` None means the default namespace (``artifacts/<db>/``)."""

    tenant: str | None
    key_id: str = "anonymous"  # first hex digits of the digest: safe to log, names the key


ANONYMOUS = Principal(None)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key(tenant: str | None) -> tuple[str, str]:
    """A fresh random key and the shell line that grants it (only its hash is stored):
    ``export SCHEMARAG_SERVE_API_KEYS='acme=sha256:HEX'``, which a POSIX shell takes as printed."""
    if tenant:
        check_name(tenant, "tenant")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    return key, f"export SCHEMARAG_SERVE_API_KEYS='{tenant or ''}=sha256:{digest(key)}'"


def _entry(tenant: object, hexdigest: object, where: str) -> tuple[str, Principal]:
    if not isinstance(hexdigest, str) or len(hexdigest) != 64:
        raise ConfigError(f"{where}: sha256 must be 64 hex digits, got {hexdigest!r}")
    try:
        bytes.fromhex(hexdigest)
    except ValueError:
        raise ConfigError(f"{where}: sha256 {hexdigest!r} is not hex") from None
    if tenant in (None, ""):
        tenant = None
    elif not isinstance(tenant, str):
        raise ConfigError(f"{where}: tenant must be a string, got {tenant!r}")
    else:
        try:
            check_name(tenant, "tenant")
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return hexdigest.lower(), Principal(tenant, hexdigest[:8].lower())


class KeyStore:
    """The configured keys; empty means the server is open (and must stay on loopback)."""

    def __init__(self, entries: list[tuple[str, Principal]]) -> None:
        self._entries = [(bytes.fromhex(h), p) for h, p in entries]

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def tenants(self) -> list[str | None]:
        return sorted({p.tenant for _, p in self._entries}, key=lambda t: t or "")

    def tenant_for(self, key: str | None) -> Principal | None:
        """The principal of ``key``, or None for a missing/unknown key (constant-time match)."""
        if not key:
            return None
        presented = hashlib.sha256(key.encode("utf-8", "replace")).digest()
        found = None
        for stored, principal in self._entries:  # no early exit: every entry costs the same
            if hmac.compare_digest(stored, presented):
                found = principal
        return found

    @classmethod
    def parse_env(cls, value: str) -> KeyStore:
        entries = []
        for i, item in enumerate(p.strip() for p in value.split(",")):
            if not item:
                continue
            tenant, sep, rest = item.partition("=")
            algo, colon, hexdigest = rest.partition(":")
            where = f"SCHEMARAG_SERVE_API_KEYS item {i + 1}"
            if not sep or not colon or algo != "sha256":
                raise ConfigError(f"{where}: expected 'tenant=sha256:HEX' (tenant may be empty)")
            entries.append(_entry(tenant.strip(), hexdigest.strip(), where))
        return cls(entries)

    @classmethod
    def load_file(cls, path: Path) -> KeyStore:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: keys file not found; create it or drop --keys") from None
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read keys file: {exc}") from None
        keys = data.get("keys", [])
        if not isinstance(keys, list):
            raise ConfigError(f"{path}: 'keys' must be an array of tables ([[keys]])")
        entries = []
        for i, item in enumerate(keys):
            where = f"{path}: keys[{i}]"
            if not isinstance(item, dict):
                raise ConfigError(f"{where}: expected a table with 'sha256' and optional 'tenant'")
            entries.append(_entry(item.get("tenant"), item.get("sha256"), where))
        return cls(entries)

    @classmethod
    def from_settings(cls, keys_file: Path | None, api_keys: str) -> KeyStore:
        """File entries plus environment entries (either may be empty)."""
        store = cls([])
        if keys_file is not None:
            store._entries += cls.load_file(keys_file)._entries
        if api_keys.strip():
            store._entries += cls.parse_env(api_keys)._entries
        return store


def bearer_key(authorization: str | None, x_api_key: str | None) -> str | None:
    """The key from ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``."""
    if x_api_key:
        return x_api_key.strip()
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return None
