"""Importers stay inside the folder the user named: symlinks and ``..`` that leave it are refused."""

from __future__ import annotations

from pathlib import Path

from schemarag.tools.importers.safe_paths import files_inside, inside


def test_symlink_out_of_the_root_is_refused_with_one_warning(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "secret"
    (root / "models").mkdir(parents=True)
    outside.mkdir()
    (outside / "leak.sql").write_text("select 1")
    (root / "models" / "ok.sql").write_text("select 2")
    (root / "models" / "leak.sql").symlink_to(outside / "leak.sql")
    warnings: list[str] = []
    kept = files_inside(root, sorted((root / "models").iterdir()), warnings)
    assert kept == [root / "models" / "ok.sql"]
    assert len(warnings) == 1 and "leak.sql" in warnings[0] and "outside" in warnings[0]


def test_dotdot_and_symlink_inside_the_root_are_fine(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "t.yml").write_text("x")
    (tmp_path / "a" / "b" / "link.yml").symlink_to(tmp_path / "a" / "t.yml")
    warnings: list[str] = []
    assert (
        inside(tmp_path, tmp_path / "a" / "b" / ".." / "t.yml", warnings)
        == (tmp_path / "a" / "t.yml").resolve()
    )
    assert (
        inside(tmp_path, tmp_path / "a" / "b" / "link.yml", warnings) == (tmp_path / "a" / "t.yml").resolve()
    )
    assert inside(tmp_path / "a", tmp_path / "a" / ".." / "t.yml", warnings) is None
    assert len(warnings) == 1


def test_symlink_loop_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    warnings: list[str] = []
    assert inside(tmp_path, tmp_path / "loop", warnings) is None
    assert "cannot resolve" in warnings[0]
