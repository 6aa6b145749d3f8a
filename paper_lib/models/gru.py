"""The supervised baseline of Experiment 1: a bidirectional GRU role tagger.

The paper compares SPCN with "a supervised bidirectional GRU tagger (BiGRU) trained with
role labels" (brief, "Experiment 1"). Sizes and training are **our design: the paper is
silent**: embedding -> one BiGRU layer -> a linear layer over the 20 roles, cross-entropy,
Adam. Unseen words (Grammar B's content words) map to an ``<unk>`` embedding
that training learns through *word dropout*: each training token is replaced by ``<unk>``
with probability ``word_dropout``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from ..bounds.noise_budget import check_sigma
from ..pipeline.settings import check_fields, setting
from .lm import CausalLM

PAD, UNK = "<pad>", "<unk>"


@dataclass
class BiGRUConfig:
    """Sizes and training of :class:`BiGRUTagger` (our design)."""

    d_embed: int = 32          # embedding width (dims)
    d_hidden: int = 64         # GRU hidden size per direction (dims)
    n_layer: int = 1           # stacked BiGRU layers
    n_roles: int = 20          # output classes
    lr: float = 3e-3           # Adam step size
    epochs: int = 6            # passes over the training sentences
    batch_size: int = 32       # sentences per step
    word_dropout: float = 0.1  # P(training token -> <unk>)
    seed: int = setting(0, low=0)  # init, shuffling and word dropout
    bidirectional: bool = True  # False: a causal (left-to-right) GRU tagger of the same sizes

    def __post_init__(self):
        if not 0.0 <= self.word_dropout < 1.0:
            raise ValueError(f"word_dropout must lie in [0, 1), got {self.word_dropout}")
        if min(self.d_embed, self.d_hidden, self.n_layer, self.n_roles, self.batch_size) < 1 or self.epochs < 0:
            raise ValueError("d_embed, d_hidden, n_layer, n_roles, batch_size must be >= 1 and epochs >= 0")


def build_vocab(sentences: Sequence[Sequence[str]]) -> dict[str, int]:
    """Word -> id for the words of ``sentences`` (sorted), with ``<pad>`` = 0 and ``<unk>`` = 1."""
    words = sorted({w for s in sentences for w in s})
    return {PAD: 0, UNK: 1, **{w: i + 2 for i, w in enumerate(words)}}


def encode(sentences: Sequence[Sequence[str]], vocab: dict[str, int]) -> tuple[Tensor, Tensor]:
    """Padded ids ``(B, T)`` (unknown words -> ``<unk>``) and lengths ``(B,)``."""
    if len(sentences) == 0:
        raise ValueError("encode needs at least one sentence")
    T = max(len(s) for s in sentences)
    ids = torch.zeros(len(sentences), T, dtype=torch.long)
    for b, s in enumerate(sentences):
        ids[b, : len(s)] = torch.tensor([vocab.get(w, 1) for w in s], dtype=torch.long)
    return ids, torch.tensor([len(s) for s in sentences])


class BiGRUTagger(nn.Module):
    """Embedding -> BiGRU -> linear over roles: ``(B, T)`` ids -> ``(B, T, n_roles)`` logits.

    With ``cfg.bidirectional=False`` the GRU reads left to right only, so the logits at t
    depend on ``ids[:, :t + 1]`` alone: the causal control that reads like SPCN's traces
    (our design)."""

    def __init__(self, vocab_size: int, cfg: BiGRUConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(vocab_size, cfg.d_embed, padding_idx=0)
        self.gru = nn.GRU(cfg.d_embed, cfg.d_hidden, num_layers=cfg.n_layer, batch_first=True,
                          bidirectional=cfg.bidirectional)
        self.head = nn.Linear((2 if cfg.bidirectional else 1) * cfg.d_hidden, cfg.n_roles)

    def forward(self, ids: Tensor, lengths: Tensor) -> Tensor:
        x = self.embed(ids)                                                   # (B, T, E)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        h, _ = self.gru(packed)
        h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=ids.shape[1])  # (B, T, 2H or H)
        return self.head(h)                                                   # (B, T, R)


def train_bigru(sentences: Sequence[Sequence[str]], roles: Sequence[Sequence[int]],
                config: BiGRUConfig | None = None, progress: bool = False):
    """Train a BiGRU tagger on labelled sentences.

    Args:
        sentences: token lists; roles: aligned role-id lists.
        config: :class:`BiGRUConfig`.
        progress: show a tqdm bar over epochs.

    Returns:
        ``(model, vocab, history)``; ``history`` lists the mean training loss (nats) per epoch.

    Raises:
        ValueError: empty data or sentences and roles of different lengths.
    """
    cfg = config or BiGRUConfig()
    if len(sentences) == 0 or len(sentences) != len(roles) or any(len(s) != len(r) for s, r in zip(sentences, roles, strict=True)):
        raise ValueError("train_bigru needs non-empty sentences with one role per token")
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    vocab = build_vocab(sentences)
    model = BiGRUTagger(len(vocab), cfg)
    ids_all, lens_all = encode(sentences, vocab)
    T = ids_all.shape[1]
    y_all = torch.full((len(sentences), T), -100, dtype=torch.long)
    for b, r in enumerate(roles):
        y_all[b, : len(r)] = torch.tensor(r, dtype=torch.long)

    def batch_loss(idx: Tensor) -> tuple[Tensor, int]:
        lens = lens_all[idx]
        Tb = int(lens.max())
        ids, y = ids_all[idx, :Tb].clone(), y_all[idx, :Tb]
        if cfg.word_dropout > 0:
            drop = (torch.rand(ids.shape, generator=gen) < cfg.word_dropout) & (ids > 0)
            ids[drop] = 1
        logits = model(ids, lens)
        loss = nn.functional.cross_entropy(logits.reshape(-1, cfg.n_roles), y.reshape(-1), ignore_index=-100)
        return loss, len(idx)

    history = _fit(model, batch_loss, len(sentences), cfg.batch_size, cfg.lr, cfg.epochs, gen,
                   "BiGRU" if progress else None)
    return model, vocab, history


def _fit(model: nn.Module, batch_loss, n_items: int, batch_size: int, lr: float, epochs: int,
         gen: torch.Generator, desc: str | None) -> list[float]:
    """The training loop both GRU baselines share: ``epochs`` passes of Adam (step ``lr``) over
    ``n_items`` examples in an order drawn from ``gen`` each pass, ``batch_size`` at a time.

    ``batch_loss(idx (b,) long) -> (loss, weight)``: the mean loss (scalar tensor, nats) of the
    examples ``idx`` and how many targets it averages. ``desc``: a tqdm bar's label (None: no
    bar). Leaves ``model`` in eval mode.

    Returns:
        The weighted mean loss of each pass (nats per target), ``epochs`` floats.
    """
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    passes = range(epochs)
    if desc is not None:
        from tqdm.auto import tqdm
        passes = tqdm(passes, desc=desc, leave=False)
    history = []
    model.train()
    for _ in passes:
        order = torch.randperm(n_items, generator=gen)
        total, n = 0.0, 0
        for i in range(0, len(order), batch_size):
            loss, k = batch_loss(order[i: i + batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, n = total + loss.item() * k, n + k
        history.append(total / max(n, 1))
    model.eval()
    return history


@torch.no_grad()
def predict_bigru(model: BiGRUTagger, vocab: dict[str, int], sentences: Sequence[Sequence[str]],
                  batch_size: int = 256) -> np.ndarray:
    """Predicted role ids of every token, sentence after sentence: ``(N_tokens,)``."""
    out = []
    for i in range(0, len(sentences), batch_size):
        chunk = sentences[i: i + batch_size]
        ids, lens = encode(chunk, vocab)
        pred = model(ids, lens).argmax(-1)                                    # (B, T)
        out.extend(pred[b, : len(s)].numpy() for b, s in enumerate(chunk))
    return np.concatenate(out)


# ----------------------------------------------------------------------------- GRU language model
@dataclass
class GRULMConfig:
    """A causal GRU trained by next-word prediction: the learned, input-dependent reference
    state of the lag-decodability study (our design: the paper has no such model).

    ``sigma``: the resource model of :mod:`paper_lib.bounds.noise_budget`, Gaussian noise of std
    ``sigma`` added to every state number (in [-1, 1]: already at unit scale) after every step, in
    training and in reading; 0 is the plain, noiseless GRU.
    """

    d_embed: int = 32          # embedding width (dims)
    d_hidden: int = 384        # GRU hidden size (dims): set to the width of the trace bank it is compared with
    lr: float = 3e-3           # Adam step size
    epochs: int = 3            # passes over the training documents
    batch_size: int = 16       # documents per step
    seed: int = setting(0, low=0)  # init, shuffling and the training noise
    sigma: float = setting(0.0, low=0)  # noise per state number per step (training and reading; 0: none)

    def __post_init__(self):
        if min(self.d_embed, self.d_hidden, self.batch_size) < 1 or self.epochs < 0:
            raise ValueError("d_embed, d_hidden, batch_size must be >= 1 and epochs >= 0")
        check_sigma(self.sigma)


class GRULanguageModel(nn.Module):
    """Embedding -> unidirectional GRU -> linear over the vocabulary.

    ``forward(ids (B, T), generator=None)`` -> ``(logits (B, T, V), states (B, T, H))``; the state at t
    has read ``ids[:, :t + 1]`` only (causal, like the EMA traces), and ``logits[:, t]`` predicts
    ``ids[:, t + 1]``. Id 0 is padding. With ``cfg.sigma > 0`` every state number gets
    ``sigma * N(0, 1)`` after every step (:meth:`noisy_states`, noise drawn from ``generator``, or the
    global generator), in train and in eval mode: the noise is part of the state, not a regulariser.
    """

    def __init__(self, vocab_size: int, cfg: GRULMConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(vocab_size, cfg.d_embed, padding_idx=0)
        self.gru = nn.GRU(cfg.d_embed, cfg.d_hidden, batch_first=True)
        self.head = nn.Linear(cfg.d_hidden, vocab_size)

    def forward(self, ids: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        x = self.embed(ids)                                                   # (B, T, E)
        states = self.noisy_states(x, generator) if self.cfg.sigma else self.gru(x)[0]   # (B, T, H)
        return self.head(states), states

    def noisy_states(self, x: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """``(B, T, H)`` states of embeddings ``x`` ``(B, T, E)``, one step at a time with noise after each:
        ``h_t = GRU(x_t, h_{t-1}) + sigma eps_t`` (PyTorch's GRU equations, with :attr:`gru`'s weights; at
        ``sigma = 0`` it is :attr:`gru`'s fused path, which the tests check)."""
        g, H = self.gru, self.cfg.d_hidden
        gi = (x @ g.weight_ih_l0.T + g.bias_ih_l0).unbind(1)                  # T x (B, 3H), every step at once
        h, out = x.new_zeros(x.shape[0], H), []
        for gi_t in gi:
            gh = h @ g.weight_hh_l0.T + g.bias_hh_l0                          # (B, 3H)
            r, z = torch.sigmoid(gi_t[:, :2 * H] + gh[:, :2 * H]).chunk(2, 1)
            n = torch.tanh(gi_t[:, 2 * H:] + r * gh[:, 2 * H:])
            h = (1 - z) * n + z * h                                           # (B, H)
            if self.cfg.sigma:
                h = h + self.cfg.sigma * torch.randn(h.shape, generator=generator, dtype=h.dtype)
            out.append(h)
        return torch.stack(out, 1)


def train_gru_lm(ids: Tensor, vocab_size: int, config: GRULMConfig | None = None,
                 progress: bool = False) -> tuple[GRULanguageModel, list[float]]:
    """Train a :class:`GRULanguageModel` on padded documents ``ids`` ``(B, T)`` (0 = padding)
    by next-word cross-entropy, with no role label; with ``config.sigma > 0`` its states carry the noise
    in training (drawn from a generator seeded ``config.seed + 1``; the batches' order is the same at any sigma).

    Returns:
        ``(model, history)``; ``history`` lists the mean training loss per epoch (nats per token).

    Raises:
        ValueError: ``ids`` not 2-D, empty, or with an id outside ``[0, vocab_size)``.
    """
    cfg = config or GRULMConfig()
    if ids.ndim != 2 or ids.numel() == 0 or int(ids.min()) < 0 or int(ids.max()) >= vocab_size:
        raise ValueError(f"ids must be a non-empty (B, T) tensor of ids in [0, {vocab_size}), got shape {tuple(ids.shape)}")
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = GRULanguageModel(vocab_size, cfg)
    noise = torch.Generator().manual_seed(cfg.seed + 1)

    def batch_loss(idx: Tensor) -> tuple[Tensor, int]:
        x = ids[idx]
        logits, _ = model(x[:, :-1], noise)
        target = x[:, 1:].masked_fill(x[:, 1:] == 0, -100)
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab_size), target.reshape(-1), ignore_index=-100)
        return loss, int((target != -100).sum())

    history = _fit(model, batch_loss, len(ids), cfg.batch_size, cfg.lr, cfg.epochs, gen,
                   "GRU LM" if progress else None)
    return model, history


