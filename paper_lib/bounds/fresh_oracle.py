"""What a state holds about the words before: the lag oracle fed fresh Grammar A documents, and
the closed-form decoder of the fixed trace bank.

The lag study's linear probe (:func:`paper_lib.probes.lag_decodability`) is a lower bound on what
a state holds: a better reader may read more. "Which state keeps more" needs readers that are
upper bounds. Two are built here (our design: the paper has no lag study):

- **The lag oracle fed fresh documents** (:func:`fit_fresh_lag_oracle`): the MLP readers of
  :func:`paper_lib.bounds.oracle.fit_lag_oracle`, one per lag, each step on new documents of the grammar
  (:class:`FreshDocuments`), never the same twice, early-stopped on a held-out split of fresh
  documents. A reader that cannot overfit and stops improving on new data is limited by the state
  and its own capacity, not by the data; its convergence curve (loss on fresh batches) shows whether
  it stopped. The same reader, with the same fresh documents, reads any state: the fixed trace bank
  and a learned state of the same width.
- **The closed-form decoder of the bank** (:func:`decode_fast_trace`): SPCN's level-1 trace at a rate
  ``alpha >= 0.5`` is invertible. With ``h_t = (1 - alpha) h_{t-1} + alpha a_t`` and ``a_t`` a binary
  k-WTA code, the units active at ``t`` are exactly those with ``h_t >= alpha`` (every other unit is at
  most ``(1 - alpha)`` times a value below 1), so the word at ``t`` is the one whose code's units stand
  highest above that cut (the code with the largest summed margin ``sum_u c_u (h_u - cut)``: every unit
  of the right code has a margin >= 0, every other unit one < 0), and it is peeled off,
  ``h_{t-1} = (h_t - alpha a_t) / (1 - alpha)``; repeated, it reads the word at any lag until float32
  rounding (doubled at every step when alpha = 0.5) reaches the cut. In exact arithmetic it is exact:
  what it misses (two words with the same level-1 code) the bank cannot hold. Under the resource
  model's noise (:mod:`paper_lib.bounds.noise_budget`) every peel doubles the noise it carries (at
  alpha = 0.5), so it fails from some lag on: a reader of the noisy bank, a lower bound on what that
  bank holds (summed margins rather than counted units: a unit that sits on the cut, as an active unit
  with a silent past does, votes by how far it stands from it, not by a coin flip).

Shapes: states ``(B, T, F)`` float32; word ids ``(B, T)`` int64 in ``1..V`` (0 is unused).
"""
from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd
import torch
from torch import Tensor

from ..data.grammar import GrammarConfig, generate
from .oracle import LagOracle, LagOracleConfig, fit_lag_oracle

FRESH_SEED = 1_000_000
"""Offset of the fresh documents' generator seeds (chunk ``c`` of run seed ``s`` is drawn with
``FRESH_SEED + 1000 * s + c``), far from the seeds of the run's own sentences."""


class FreshDocuments:
    """An endless stream of new Grammar A documents of exactly ``T`` tokens: consecutive sentences
    joined (as :func:`paper_lib.data.grammar.make_documents` joins them) and cut at ``T``, drawn in
    chunks of ``chunk`` sentences, never one of ``exclude`` (the run's training and test sentences).

    ``take(n)`` -> ``n`` documents (token lists), in a fixed order for ``seed``; ``rewind()`` starts
    the stream again from its first document (a second reader gets the same documents).

    Raises:
        ValueError: ``T`` < 1 or ``chunk`` < 1.
    """

    def __init__(self, T: int, seed: int, config: GrammarConfig | None = None,
                 exclude: Sequence[Sequence[str]] = (), chunk: int = 2000):
        if T < 1 or chunk < 1:
            raise ValueError(f"FreshDocuments needs T >= 1 and chunk >= 1, got T={T}, chunk={chunk}")
        self.T, self.seed, self.chunk = int(T), int(seed), int(chunk)
        self.config = config or GrammarConfig()
        self.exclude = {tuple(s) for s in exclude}
        self._sentences: list[list[str]] = []
        self._docs: list[list[str]] = []
        self._chunks = 0
        self.position = 0                                   # documents handed out since the last rewind

    def _next_doc(self) -> list[str]:
        doc: list[str] = []
        while len(doc) < self.T:
            if not self._sentences:
                seed = FRESH_SEED + 1000 * self.seed + self._chunks
                batch = generate("A", self.chunk, seed, self.config, exclude=self.exclude).sentences
                self._sentences = batch[::-1]
                self._chunks += 1
            doc += self._sentences.pop()
        return doc[: self.T]

    def take(self, n: int) -> list[list[str]]:
        while len(self._docs) < self.position + n:
            self._docs.append(self._next_doc())
        out = self._docs[self.position: self.position + n]
        self.position += n
        return out

    def rewind(self) -> None:
        self.position = 0


