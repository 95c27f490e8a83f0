"""ANNOTATE_TEST_DATA points the real-data tests at a folder of GLUE/SuperGLUE files; a file
missing there skips, except under CI=true, where it fails."""

from __future__ import annotations

import pytest

from tests import conftest


def test_the_variable_names_the_folder(tmp_path, monkeypatch):
    (tmp_path / "glue" / "rte").mkdir(parents=True)
    (tmp_path / "glue" / "rte" / "dev.tsv").write_text("index\tsentence1\n", encoding="utf-8")
    monkeypatch.setenv("ANNOTATE_TEST_DATA", str(tmp_path))
    assert conftest.shared_data() == tmp_path
    assert conftest.shared_file("glue/rte/dev.tsv") == tmp_path / "glue" / "rte" / "dev.tsv"


def test_without_it_the_folder_beside_the_project(monkeypatch):
    monkeypatch.delenv("ANNOTATE_TEST_DATA", raising=False)
    assert conftest.shared_data() == conftest.PROJECT_ROOT.parent / "shared" / "data"


def test_a_missing_file_skips_and_says_how_to_point_at_the_data(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATE_TEST_DATA", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="ANNOTATE_TEST_DATA=DIR"):
        conftest.shared_file("glue/rte/dev.tsv")


def test_under_ci_a_missing_file_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATE_TEST_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        conftest.shared_file("glue/rte/dev.tsv")
