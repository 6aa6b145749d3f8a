"""Run profiles, each one :class:`Profile` record: ``smoke`` (seconds, for tests), ``cpu`` (the default: the
full study on a 2-core laptop), ``paper`` (the paper's scale, for a GPU node) and ``gpu`` (ours: notebooks 03 and
04's language models sized for one GPU). Other modules ask the record (:func:`get_profile`), never the name;
what a profile changes in the settings is :data:`paper_lib.profile_settings.PROFILE_SETTINGS`. Standard library
only, parsed by Python 3.6 too: ``make`` checks a profile name (and the Python) with the plain ``python3`` first.
"""
import sys

if sys.version_info < (3, 10):
    sys.exit("error: %s is Python %d.%d.%d; the project needs Python 3.10 or newer: choose another with "
             "`make venv PYTHON=python3.11` (any python3.10+)" % ((sys.executable,) + tuple(sys.version_info[:3])))

from dataclasses import dataclass  # after the version check


class SettingError(ValueError):
    """A wrong profile, setting or notebook parameter, in one line: also in Jupyter and plain papermill, where
    IPython shows what ``_render_traceback_`` returns instead of the traceback (our design)."""

    def _render_traceback_(self) -> list:
        return ["%s: %s" % (type(self).__name__, self)]


@dataclass(frozen=True)
class Profile:
    """One run profile (our design: the paper is silent).

    Attributes:
        name: what ``--profile`` and ``make PROFILE=`` take.
        threads: the CPU threads ``n_threads=None`` means (fixed per profile, never the core count).
        figures: where a published run writes, relative to the checkout; ``None``: under ``build/<name>/``.
        docs: where its site goes, relative to the checkout (``None``: ``build/<name>/docs``).
        readme: its report also refreshes the summary of results in ``README.md``.
        note: said on every output when its runs prove nothing (only check the plumbing: verdicts are
            "undetermined"); empty for a profile whose runs are evidence.
    """

    name: str
    threads: int
    figures: str | None = "figures"
    docs: str | None = "docs"
    readme: bool = False
    note: str = ""

    @property
    def publishes(self) -> bool:
        """Whether ``--publish`` writes into the checkout (``figures``); else under ``build/<name>/``."""
        return self.figures is not None

    @property
    def proves_nothing(self) -> bool:
        """Whether its runs check the plumbing only (it has a ``note``)."""
        return bool(self.note)

    @property
    def banner(self) -> str:
        """The note as a sentence, for the top of a notebook or a table ("" when there is none)."""
        return self.note[:1].upper() + self.note[1:] + "." if self.note else ""


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("smoke", threads=1, figures=None, docs=None, note="smoke run: checks the plumbing, proves nothing"),
    Profile("cpu", threads=2, readme=True),
    Profile("paper", threads=2),
    Profile("gpu", threads=2, figures="figures/gpu", docs="docs/gpu"),  # publishes beside the cpu run
)}
"""Every profile by name, in the order the messages list them."""
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILES)


def get_profile(profile: str) -> Profile:
    """The record of ``profile``. Raises SettingError (a ValueError): one line naming the unknown profile and the
    allowed ones."""
    if profile not in PROFILES:
        raise SettingError(f"unknown profile {profile!r}; allowed: {', '.join(PROFILE_NAMES)}")
    return PROFILES[profile]


def check_profile(profile: str) -> str:
    """Return ``profile`` if it is known; else ValueError, as :func:`get_profile`."""
    return get_profile(profile).name


if __name__ == "__main__":  # `python -m paper_lib.pipeline.profiles NAME`: validate a profile name
    try:
        check_profile(sys.argv[1] if len(sys.argv) > 1 else "")
    except ValueError as err:
        sys.exit(f"error: {err}")
