"""The paper's default reader of SPEN's traces: one linear map of the trace bank at t.
"""
from __future__ import annotations

from torch import Tensor, nn

from .base import Predictor, register_predictor


@register_predictor("linear")
class LinearPredictor(Predictor):
    """The paper's default reader: one linear projection of the stacked trace bank at ``t``.

    ``x_hat_t = W [h_t^(1); ...; h_t^(S)] + b`` with ``W`` of shape ``(D, S*D)``.
    Sees: only the traces at ``t`` (so, by the data processing inequality, nothing the
    traces lost). The paper: "linear projection"; the exact form (one matrix over the
    concatenated traces, with bias) is our design.
    """

    label, sees, paper = "linear reader", "trace bank at t (one linear map)", True

    def __init__(self, config):
        super().__init__(config)
        self.proj = nn.Linear(len(config.alphas) * config.d_model, config.d_model)

    def forward(self, u: Tensor, traces: Tensor) -> Tensor:
        B, T, S, D = traces.shape
        return self.proj(traces.reshape(B, T, S * D))                  # (B, T, D)