def word_ids(docs: Sequence[Sequence[str]], vocab: dict[str, int]) -> Tensor:
    """``(B, T)`` int64 ids of equal-length documents.

    Raises:
        ValueError: documents of different lengths, or a word outside ``vocab``.
    """
    if len({len(d) for d in docs}) != 1:
        raise ValueError("word_ids needs documents of one length")
    missing = sorted({w for d in docs for w in d if w not in vocab})
    if missing:
        raise ValueError(f"words outside the vocabulary: {missing[:5]}")
    return torch.tensor([[vocab[w] for w in d] for d in docs])


def fit_fresh_lag_oracle(read: Callable[[list[list[str]]], Tensor], stream: FreshDocuments, vocab: dict[str, int],
                         lags: Sequence[int], cfg: LagOracleConfig, seed: int,
                         mismatched: bool = False) -> tuple[LagOracle, dict[int, int], dict[int, str], pd.DataFrame]:
    """The lag oracle of the state ``read(docs) -> (B, T, F)``, fitted on ``stream``'s documents at
    positions ``t >= max(lags)``: the held-out split first (``cfg.val_sequences`` documents), then
    ``cfg.batch_sequences`` new ones per step (:func:`paper_lib.bounds.oracle.fit_lag_oracle`).

    ``mismatched``: the negative control; each document's states are paired with the words of the
    next document of the batch, so no reader can do better than the most frequent word.

    Returns:
        ``(oracle, {lag: steps run}, {lag: why it stopped}, history)`` (:data:`paper_lib.stopping.REASONS`);
        ``history``: one row per check and lag still training,
        ``step, lag, train_loss, val_loss`` (nats per position; ``train_loss`` on fresh batches before the
        step that learns from them), ``val_acc`` and ``documents`` (fresh documents read so far).

    Raises:
        ValueError: no lag, a negative lag, or a lag not below the documents' length.
    """
    lags = sorted(int(k) for k in lags)
    if not lags or lags[0] < 0 or lags[-1] >= stream.T:
        raise ValueError(f"lags must be non-empty, in [0, T={stream.T}), got {lags}")

    def sample(n, _gen):
        docs = stream.take(n)
        ids = word_ids(docs, vocab)
        return read(docs), torch.roll(ids, 1, dims=0) if mismatched else ids

    history: list[dict] = []
    oracle, steps, stops = fit_lag_oracle(sample, len(vocab) + 1, lags, lags[-1], cfg, seed, history=history)
    hist = pd.DataFrame(history, columns=["step", "lag", "train_loss", "val_loss", "val_acc"])
    return oracle, steps, stops, hist.assign(documents=cfg.val_sequences + hist.step * cfg.batch_sequences)


def score_oracle(oracle: LagOracle, states: Tensor, ids: Tensor, mismatched: bool = False) -> tuple[Tensor, Tensor]:
    """``(accuracy, chance)`` per lag of ``oracle`` on test ``states`` ``(B, T, F)`` and ``ids`` ``(B, T)``
    at positions ``t >= max(lags)`` (``mismatched``: the words of the next document, as fitted)."""
    return oracle.score(states, torch.roll(ids, 1, dims=0) if mismatched else ids, max(oracle.lags))


def decode_fast_trace(trace: Tensor, codes: Tensor, alpha: float, lags: Sequence[int]) -> Tensor:
    """The bank's closed-form decoder (module docstring): the word index at ``t - k`` for every lag.

    Args:
        trace: ``(B, T, N)`` one trace of the bank, at rate ``alpha``, over binary codes.
        codes: ``(V, N)`` the binary code of every word (row ``v`` is word index ``v``).
        alpha: the trace's rate, at least 0.5 (below it active and silent units overlap).
        lags: tokens back (>= 0), all below ``T``.

    Returns:
        ``(len(lags), B, T - max(lags))`` word indices into ``codes``, for positions ``t >= max(lags)``;
        at every peeling step the code whose units stand highest above the cut (summed margins; the
        lowest index on ties).

    Raises:
        ValueError: ``alpha`` below 0.5 or above 1, bad shapes or lags.
    """
    if not 0.5 <= alpha <= 1.0:
        raise ValueError(f"the closed-form decoder needs a rate in [0.5, 1], got alpha = {alpha}")
    if trace.ndim != 3 or codes.ndim != 2 or trace.shape[-1] != codes.shape[-1]:
        raise ValueError(f"need trace (B, T, N) and codes (V, N), got {tuple(trace.shape)}, {tuple(codes.shape)}")
    lags = [int(k) for k in lags]
    K = max(lags, default=-1)
    if not lags or min(lags) < 0 or K >= trace.shape[1]:
        raise ValueError(f"lags must be non-empty, in [0, T={trace.shape[1]}), got {lags}")
    h = trace[:, K:].double()                                    # (B, T', N)
    codes = codes.to(h.dtype)
    found = []
    cut = alpha - max((2 * alpha - 1) / 2, alpha * 1e-6)         # between silent (< 1 - alpha) and active (>= alpha)
    for _ in range(K + 1):
        margin = (h - cut) @ codes.T                             # (B, T', V) each code's units above the cut
        idx = margin.argmax(-1)                                  # the word at this step (lowest index on ties)
        found.append(idx)
        if alpha < 1.0:
            h = (h - alpha * codes[idx]) / (1 - alpha)            # the trace one step earlier
    return torch.stack([found[k] for k in lags])
