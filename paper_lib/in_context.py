"""In-context scores of a language model: does it use its context to copy, or only n-gram statistics?

Two numbers, both in nats (our design after Olsson et al. 2022, "In-context learning and
induction heads"; the paper is silent):

- :func:`induction_score`: on ``L`` uniform random tokens repeated twice, the mean loss on the
  first copy minus the mean loss on the second. Random tokens carry no n-gram statistics, so
  only a model that looks the continuation up in its context (an induction head) scores well
  above 0. Up to ``ln(vocab_size)`` (about 7.6 nats at 2048 tokens).
- :func:`in_context_score`: on held-out windows of natural text, the mean loss at the first
  quarter of positions minus the last quarter: how much later tokens gain from a longer context.

:func:`loss_by_position` gives the profile behind the second (the notebook's "where the gap lives").
:func:`repeated_span_stream` is a training stream for the first: spans of uniform random tokens,
each followed by itself, between segments of text.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn


@torch.no_grad()
def induction_score(model: nn.Module, vocab_size: int, length: int, n_seqs: int = 32, seed: int = 0,
                    low: int = 1) -> dict[str, float]:
    """Olsson et al.'s repeated-random-tokens test on ``model`` (evaluation mode, no gradient).

    ``n_seqs`` sequences of ``length`` tokens drawn uniformly from ``[low, vocab_size)`` (``low``
    skips the end-of-text token 0) with a generator seeded by ``seed`` (the global RNG is not
    touched), each followed by itself: the model reads ``(n_seqs, 2 length - 1)`` inputs. The
    first copy's loss is over its targets 2..L, the second copy's over its targets 2..L (the
    first token of the second copy is not predictable from the first, so it is left out).

    Returns:
        ``{"first_loss", "second_loss", "induction_score"}`` in nats per token (score = first - second).

    Raises:
        ValueError: ``length`` < 2, ``2 length - 1`` longer than the model's ``block_size``,
            or ``low`` not below ``vocab_size``.
    """
    block = getattr(getattr(model, "config", None), "block_size", None)
    if length < 2 or (block is not None and 2 * length - 1 > block):
        raise ValueError(f"induction length must be >= 2 with 2 * length - 1 <= block_size={block}, got {length}")
    if not 0 <= low < vocab_size:
        raise ValueError(f"low must lie in [0, vocab_size={vocab_size}), got {low}")
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(low, vocab_size, (n_seqs, length), generator=g)
    seq = torch.cat([x, x], dim=1)                                        # (B, 2L)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    logits, _ = model(seq[:, :-1].to(device))                             # (B, 2L - 1, V)
    model.train(was_training)
    nll = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), seq[:, 1:].to(device),
                                            reduction="none").cpu()       # (B, 2L - 1): target j + 1
    first = float(nll[:, :length - 1].mean())                             # targets 1..L-1 (first copy)
    second = float(nll[:, length:].mean())                                # targets L+1..2L-1 (second copy)
    return {"first_loss": first, "second_loss": second, "induction_score": first - second}


def repeated_span_stream(text: np.ndarray, vocab_size: int, n_tokens: int, span_share: float = 1.0,
                         span_len: tuple[int, int] = (16, 64), seed: int = 0, low: int = 1) -> np.ndarray:
    """A token stream of ``n_tokens`` in which about ``span_share`` of the tokens belong to repeated random
    spans: a span of ``span_len[0]..span_len[1]`` tokens drawn uniformly from ``[low, vocab_size)``,
    then the same span again, then (with ``span_share`` < 1) a segment of ``text`` in its order, long
    enough that the spans hold ``span_share`` of the tokens on average. Half of the span tokens (each
    second copy) can be predicted only by copying from the context, so a model trained on it is paid
    for in-context copying (:func:`induction_score`'s test, at the same lengths). Deterministic in
    ``seed`` (``numpy.random.default_rng``). Our design (Olsson et al. 2022's repeated random tokens
    as training data; the paper is silent).

    Args:
        text: ``(N,)`` token ids (any integer dtype; the stream keeps it), read from the start and
            wrapped around; unused when ``span_share`` is 1.
        vocab_size: tokens. n_tokens: length of the stream. span_share: in ``(0, 1]``.

    Raises:
        ValueError: ``span_share`` outside ``(0, 1]``, ``span_len`` not ``2 <= lo <= hi``, ``low`` not
            below ``vocab_size``, ``n_tokens`` < 1, or empty ``text`` with ``span_share`` < 1.
    """
    lo, hi = span_len
    if not 0 < span_share <= 1:
        raise ValueError(f"span_share must lie in (0, 1], got {span_share}")
    if not 2 <= lo <= hi:
        raise ValueError(f"span_len must be (lo, hi) with 2 <= lo <= hi, got {tuple(span_len)}")
    if not 0 <= low < vocab_size or n_tokens < 1:
        raise ValueError(f"need 0 <= low < vocab_size and n_tokens >= 1, got low={low}, vocab_size={vocab_size}, "
                         f"n_tokens={n_tokens}")
    text = np.asarray(text)
    if span_share < 1 and text.size == 0:
        raise ValueError("text is empty: a stream with span_share < 1 needs text between the spans")
    rng = np.random.default_rng(seed)
    gap = (1 - span_share) / span_share * (lo + hi)                 # mean text tokens per repeated span
    parts, n, at = [], 0, 0
    while n < n_tokens:
        span = rng.integers(low, vocab_size, size=int(rng.integers(lo, hi + 1)))
        m = int(rng.poisson(gap)) if span_share < 1 else 0
        seg = text[(at + np.arange(m)) % text.size] if m else text[:0]
        at += m
        parts += [span, span, seg]
        n += 2 * span.size + m
    dtype = text.dtype if text.size else np.min_scalar_type(vocab_size - 1)
    return np.concatenate(parts)[:n_tokens].astype(dtype)


def _by_position(token_loss: np.ndarray, seq_len: int) -> np.ndarray:
    """``(N,)`` per-token losses of :func:`paper_lib.evaluate.evaluate` -> ``(seq_len,)`` mean per position."""
    token_loss = np.asarray(token_loss, dtype=np.float64)
    if seq_len < 4 or token_loss.size % seq_len:
        raise ValueError(f"token_loss of {token_loss.size} values does not hold whole windows of seq_len={seq_len} >= 4")
    return token_loss.reshape(-1, seq_len).mean(axis=0)


def in_context_score(token_loss: np.ndarray, seq_len: int) -> float:
    """Mean loss (nats) at positions ``[0, seq_len / 4)`` minus ``[3 seq_len / 4, seq_len)`` of the
    evaluation windows (:func:`paper_lib.evaluate.evaluate`'s ``token_loss``); > 0: later
    positions, which see more context, are easier.

    Raises:
        ValueError: ``token_loss`` is not made of whole windows, or ``seq_len`` < 4.
    """
    per_pos = _by_position(token_loss, seq_len)
    q = seq_len // 4
    return float(per_pos[:q].mean() - per_pos[-q:].mean())


def loss_by_position(token_loss: np.ndarray, seq_len: int, n_bins: int = 8) -> pd.DataFrame:
    """Mean loss (nats) per bin of in-window position: ``position_lo, position_hi, loss``
    (``n_bins`` equal bins of ``[0, seq_len)``; a position is the number of tokens of context before the target).

    Raises:
        ValueError: as :func:`in_context_score`, or ``n_bins`` outside ``[1, seq_len]``.
    """
    per_pos = _by_position(token_loss, seq_len)
    if not 1 <= n_bins <= seq_len:
        raise ValueError(f"n_bins must lie in [1, seq_len={seq_len}], got {n_bins}")
    edges = np.linspace(0, seq_len, n_bins + 1).astype(int)
    return pd.DataFrame([{"position_lo": int(a), "position_hi": int(b), "loss": float(per_pos[a:b].mean())}
                         for a, b in zip(edges[:-1], edges[1:], strict=True)])
