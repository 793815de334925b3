"""The datasources file, name checks, env: resolution and PII detection."""

from __future__ import annotations

import pytest

from schemarag.assets.lib.datasources.config import get_datasource, load_datasources
from schemarag.assets.lib.datasources.pii import pii_reason
from schemarag.runtime.core.errors import ConfigError


def write(tmp_path, text: str):
    path = tmp_path / "datasources.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_loads_entries_with_defaults_and_relative_paths(tmp_path):
    path = write(
        tmp_path,
        "datasources:\n"
        "  - {name: shop, kind: sqlite, tenant: acme, connection: live/shop.sqlite}\n"
        "  - name: wh\n    kind: postgres\n    tenant: acme\n    connection: env:WH_DSN\n"
        "    sampling: {max_values: 5}\n",
    )
    shop, wh = load_datasources(path)
    assert shop.connection_path() == tmp_path / "live" / "shop.sqlite"
    assert shop.effective_schemas() == ["main"] and wh.effective_schemas() == ["public"]
    assert wh.sampling.max_values == 5 and wh.sampling.max_distinct == 200
    assert get_datasource("WH", path).name == "wh"


def test_env_var_is_resolved_and_never_echoed(tmp_path, monkeypatch):
    path = write(
        tmp_path, "datasources:\n  - {name: wh, kind: postgres, tenant: t, connection: 'env:WH_DSN'}\n"
    )
    monkeypatch.setenv("WH_DSN", "postgresql://u:topsecret@h/db")
    assert get_datasource("wh", path).resolve_connection() == "postgresql://u:topsecret@h/db"
    monkeypatch.setenv("WH_DSN", "")
    with pytest.raises(ConfigError, match=r"datasource 'wh'.*WH_DSN, which is not set or empty") as info:
        get_datasource("wh", path).resolve_connection()
    assert "topsecret" not in str(info.value)


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        (
            "datasources:\n  - {name: a, kind: oracle, tenant: t, connection: x}\n",
            r"datasources\[0\] \(name 'a'\)\.kind",
        ),
        (
            "datasources:\n  - {name: a, tenant: t, connection: x}\n",
            r"datasources\[0\] \(name 'a'\)\.kind: Field required",
        ),
        (
            "datasources:\n  - {name: a, kind: sqlite, tenant: t, connection: x, colour: red}\n",
            r"\.colour: Extra",
        ),
        (
            "datasources:\n  - {name: a, kind: sqlite, tenant: t, connection: x,\n"
            "     sampling: {max_values: -1}}\n",
            r"sampling\.max_values",
        ),
        ("datasources: [\n", r"invalid YAML at line"),
        ("- just a list\n", r"top level must be a mapping"),
        (
            "datasources:\n  - {name: a, kind: sqlite, tenant: t, connection: x}\n"
            "  - {name: A, kind: sqlite, tenant: t, connection: y}\n",
            r"'A' appears twice",
        ),
    ],
)
def test_config_errors_name_file_entry_and_field(tmp_path, yaml_text, expected):
    path = write(tmp_path, yaml_text)
    with pytest.raises(ConfigError, match=expected) as info:
        load_datasources(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("field", ["name", "tenant"])
@pytest.mark.parametrize("bad", ["../etc", "a/b", "..", "a\\\\b", "_tenants", "_cache", ".hidden"])
def test_unsafe_names_are_rejected(tmp_path, field, bad):
    values = {"name": "ok", "tenant": "ok", field: bad}
    path = write(
        tmp_path,
        f"datasources:\n  - {{name: '{values['name']}', kind: sqlite, connection: x,\n"
        f"     tenant: '{values['tenant']}'}}\n",
    )
    with pytest.raises(ConfigError, match=rf"\.{field}: invalid"):
        load_datasources(path)


def test_missing_file_and_unknown_name(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="datasources file not found"):
        load_datasources(tmp_path / "nope.yaml")
    path = write(tmp_path, "datasources:\n  - {name: a, kind: sqlite, tenant: t, connection: x}\n")
    monkeypatch.setenv("SCHEMARAG_DATASOURCES", str(path))
    with pytest.raises(ConfigError, match=r"no datasource named 'b' \(defined: a\)"):
        get_datasource("b")
    with pytest.raises(ValueError, match=r"invalid datasource name '\.\./a'"):
        get_datasource("../a")


@pytest.mark.parametrize(
    ("column", "reason"),
    [
        ("password_hash", "secret"),
        ("PasswordHash", "secret"),
        ("api_key", "secret"),
        ("apiKey", "secret"),
        ("refresh_token", "secret"),
        ("ssn", "government_id"),
        ("credit_card_number", "financial"),
        ("customer_email", "contact"),
        ("phone", "contact"),
        ("date_of_birth", "personal"),
        ("city", None),
        ("author", None),
        ("tokens_used", None),
        ("status", None),
        ("shipping_method", None),
    ],
)
def test_pii_detection_by_name(column, reason):
    assert pii_reason(column) == reason


def test_import_stays_light():
    """The runtime package must not drag in Dagster or any database driver at import time."""
    import subprocess
    import sys

    code = (
        "import sys, schemarag.assets.lib.datasources, schemarag.assets.lib.docs_writer;"
        "import schemarag.pipelines.commands.docs_cmd;"
        "print(sorted(m for m in ('dagster', 'duckdb', 'psycopg', 'markdown_it') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
