"""The package installs on Colab's GPU image without upgrading what Colab brings: every requirement of
pyproject.toml (and of its `cuda` extra) admits Colab's versions (August 2026, googlecolab/backend-info), and its
Python. `pip install --dry-run -e .[cuda]` in a Python 3.13 environment with exactly these versions reports
nothing to install but the package; the chapters' run on that stack is in book/setup.md."""

import os

import pytest

tomllib = pytest.importorskip("tomllib")
requirements = pytest.importorskip("packaging.requirements")
specifiers = pytest.importorskip("packaging.specifiers")

COLAB = {"python": "3.13", "numba": "0.61.2", "numba-cuda": "0.22.2", "numpy": "2.1.3", "ipywidgets": "7.7.1"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def test_requirements_admit_colabs_versions():
    project = _project()
    reqs = [requirements.Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["cuda"]]
    checked = []
    for r in reqs:
        if r.name in COLAB:
            assert r.specifier.contains(COLAB[r.name]), "%s does not admit Colab's %s" % (r, COLAB[r.name])
            checked.append(r.name)
    assert sorted(checked) == sorted(n for n in COLAB if n != "python")
    assert specifiers.SpecifierSet(project["requires-python"]).contains(COLAB["python"])
