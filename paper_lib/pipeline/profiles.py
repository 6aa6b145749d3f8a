"""Run profiles, each one record: ``smoke`` (seconds, used by tests), ``cpu`` (the default: the
full study on a 2-core laptop), ``paper`` (the paper's scale: 130M models on C4, for a GPU node)
and ``gpu`` (ours: notebooks 03 and 04's language models, d_model 512, 8 layers, a 1024-token
window, on the offline corpus, sized for one GPU in minutes; it publishes under ``figures/gpu``).

A :class:`Profile` says what a run at that profile is: the threads ``n_threads=None`` means,
where a published run writes, whether its runs prove nothing, whose report refreshes the
README. Every other module asks the record (:func:`get_profile`), never
the profile's name. What a profile changes in each notebook's settings is
:data:`paper_lib.profile_settings.PROFILE_SETTINGS`. Adding a profile is one record here and its
block there.

This module needs only the standard library (``make`` checks a profile name with the plain
``python3`` before anything is installed).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    """One run profile (our design: the paper is silent).

    Attributes:
        name: what ``--profile`` and ``make PROFILE=`` take.
        threads: the CPU threads ``n_threads=None`` means (results depend on the thread count, so
            it is fixed per profile, never the machine's core count; :mod:`paper_lib.pipeline.threads`).
        figures: where a published run writes (``make all``'s ``--publish``), relative to the
            checkout; ``None``: it never publishes, its outputs stay under ``build/<name>/``.
        docs: where its site goes, relative to the checkout (``None``: ``build/<name>/docs``).
        readme: its report also refreshes the table and findings of ``README.md``.
        note: said on every output of the run (figure footers, tables, ``metrics.json``, the top of
            the notebook) when its runs prove nothing: such a profile checks the plumbing, so its
            verdicts are "undetermined", a figure that fails the legibility check raises, and a
            notebook may relax what it needs for evidence (at least 3 learning rates). Empty for
            a profile whose runs are evidence.
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
    # seconds per notebook, used by `make test`; never publishes
    Profile("smoke", threads=1, figures=None, docs=None, note="smoke run: checks the plumbing, proves nothing"),
    # the default: the full study on a 2-core laptop; its report refreshes the README
    Profile("cpu", threads=2, readme=True),
    # the paper's scale (a GPU node): the 130M models on C4
    Profile("paper", threads=2),
    # ours: the language models of notebooks 03 and 04 sized for one GPU in minutes, on the offline
    # corpus; publishes beside the cpu run, never over it
    Profile("gpu", threads=2, figures="figures/gpu", docs="docs/gpu"),
)}
"""Every profile by name, in the order the messages list them. The thread counts are what a
2-core machine got from the earlier rule ``min(cores, 4)``, so the published numbers did not move."""
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILES)


def get_profile(profile: str) -> Profile:
    """The record of ``profile``.

    Raises:
        ValueError: one line naming the unknown profile and the allowed ones.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; allowed: {', '.join(PROFILE_NAMES)}")
    return PROFILES[profile]


def check_profile(profile: str) -> str:
    """Return ``profile`` if it is known.

    Raises:
        ValueError: one line naming the unknown profile and the allowed ones.
    """
    return get_profile(profile).name


if __name__ == "__main__":  # `python -m paper_lib.pipeline.profiles NAME`: validate a profile name
    import sys

    try:
        check_profile(sys.argv[1] if len(sys.argv) > 1 else "")
    except ValueError as err:
        sys.exit(f"error: {err}")
