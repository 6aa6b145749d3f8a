"""The tests make the conditions they test: none of the project's own settings (``PAPER_LIB_*``: publishing, the
kernel start timeout, the figure check, a runner's run, the token file) leaks in from the shell that started
``make test`` (``make bench`` exports ``PAPER_LIB_PUBLISH=1``; a user may too); a test that needs one sets it."""
from __future__ import annotations

import os

for _key in [k for k in os.environ if k.startswith("PAPER_LIB_")]:
    del os.environ[_key]
