"""The notebook in examples/python runs to its end, and the outputs committed with it are the
ones it gives now (its text and tables; the plot's pixels are not compared). Skipped without
Jupyter's nbconvert, ipykernel and matplotlib."""

import pytest

from conftest import ROOT

NOTEBOOK = ROOT / "examples" / "python" / "lossy_flow.ipynb"


def texts(notebook):
    """Each code cell's text outputs."""
    return [
        ["".join(o.get("data", {}).get("text/plain", o.get("text", ""))) for o in cell.get("outputs", [])]
        for cell in notebook.cells
        if cell.cell_type == "code"
    ]


def test_the_notebook_runs_and_its_outputs_are_current():
    nbformat = pytest.importorskip("nbformat")
    execute = pytest.importorskip("nbconvert.preprocessors")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    committed = nbformat.read(NOTEBOOK, as_version=4)
    ran = nbformat.read(NOTEBOOK, as_version=4)
    execute.ExecutePreprocessor(timeout=120).preprocess(ran, {"metadata": {"path": str(NOTEBOOK.parent)}})
    assert texts(ran) == texts(committed)
    assert any("image/png" in o.get("data", {}) for cell in ran.cells for o in cell.get("outputs", [])), "the plot"
