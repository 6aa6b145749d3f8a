"""IPython extension the notebook runner loads into its kernel: progress bars as text.

Inside any Jupyter kernel ``tqdm.auto`` draws ipywidgets bars, which a terminal cannot show and an executed
notebook keeps only as ``HBox(...)``. A headless run has no browser, so the runner starts its kernel with
``--IPKernelApp.extensions=paper_lib.pipeline.headless`` and ``tqdm.auto`` then draws text bars on stderr, which
the runner streams to the terminal (``make all`` shows them live). In JupyterLab, with the ``notebook`` extra's
ipywidgets, the same notebook code draws widget bars. Our design: the paper is silent."""
from __future__ import annotations

import sys


def load_ipython_extension(ipython) -> None:
    """IPython's hook, called once when the kernel starts: ``from tqdm.auto import tqdm`` gives the text bar."""
    import tqdm.std

    sys.modules["tqdm.autonotebook"] = tqdm.std  # tqdm.auto takes its class from tqdm.autonotebook