@torch.no_grad()
def gru_states(model: GRULanguageModel, ids: Tensor, batch_size: int = 64,
               generator: torch.Generator | None = None) -> np.ndarray:
    """Hidden states ``(B, T, H)`` (float32 numpy) of ``model`` on padded ``ids`` ``(B, T)``, with the
    model's noise (``cfg.sigma``) drawn from ``generator``: a new draw at every call."""
    return np.concatenate([model(ids[i: i + batch_size], generator)[1].numpy()
                           for i in range(0, len(ids), batch_size)], 0)


# ----------------------------------------------------------------------------- GRU on the causal-LM shell
@dataclass
class GRUCausalConfig:
    """Sizes of :class:`GRUCausalLM`, the learned gated recurrence of notebook 05 (our design:
    the paper has no such model; it names gates as what fixed traces lack).

    Attributes:
        vocab_size: tokens. n_layer: blocks. d_model: residual width.
        d_state: GRU hidden size per block (numbers carried from token to token); default
            ``d_model``. d_ff: MLP hidden units. block_size: longest sequence (tokens; no
            position table: the recurrence carries order).
    """

    vocab_size: int = 50257
    n_layer: int = 2
    d_model: int = 64
    d_state: int = setting(0, low=0)  # 0: d_model
    d_ff: int = 256
    block_size: int = 1024

    def __post_init__(self):
        if not self.d_state:
            self.d_state = self.d_model
        check_fields(self)


