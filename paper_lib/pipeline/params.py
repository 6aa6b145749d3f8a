"""Check a notebook's parameters, however it was run (the runner, papermill by hand, Jupyter).

Papermill only warns about a parameter the notebook lacks (``-p profle smoke`` runs at the default profile).
So every notebook calls :func:`check_parameters` with ``globals()`` after its ``parameters`` cell: the
kernel's input history (``In``) holds that cell and papermill's injected one (``# Parameters``), whose names
are compared. The runner checks the values before it starts a kernel (:func:`check_values`). In Jupyter, a bad
setting is one line under the cell that read it, scrolled into view (:func:`one_line_errors`). Our design.
"""
from __future__ import annotations

import ast
from typing import Any, Iterable, Mapping

from .profiles import SettingError, check_profile, get_profile
from .settings import check_seed_list

INJECTED_MARK = "# Parameters"  # the first line of the cell papermill injects


def assigned_names(source: str) -> list[str]:
    """The names a cell's source assigns at top level (``a = 1``, ``b: int = 2``), in order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def injected_parameters(history: Iterable[str]) -> tuple[list[str], list[str]] | None:
    """``(defined, injected)``: the names of the ``parameters`` cell and of papermill's injected cell, from a
    kernel's input history (``In``); ``None`` when nothing was injected (Jupyter)."""
    history = list(history)
    for i in range(len(history) - 1, 0, -1):
        if history[i].lstrip().startswith(INJECTED_MARK):
            return assigned_names(history[i - 1]), assigned_names(history[i])
    return None


def check_values(values: Mapping[str, Any]) -> None:
    """Check the shared parameters: ``profile`` known; ``overrides`` a dict whose ``seeds``, if given, are
    distinct integers (the rest is the notebook's ``settings_for``'s). Raises SettingError (a ValueError): one
    line, also as a notebook's error in Jupyter and plain papermill."""
    if "profile" in values:
        check_profile(values["profile"])
    overrides = values.get("overrides", {})
    if overrides is not None and not isinstance(overrides, Mapping):
        raise SettingError("overrides must be a dict of setting -> value, e.g. {\"seeds\": [0, 1]}, "
                           f"got {overrides!r}")
    if overrides and "seeds" in overrides:
        check_seed_list(overrides["seeds"], "overrides['seeds']")


def check_parameters(namespace: Mapping[str, Any]) -> None:
    """Validate a notebook's parameters, as ``check_parameters(globals())``: no injected name the ``parameters``
    cell lacks, the values (:func:`check_values`), under the runner its ``--profile``; shows a profile's banner.
    Raises ValueError: one line naming the wrong parameter and the allowed ones."""
    from .provenance import runner_run

    defined, injected = injected_parameters(namespace.get("In", [])) or ([], [])
    if unknown := sorted(set(injected) - set(defined)):
        raise SettingError(f"unknown notebook parameter(s) {', '.join(unknown)}; allowed: {', '.join(sorted(defined))}")
    check_values(namespace)
    run = runner_run()
    if run is not None and namespace.get("profile") != run["profile"]:
        raise SettingError(f"profile {namespace.get('profile')!r} differs from the runner's --profile "
                           f"{run['profile']!r}; set the profile only with --profile")
    if "get_ipython" in namespace and run is None and not injected:
        one_line_errors(namespace["get_ipython"]())
    banner = get_profile(namespace["profile"]).banner if "profile" in namespace else ""
    if banner and "get_ipython" in namespace:
        from IPython.display import Markdown, display

        display(Markdown(f"**{banner}**"))


SETTINGS_FRAMES = ("settings_for", "check_parameters", "check_values", "apply_overrides", "configure")
"""Functions that read the parameters: an error raised through one of them is a bad parameter."""


def one_line_errors(shell) -> None:
    """Make IPython ``shell`` (Jupyter's kernel) show a ``ValueError`` or ``TypeError`` raised while a notebook reads
    its parameters (through :data:`SETTINGS_FRAMES`) as one line, as the runner does, and scroll its cell into
    view (Run All leaves the view on the last cell); any other error keeps its traceback."""
    import traceback

    def handler(self, etype, value, tb, tb_offset=None):
        if not any(f.name in SETTINGS_FRAMES for f in traceback.extract_tb(tb)):
            return self.showtraceback((etype, value, tb), tb_offset=tb_offset)
        from IPython.display import Javascript, display

        display(Javascript("element.closest('.jp-Cell')?.scrollIntoView({block: 'center'})"))
        self._showtraceback(etype, value, [f"\x1b[0;31m{etype.__name__}\x1b[0m: {value}"])
        return None
    shell.set_custom_exc((ValueError, TypeError), handler)
