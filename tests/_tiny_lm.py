"""The tiny language model and random token stream that the checkpoint fault tests train on."""
from __future__ import annotations

import numpy as np

SIZES = dict(vocab_size=64, n_layer=1, d_model=32, n_head=2, d_bottleneck=16, d_ff=64, block_size=64)


def random_ids(n: int = 3000, seed: int = 0) -> np.ndarray:
    """``n`` token ids drawn uniformly from ``SIZES["vocab_size"]``, shape ``(n,)``, uint16."""
    return np.random.default_rng(seed).integers(0, SIZES["vocab_size"], size=n).astype(np.uint16)