class GRUBlock(nn.Module):
    """Pre-norm residual block: ``x + W_o GRU(LN(x))``, then ``x + MLP(LN(x))``; ``(B, T, D) -> (B, T, D)``,
    causal (a unidirectional GRU from a zero state)."""

    def __init__(self, config: GRUCausalConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model)
        self.gru = nn.GRU(config.d_model, config.d_state, batch_first=True)
        self.out = nn.Linear(config.d_state, config.d_model)
        self.ln_2 = nn.LayerNorm(config.d_model)
        self.fc = nn.Linear(config.d_model, config.d_ff)
        self.proj = nn.Linear(config.d_ff, config.d_model)

    def forward(self, x: Tensor) -> Tensor:
        h, _ = self.gru(self.ln_1(x))                                         # (B, T, H)
        x = x + self.out(h)                                                   # (B, T, D)
        return x + self.proj(nn.functional.gelu(self.fc(self.ln_2(x))))      # (B, T, D)


class GRUCausalLM(CausalLM):
    """A GRU language model on the causal-LM shell (tied embedding, GPT-2 init, the same loss as
    SPEN and the Transformer): ``forward(idx (B, T), targets (B, T) | None) -> (logits (B, T, V), loss)``
    with ``loss`` the mean next-token cross-entropy in nats (targets of -100 are not counted).

    State: ``d_state`` numbers per block carried from token to token, chosen by learned gates
    (our design). The GRU's recurrent weights keep PyTorch's initialisation (the shell's GPT-2
    init touches Linear and Embedding layers only).

    Raises:
        ValueError: ``idx`` not 2-D.
    """

    kind = "gru"

    def __init__(self, config: GRUCausalConfig):
        super().__init__(config, GRUBlock, positions=False, residual_proj=("out.weight", "proj.weight"))


