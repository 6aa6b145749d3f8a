"""Run profiles, defined in one place: ``smoke`` (seconds, used by tests), ``cpu`` (the
default: the full study on a 2-core laptop) and ``paper`` (the paper's scale, for a GPU).

Every notebook receives the papermill parameter ``profile`` and reads its own section:

    settings = get_profile(profile)["grammar_probe"]

Sizes and budgets are our design (the paper is silent on most of them); each value carries
its unit in the comment beside it. ``paper`` values follow the paper where it gives a number.
"""
from __future__ import annotations

import copy

PROFILE_NAMES: tuple[str, ...] = ("smoke", "cpu", "paper")
DEFAULT_PROFILE = "cpu"

# One dict per profile; one section per notebook. A section is owned by its notebook.
PROFILES: dict[str, dict[str, dict]] = {
    "smoke": {
        "grammar_probe": {},
        "transfer": {},
        "spen": {},
        "ablation": {},
    },
    "cpu": {
        "grammar_probe": {},
        "transfer": {},
        "spen": {},
        "ablation": {},
    },
    "paper": {
        "grammar_probe": {},
        "transfer": {},
        "spen": {},
        "ablation": {},
    },
}


def check_profile(profile: str) -> str:
    """Return ``profile`` if it is known.

    Raises:
        ValueError: one line naming the unknown profile and the allowed ones.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; allowed: {', '.join(PROFILE_NAMES)}")
    return profile


def get_profile(profile: str) -> dict[str, dict]:
    """A deep copy of the settings of ``profile`` (so a notebook may edit its copy freely).

    Raises:
        ValueError: unknown profile (the message lists the allowed ones).
    """
    return copy.deepcopy(PROFILES[check_profile(profile)])


if __name__ == "__main__":  # `python -m paper_lib.profiles NAME`: validate a profile name
    import sys

    try:
        check_profile(sys.argv[1] if len(sys.argv) > 1 else "")
    except ValueError as err:
        sys.exit(f"error: {err}")
