"""The rules and power gates of the reproduction report (:mod:`paper_lib.pipeline.report`), and the
rules the notebooks' prose reads: every verdict of the house is decided here.

A rule maps summarised metrics (``{name: {"mean", "ci95", "n"}}``) to ``(yes | partly | no,
reason)``; a gate returns the reason an experiment has no power (its control did not differ as
it must), or ``None``. Each rule's docstring is what the report prints. One module per kind:
:mod:`.claims` (the report's rules), :mod:`.gates` (power), :mod:`.within` (the notebooks' prose),
:mod:`.boundary` (notebook 06), :mod:`.update` (notebook 07). Our design: the paper states no tolerances.
"""
from ._base import Gate, Metrics, Rule  # noqa: F401
from .boundary import (  # noqa: F401
    depth_dilution,
    depth_learnable,
    learned_state_keeps,
    oracle_below_learned,
    oracle_converged,
    oracle_loses,
    structure_outlives_identity,
)
from .claims import (  # noqa: F401
    NOT_ATTRIBUTABLE,
    all_of,
    at_least,
    beats,
    beats_each,
    near,
    recall_gap,
    relative_spread,
    spread,
    traces_lose,
)
from .gates import (  # noqa: F401
    any_solves,
    beats_negative_controls,
    ceiling_above_floor,
    copies_in_context,
    first_gate,
    past_unigram,
    solves,
    unbounded_beats_bounded,
)
from .update import SELECTIVE_STATES, UPDATE_KEPT, UPDATE_SOLVED, update_kept, update_learnable  # noqa: F401
from .within import (  # noqa: F401
    CHANCE_MARGIN,
    GAP_GROWTH,
    RECALL_CAPACITY,
    RECALL_CHANGE,
    RECALL_FAR_BELOW,
    RECALL_SOLVED,
    above_chance,
    below_chance,
    changes,
    clearly_better,
    far_below,
    gap_grows,
    paired_difference,
    recall_capacity,
    recall_solved,
    recalls,
)
