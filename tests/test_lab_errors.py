"""A bad parameter in JupyterLab is one line under the cell that read it, as the runner says it, scrolled
into view; any other error keeps its traceback. A kernel runs a small notebook the way Jupyter does (no
papermill, no runner)."""
from __future__ import annotations

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

FIRST = ('from paper_lib.pipeline.params import check_parameters\nprofile = "smoke"\noverrides = {}\n'
         "check_parameters(globals())")
BAD = ('def settings_for(profile, overrides):\n    raise ValueError("update_recall.sigma=0.02: must be one of sigmas '
       '[0.0, 0.01] (add it there)")\nsettings_for(profile, {"sigmas": [0.0, 0.01]})')


def _run(*sources):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=False)
    try:
        client.execute()
    except CellExecutionError:
        pass
    return nb


def test_a_bad_setting_is_one_line_and_brought_into_view():
    nb = _run(FIRST, BAD, "print('never runs')")
    outputs = nb.cells[1].outputs
    error = next(o for o in outputs if o.output_type == "error")
    assert error.ename == "ValueError" and len(error.traceback) == 1                       # one line
    assert error.traceback[0].endswith("ValueError\x1b[0m: update_recall.sigma=0.02: must be one of sigmas "
                                       "[0.0, 0.01] (add it there)")
    assert any("scrollIntoView" in o.get("data", {}).get("application/javascript", "") for o in outputs)
    assert not nb.cells[2].outputs                                                         # Run All stops there


def test_any_other_error_keeps_its_traceback():
    nb = _run(FIRST, "def f():\n    raise ValueError('deep in a library')\nf()")
    error = next(o for o in nb.cells[1].outputs if o.output_type == "error")
    assert error.ename == "ValueError" and len(error.traceback) > 2
