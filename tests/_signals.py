"""Start a child with the signal dispositions a test needs, never the ones its caller left.

A script's background job, ``nohup`` and some CI wrappers start ``make test`` with SIGINT (or SIGHUP)
ignored, and a child inherits an ignored signal through ``exec``; a test that sends one must set it
itself. :func:`with_signals` prefixes a command with a small ``exec`` that sets them first.
"""
from __future__ import annotations

import signal
import sys

_EXEC = ("import os, signal, sys; "
         "[signal.signal(int(s), int(h)) for s, h in zip(*[iter(sys.argv[1].split(','))] * 2)]; "
         "os.execv(sys.argv[2], sys.argv[2:])")


def with_signals(cmd: list[str], default=(signal.SIGINT, signal.SIGTERM, signal.SIGHUP), ignored=()) -> list[str]:
    """``cmd`` run with the signals ``default`` at their default action and ``ignored`` ignored, whatever this
    process has; ``cmd[0]`` is an executable's path."""
    pairs = [f"{int(s)},{int(signal.SIG_DFL)}" for s in default if s not in ignored] + \
        [f"{int(s)},{int(signal.SIG_IGN)}" for s in ignored]
    return [sys.executable, "-c", _EXEC, ",".join(pairs), *cmd]
