"""Evaluation of a language model: held-out loss per token (nats), the repeated/first split,
training throughput (tokens/s). Our design: the paper gives no evaluation protocol beyond
perplexity on C4 and Wikipedia.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch
from torch import nn


def window_starts(n_tokens: int, seq_len: int, max_tokens: int | None = None) -> np.ndarray:
    """Start offsets of the evaluation windows of a stream of ``n_tokens`` tokens: the one
    place that decides how a stream is cut and which targets are scored.

    Windows are non-overlapping and hold ``seq_len`` inputs each; the window at ``s`` scores
    the targets ``ids[s + 1 : s + seq_len + 1]`` (one shifted), so it reads ``seq_len + 1``
    tokens. There are ``(n_tokens - 1) // seq_len`` windows, at most ``max(1, max_tokens //
    seq_len)`` when ``max_tokens`` (tokens) is given. Used by :func:`evaluate` and by
    :func:`paper_lib.ngram.window_targets`, so the reference lines score the same targets.

    Returns:
        ``(n_windows,)`` int64, ``0, seq_len, 2 seq_len, ...``.

    Raises:
        ValueError: fewer than ``seq_len + 1`` tokens (no window).
    """
    n_win = (n_tokens - 1) // seq_len
    if max_tokens is not None:
        n_win = min(n_win, max(1, max_tokens // seq_len))
    if n_win < 1:
        raise ValueError(f"need at least seq_len + 1 = {seq_len + 1} tokens, got {n_tokens}")
    return np.arange(n_win, dtype=np.int64) * seq_len


@torch.no_grad()
def evaluate(model: nn.Module, ids: np.ndarray, seq_len: int, batch_size: int = 8,
             max_tokens: int | None = None, eot_id: int | None = 0) -> dict:
    """Per-token next-token loss on non-overlapping windows of ``ids`` (:func:`window_starts`).

    Each window holds ``seq_len`` inputs and their ``seq_len`` targets (one shifted); a
    model sees only its window (no state carried across windows).

    Returns:
        ``{"loss": mean nats/token, "ppl": exp(loss), "token_loss": (N,) float32 nats,
        "repeat": (N,) bool}`` where ``repeat`` marks targets that already occurred earlier
        in the same document within the window (copyable from context; documents are
        separated by ``eot_id``), the split of the notebook's "where the gap lives".

    Raises:
        ValueError: fewer than ``seq_len + 1`` tokens.
    """
    starts = window_starts(len(ids), seq_len, max_tokens)
    n_win = len(starts)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    losses = []
    for i in range(0, n_win, batch_size):
        idx = starts[i:i + batch_size, None] + np.arange(seq_len + 1)[None, :]
        w = torch.from_numpy(ids[idx].astype(np.int64)).to(device)    # (b, L + 1)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits, _ = model(w[:, :-1])                                 # (b, L, V)
        nll = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), w[:, 1:], reduction="none")
        losses.append(nll.reshape(-1).cpu())
    model.train(was_training)
    token_loss = torch.cat(losses).numpy().astype(np.float32)
    repeat = np.zeros(n_win * seq_len, dtype=bool)
    for k, s in enumerate(starts):
        seen: set[int] = set()
        window = ids[s:s + seq_len + 1].tolist()
        for t in range(seq_len):
            if window[t] == eot_id:
                seen = set()
            else:
                seen.add(window[t])
            repeat[k * seq_len + t] = window[t + 1] in seen
    loss = float(token_loss.mean())
    return {"loss": loss, "ppl": math.exp(loss), "token_loss": token_loss, "repeat": repeat}


def measure_throughput(model: nn.Module, vocab_size: int, seq_len: int, batch_tokens: int,
                       steps: int = 3, seed: int = 0) -> float:
    """Training throughput (tokens/s) of ``model`` at ``seq_len``: ``steps`` timed AdamW steps
    on random tokens after one untimed warm-up step, ``batch_tokens // seq_len`` sequences each.
    The model's weights change (use a throw-away copy)."""
    device = next(model.parameters()).device
    g = torch.Generator().manual_seed(seed)
    b = max(1, batch_tokens // seq_len)
    x = torch.randint(0, vocab_size, (b, seq_len + 1), generator=g).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
    model.train()
    t0 = 0.0
    for i in range(steps + 1):
        if i == 1:
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
            _, loss = model(x[:, :-1], x[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps * b * seq_len / (time.perf_counter() - t0)


