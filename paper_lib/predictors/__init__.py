"""Readers of SPEN's traces, one per module, all registered on import (Zoology's mixers).

The paper keeps SPEN's EMA traces and swaps the module that predicts ``x_hat_t`` from them:
linear projection, linear attention, full softmax attention; all reach about 7.60 nats, and
the paper concludes, by the data processing inequality, that the traces lost the information
(the paper's predictor ablation, Experiment 2). This module adds the two attention readers the paper names
and three controls of ours that test the argument by seeing *more* than the trace bank at t:

=====================  =========  ===========================================================
name                   whose      what ``x_hat_t`` can see
=====================  =========  ===========================================================
``linear``             paper      the trace bank at t (``linear.py``)
``linear_attention``   paper      the trace bank at t (S trace vectors as S tokens)
``softmax_attention``  paper      the trace bank at t (S trace vectors as S tokens)
``history_attention``  ours       the trace banks h_1 .. h_t (all past banks)
``selective``          ours       u_{<t} through a learned, input-dependent EMA
``token_attention``    ours       u_{<t} directly (causal self-attention, strictly earlier)
=====================  =========  ===========================================================

The first three are bounded by the data processing inequality (a function of ``h_t`` alone);
the controls are not: past banks determine past inputs
(``u_{t-1} = (h_t - (1 - alpha) h_{t-1}) / alpha``), the selective EMA chooses per input what
to keep, and token attention reads the inputs themselves.

Every class obeys the contract of :mod:`paper_lib.predictors.base` (``x_hat_t`` uses ``u_{<t}``
and ``traces[:, :t + 1]`` only; ``tests/test_ablation_predictors.py`` checks it) and is sized
to the parameter budget of ``linear`` (``S * d_model**2 + d_model``, with ``S`` the number of
rates) so that every SPEN of the ablation has the same parameter count within 5%
(:func:`paper_lib.experiments.predictor_ablation.check_param_budget`). Attention heads:
``config.n_head`` (None: ``max(1, d_model // 64)``). Our design throughout where not marked as the paper's: the paper
gives neither the attention predictors' form nor their sizes.
"""
from .base import (
    PREDICTORS,
    Predictor,
    build_predictor,
    check_predictor_causal,
    linear_budget,
    n_heads,
    register_predictor,
)
from .history_attention import HistoryAttentionPredictor
from .linear import LinearPredictor
from .linear_attention import LinearAttentionPredictor
from .selective import SelectivePredictor
from .softmax_attention import SoftmaxAttentionPredictor
from .token_attention import TokenAttentionPredictor

# The groups, from each predictor's facts (never spelled by hand): a new predictor joins them.
PAPER_PREDICTORS: tuple[str, ...] = tuple(sorted(n for n, c in PREDICTORS.items() if c.paper))
"""The paper's ablation: readers of the trace bank at t."""
CONTROL_PREDICTORS: tuple[str, ...] = tuple(sorted(n for n, c in PREDICTORS.items() if not c.paper))
"""Our controls: readers that see more than the trace bank at t."""
ABLATION_PREDICTORS: tuple[str, ...] = PAPER_PREDICTORS + CONTROL_PREDICTORS
"""Every registered reader: the paper's first, then ours."""
BOUNDED_PREDICTORS: tuple[str, ...] = tuple(n for n in ABLATION_PREDICTORS if PREDICTORS[n].bounded)
"""Readers that are a function of the trace bank at t alone (bounded by what the traces keep)."""
SEES: dict[str, str] = {n: PREDICTORS[n].sees for n in ABLATION_PREDICTORS}
"""What ``x_hat_t`` of each predictor can see, in a few words (notebook 04's table)."""

__all__ = [
    "ABLATION_PREDICTORS", "BOUNDED_PREDICTORS", "CONTROL_PREDICTORS", "PAPER_PREDICTORS", "PREDICTORS", "SEES", "Predictor",
    "build_predictor", "check_predictor_causal", "linear_budget", "n_heads", "register_predictor",
    "HistoryAttentionPredictor", "LinearPredictor", "LinearAttentionPredictor", "SelectivePredictor",
    "SoftmaxAttentionPredictor", "TokenAttentionPredictor",
]
