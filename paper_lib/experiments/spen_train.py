"""Notebook 03: SPEN against the matched Transformer, trained on the same tokens with the same budget.

The paper reports C4 perplexity 260 for its 130M-parameter SPEN against 33 for GPT-2 small
(Experiment 2). Here both models are built on one causal-LM shell
(:mod:`paper_lib.models.lm`), trained by :func:`paper_lib.train.train_and_evaluate` and
evaluated in- and out-of-domain. Sizes and budgets are ours (the paper gives none for a
laptop); the ``paper`` profile sets the paper's scale.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..pipeline.settings import check_seeds, configure
from ..train import LMSettings


@dataclass
class Settings(LMSettings):
    """Notebook 03's settings: :class:`paper_lib.train.LMSettings` plus the throughput study."""

    throughput_seq_lens: tuple[int, ...] = (256, 1024)  # tokens; training tokens/s measured at each
    throughput_batch_tokens: int = 4096  # tokens per timed step
    throughput_steps: int = 2            # timed steps per measurement


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 03's settings at ``profile`` with a reader's ``overrides`` applied.

    Raises:
        ValueError: unknown profile or an unknown setting (one line naming the allowed ones).
    """
    return check_seeds(configure(Settings(), "spen_train", profile, overrides))
