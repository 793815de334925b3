"""``import dbt`` reads only inside the project folder the user named (issue 23, item 3).

Each test builds a real project on disk with real symlinks and ``..`` entries pointing at a
"secret" folder beside it, imports it, and checks that nothing of the secret reached the schema
JSON or the docs, and that each refused path got exactly one warning naming it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.schema import load_schema
from schemarag.tools.importers.dbt import import_dbt

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dbt_shop"
SECRET_MODEL = "select 1 as leaked_id, 'x' as leaked_secret\n"
SECRET_YML = """version: 2
models:
  - name: secret_model
    description: "SECRET description that must not be indexed"
    columns:
      - name: leaked_id
sources:
  - name: secret_src
    tables:
      - name: payroll
        columns:
          - name: salary
"""
SECRET_DOCS = "{% docs orders_status %}SECRET docs block{% enddocs %}\n"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """``(project, secret)``: a copy of dbt_shop and a folder outside it full of leakable files."""
    project, secret = tmp_path / "project", tmp_path / "secret"
    shutil.copytree(FIXTURE, project)
    secret.mkdir()
    (secret / "secret_model.sql").write_text(SECRET_MODEL)
    (secret / "secret.yml").write_text(SECRET_YML)
    (secret / "secret.md").write_text(SECRET_DOCS)
    (secret / "steal.sql").write_text("{% macro cents_to_dollars(c) %}'SECRET macro'{% endmacro %}\n")
    return project, secret


def _everything(out: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(out.rglob("*")) if p.is_file())


def _assert_nothing_leaked(out: Path) -> None:
    text = _everything(out)
    for word in ("leaked_", "SECRET", "secret_model", "payroll", "salary"):
        assert word not in text


def _warnings_naming(report, name: str) -> list[str]:
    return [w for w in report.warnings if name in w and "outside" in w]


def test_symlinked_files_out_of_models_are_refused_one_warning_each(layout, tmp_path):
    project, secret = layout
    staging = project / "models" / "staging"
    for name in ("secret_model.sql", "secret.yml", "secret.md"):
        (staging / name).symlink_to(secret / name)
    (project / "macros" / "steal.sql").symlink_to(secret / "steal.sql")
    report = import_dbt(project, tmp_path / "out")
    _assert_nothing_leaked(tmp_path / "out")
    for name in ("secret_model.sql", "secret.yml", "secret.md", "steal.sql"):
        assert len(_warnings_naming(report, name)) == 1, (name, report.warnings)
    assert report.tables == 8  # the project's own tables all still import


def test_symlinked_folder_out_of_the_project_is_refused_once(layout, tmp_path):
    project, secret = layout
    (project / "models" / "team").symlink_to(secret, target_is_directory=True)
    report = import_dbt(project, tmp_path / "out")
    _assert_nothing_leaked(tmp_path / "out")
    refused = _warnings_naming(report, "team")
    assert len(refused) == 1 and str(secret.resolve()) in refused[0]


def test_dotdot_in_project_paths_is_refused_with_one_warning_each(layout, tmp_path):
    project, _ = layout
    config = (project / "dbt_project.yml").read_text()
    config = config.replace('model-paths: ["models"]', 'model-paths: ["models", "../secret"]')
    config = config.replace('docs-paths: ["docs", "models"]', 'docs-paths: ["docs", "models", "../secret"]')
    config = config.replace('macro-paths: ["macros"]', 'macro-paths: ["macros", "../secret"]')
    (project / "dbt_project.yml").write_text(config + 'seed-paths: ["../../"]\n')
    report = import_dbt(project, tmp_path / "out")
    _assert_nothing_leaked(tmp_path / "out")
    # one folder named under three keys and walked in several passes: refused once, by the first key
    dotdot = [w for w in report.warnings if "'../secret'" in w]
    assert len(dotdot) == 1 and "model-paths entry '../secret'" in dotdot[0]
    assert len([w for w in report.warnings if "seed-paths entry '../../'" in w]) == 1
    assert report.tables == 8


def test_symlinks_that_stay_inside_are_followed_and_read_once(layout, tmp_path):
    project, _ = layout
    (project / "shared").mkdir()
    (project / "shared" / "stg_refunds.sql").write_text("select 1 as refund_id, 2.5 as amount\n")
    (project / "models" / "staging" / "shared").symlink_to(project / "shared", target_is_directory=True)
    again = project / "models" / "staging" / "stg_refunds_again.sql"
    again.symlink_to(project / "shared" / "stg_refunds.sql")
    (project / "models" / "loop").symlink_to(project / "models", target_is_directory=True)
    report = import_dbt(project, tmp_path / "out")
    db = load_schema(tmp_path / "out" / "dbt_shop.json")
    assert [c.name for c in db.table("stg_refunds").columns] == ["refund_id", "amount"]
    assert not any("outside" in w or "used twice" in w for w in report.warnings), report.warnings
    assert report.tables == 9


def test_project_file_that_is_a_symlink_out_is_an_error(layout, tmp_path):
    project, secret = layout
    (secret / "dbt_project.yml").write_text((project / "dbt_project.yml").read_text())
    (project / "dbt_project.yml").unlink()
    (project / "dbt_project.yml").symlink_to(secret / "dbt_project.yml")
    with pytest.raises(ImportFormatError, match=r"dbt_project\.yml.*outside"):
        import_dbt(project, tmp_path / "out")