# ----------------------------------------------------------------------------- a GRU trained to keep the past
class LagReaderGRU(nn.Module):
    """A one-layer GRU over fixed input vectors whose state is trained to keep the past (notebook 06).

    The learned counterpart of a fixed EMA trace bank of the same size (``d_state`` numbers):
    linear heads read, from the state at ``t``, the label of the token at ``t - k`` for every
    trained lag ``k`` (one head per lag and target). **Our design** (the paper is silent): the GRU is told
    what to keep, so its map is what a learned, gated state of that size *can* hold.

    Args:
        d_input: width of the inputs (the same fixed embeddings the trace bank reads).
        d_state: the state's size. n_out: ``{target: classes}``. lags: the trained lags (>= 0).
    """

    def __init__(self, d_input: int, d_state: int, n_out: dict[str, int], lags: Sequence[int]):
        super().__init__()
        self.lags = [int(k) for k in lags]
        self.rnn = nn.GRU(d_input, d_state, batch_first=True)
        self.heads = nn.ModuleDict({f"{t}_{k}": nn.Linear(d_state, n) for t, n in n_out.items() for k in self.lags})

    def states(self, x: Tensor) -> Tensor:
        """``(B, T, d_state)`` states of inputs ``x`` ``(B, T, d_input)``."""
        return self.rnn(x)[0]

    @torch.no_grad()
    def head_accuracy(self, x: Tensor, labels: dict[str, Tensor], min_pos: int) -> dict[tuple[str, int], float]:
        """``{(target, lag): accuracy}`` of the trained heads on inputs ``x`` ``(B, T, d_input)`` at
        positions ``t >= min_pos`` (``labels``: ``(B, T)`` int64 per target; needs ``min_pos >= max(lags)``)."""
        h, T = self.states(x)[:, min_pos:], x.shape[1]
        return {(t, k): float((self.heads[f"{t}_{k}"](h).argmax(-1) == y[:, min_pos - k: T - k]).float().mean())
                for t, y in labels.items() for k in self.lags}

    def loss(self, x: Tensor, labels: dict[str, Tensor], min_pos: int) -> Tensor:
        """Mean cross-entropy over targets, lags and positions ``t >= min_pos`` (needs ``min_pos >= max(lags)``)."""
        h = self.states(x)[:, min_pos:]
        T = x.shape[1]
        losses = []
        for t, y in labels.items():
            for k in self.lags:
                target = y[:, min_pos - k: T - k]
                losses.append(nn.functional.cross_entropy(self.heads[f"{t}_{k}"](h).flatten(0, 1), target.flatten()))
        return torch.stack(losses).mean()
