"""Readouts of roles from frozen token features: a linear probe and a label-free readout.

The paper reads SPCN's roles "from the EMA-trace representation (the traces act as the
probe)" with "zero labels" (brief, "Experiment 1"); how exactly is not given, so we report
two readouts (**our design**):

- :func:`fit_linear_probe`: a multinomial logistic regression (scikit-learn) on
  standardised frozen features. The features are learned without labels; the probe is not.
- :func:`fit_cluster_readout`: truly label-free structure. MiniBatchKMeans clusters the
  standardised features with no label; the labels of the training split are then used only
  to *name* each cluster, by majority (many-to-one) or by a one-to-one Hungarian matching.

Both take ``X`` ``(N, F)`` token features and ``y`` ``(N,)`` integer role ids.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import MiniBatchKMeans
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from .ema import check_alphas

MAPPINGS: tuple[str, ...] = ("majority", "hungarian")


def _check_xy(X: np.ndarray, y: np.ndarray | None = None) -> None:
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty (N, F) matrix, got shape {X.shape}")
    if y is not None and (y.ndim != 1 or y.shape[0] != X.shape[0]):
        raise ValueError(f"y must have shape (N,) = ({X.shape[0]},), got {y.shape}")


def fit_linear_probe(X: np.ndarray, y: np.ndarray, C: float = 1.0, max_iter: int = 100,
                     seed: int = 0) -> Pipeline:
    """A linear probe: ``StandardScaler`` then multinomial ``LogisticRegression`` (lbfgs).

    Args:
        X: ``(N, F)`` frozen features. y: ``(N,)`` role ids.
        C: inverse L2 strength. max_iter: lbfgs iterations (a budget; convergence warnings
            are expected at small budgets and do not change the determinism).
        seed: ``random_state``.

    Returns:
        the fitted pipeline (``.predict(X)`` -> ``(N,)`` role ids).

    Raises:
        ValueError: bad shapes.
    """
    _check_xy(X, y)
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    probe = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=max_iter, random_state=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        probe.fit(X, y)
    return probe


@dataclass
class ClusterReadout:
    """Clusters found without labels, each named after a role on the training split.

    Attributes:
        scaler: the feature standardiser. kmeans: the fitted MiniBatchKMeans.
        cluster_role: ``(K,)`` the role id each cluster is read as.
        mapping: ``"majority"`` or ``"hungarian"``.
    """

    scaler: StandardScaler
    kmeans: MiniBatchKMeans
    cluster_role: np.ndarray
    mapping: str

    def clusters(self, X: np.ndarray) -> np.ndarray:
        """``(N,)`` cluster ids (label-free)."""
        _check_xy(X)
        return self.kmeans.predict(self.scaler.transform(X))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """``(N,)`` role ids read from the clusters."""
        return self.cluster_role[self.clusters(X)]


def fit_cluster_readout(X: np.ndarray, y: np.ndarray, n_clusters: int = 64, n_roles: int | None = None,
                        mapping: str = "majority", seed: int = 0) -> ClusterReadout:
    """Cluster ``X`` without labels, then name the clusters with the training labels ``y``.

    Args:
        X: ``(N, F)`` frozen features; y: ``(N,)`` role ids (used only to name clusters).
        n_clusters: K. ``"hungarian"`` matches clusters to roles one-to-one (clusters left
            over when K > roles fall back to their majority role).
        n_roles: number of roles (default ``y.max() + 1``).
        mapping: ``"majority"`` or ``"hungarian"``.
        seed: seeds MiniBatchKMeans.

    Raises:
        ValueError: bad shapes, ``n_clusters`` < 1, unknown mapping.
    """
    _check_xy(X, y)
    if mapping not in MAPPINGS:
        raise ValueError(f"unknown mapping {mapping!r}; allowed: {', '.join(MAPPINGS)}")
    if n_clusters < 1:
        raise ValueError(f"n_clusters must be >= 1, got {n_clusters}")
    R = int(n_roles if n_roles is not None else y.max() + 1)
    scaler = StandardScaler().fit(X)
    km = MiniBatchKMeans(n_clusters=n_clusters, random_state=seed, n_init=1, batch_size=2048)
    c = km.fit_predict(scaler.transform(X))
    counts = np.zeros((n_clusters, R), np.int64)                       # (K, R) contingency
    np.add.at(counts, (c, y), 1)
    cluster_role = counts.argmax(1)
    if mapping == "hungarian":
        rows, cols = linear_sum_assignment(-counts)
        cluster_role[rows] = cols
    return ClusterReadout(scaler, km, cluster_role, mapping)


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Share of tokens whose role is right (a fraction in [0, 1]).

    Raises:
        ValueError: different lengths or no tokens.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.size == 0:
        raise ValueError(f"y_true and y_pred must be non-empty and the same shape, got {y_true.shape}, {y_pred.shape}")
    return float((y_true == y_pred).mean())


def per_role_accuracy(y_true: np.ndarray, y_pred: np.ndarray, n_roles: int) -> np.ndarray:
    """``(n_roles,)`` accuracy among the tokens of each role (``nan`` for a role with no token)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    hit = np.bincount(y_true, weights=(y_true == y_pred).astype(float), minlength=n_roles)
    n = np.bincount(y_true, minlength=n_roles).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, hit / np.maximum(n, 1), np.nan)


# --------------------------------------------------------------------------- lag decodability
# Lag decodability: what a recurrent state at time t still holds about the token at t - k.
#
# The paper states the boundary between structure and content (brief, "Experiment 1": the
# EMA traces lose word identity and keep the temporal pattern); this module measures it
# (**our design: the paper has no such experiment**). From a state ``z_t`` (an EMA trace
# bank, one trace alone, or a GRU hidden state) a linear probe tries to recover a label of
# the token at ``t - k`` (its identity, or its grammatical role) for ``k = 0, 1, ..., K``.
# Identity that is read at k = 0 and not at k = 2 is content the state lost; a role read at
# k = 8 is structure it kept.
#
# The probe is a linear least-squares classifier (scikit-learn ``Ridge`` on standardised
# states, one-hot targets, argmax): one closed-form fit serves every lag and every target at
# once, so a full curve costs one solve. The same token positions are scored at every lag
# (positions ``t >= min_pos``), so the points of a curve are comparable.
#
# Shapes: states ``(B, T, F)``; labels ``(B, T)`` integer ids with ``-1`` on padding.

def lagged(labels: np.ndarray, k: int) -> np.ndarray:
    """``(B, T)`` labels shifted by ``k`` steps: ``out[b, t] = labels[b, t - k]``, ``-1`` where
    ``t - k < 0``.

    Raises:
        ValueError: ``k`` < 0 or labels not 2-D.
    """
    if k < 0:
        raise ValueError(f"lag k must be >= 0, got {k}")
    if labels.ndim != 2:
        raise ValueError(f"labels must be (B, T), got shape {labels.shape}")
    out = np.full_like(labels, -1)
    out[:, k:] = labels[:, : labels.shape[1] - k]
    return out


def _rows(states: np.ndarray, targets: Mapping[str, np.ndarray], lags: Sequence[int],
          min_pos: int) -> tuple[np.ndarray, dict[tuple[str, int], np.ndarray]]:
    """States ``(n, F)`` of the scored positions and their lagged labels ``{(target, k): (n,)}``."""
    if states.ndim != 3:
        raise ValueError(f"states must be (B, T, F), got shape {states.shape}")
    first = next(iter(targets.values()))
    if first.shape != states.shape[:2]:
        raise ValueError(f"labels {first.shape} do not match states {states.shape[:2]}")
    pos = np.arange(states.shape[1])[None, :] >= min_pos
    keep = pos & (first >= 0)                                            # (B, T) scored positions
    X = states[keep]
    Y = {(name, k): lagged(lab, k)[keep] for name, lab in targets.items() for k in lags}
    return X, Y


def lag_decodability(train_states: np.ndarray, train_labels: Mapping[str, np.ndarray],
                     test_states: np.ndarray, test_labels: Mapping[str, np.ndarray],
                     lags: Sequence[int] = tuple(range(17)), min_pos: int | None = None,
                     ridge: float = 1.0) -> pd.DataFrame:
    """Held-out accuracy of a linear probe that reads, from the state at t, the label at t - k.

    Args:
        train_states, test_states: ``(B, T, F)`` states (any width F; float).
        train_labels, test_labels: ``{target name: (B, T) int ids, -1 on padding}``, e.g.
            ``{"identity": word ids, "role": role ids}``; the first target's padding marks
            the valid positions.
        lags: the k's (steps, >= 0).
        min_pos: score only positions ``t >= min_pos`` (default ``max(lags)``), so every lag
            is scored on the same tokens.
        ridge: L2 strength of the least-squares probe (on standardised states).

    Returns:
        one row per (target, lag): ``target, lag, accuracy, chance, n_test``; ``chance`` is the
        test share of the most frequent training class (the best label-blind guess).

    Raises:
        ValueError: bad shapes, a negative lag, or no position left to score.
    """
    lags = [int(k) for k in lags]
    if not lags or min(lags) < 0:
        raise ValueError(f"lags must be a non-empty list of integers >= 0, got {lags}")
    min_pos = max(lags) if min_pos is None else int(min_pos)
    X_tr, Y_tr = _rows(train_states, train_labels, lags, min_pos)
    X_te, Y_te = _rows(test_states, test_labels, lags, min_pos)
    if len(X_tr) == 0 or len(X_te) == 0:
        raise ValueError(f"no position t >= min_pos={min_pos} to train or score on")
    scaler = StandardScaler().fit(X_tr)
    # one-hot blocks, one per (target, lag), solved together (one factorisation)
    blocks, cols = [], []
    for key, y in Y_tr.items():
        classes = np.unique(y)
        blocks.append((key, classes))
        cols.append((y[:, None] == classes[None, :]).astype(np.float64))
    model = Ridge(alpha=ridge).fit(scaler.transform(X_tr), np.concatenate(cols, 1))
    scores = model.predict(scaler.transform(X_te))                     # (n_test, sum of classes)
    rows, j = [], 0
    for (name, k), classes in blocks:
        pred = classes[scores[:, j: j + len(classes)].argmax(1)]
        j += len(classes)
        y_tr, y_te = Y_tr[(name, k)], Y_te[(name, k)]
        majority = np.bincount(y_tr).argmax()
        rows.append({"target": name, "lag": k, "accuracy": float((pred == y_te).mean()),
                     "chance": float((y_te == majority).mean()), "n_test": int(len(y_te))})
    return pd.DataFrame(rows)


def layer_identity(train_streams: Sequence[np.ndarray], train_ids: np.ndarray, test_streams: Sequence[np.ndarray],
                   test_ids: np.ndarray, lags: Sequence[int] = (0, 1), ridge: float = 1.0) -> pd.DataFrame:
    """:func:`lag_decodability` of token identity at each layer of a residual stream: which token
    was at ``t - k``, read by a linear probe from layer ``l``'s state at ``t``.

    ``*_streams``: one ``(B, T, D)`` array per layer (e.g. :meth:`paper_lib.models.lm.CausalLM.residual_stream`);
    ``*_ids``: the ``(B, T)`` input token ids. Returns one row per (layer, lag): ``layer, target, lag,
    accuracy, chance, n_test, decodability`` (``(accuracy - chance) / (1 - chance)``), every lag scored
    on the positions ``t >= max(lags)``. Raises ValueError as :func:`lag_decodability`, or on
    streams of different depths. Our design: the paper is silent."""
    if len(train_streams) != len(test_streams):
        raise ValueError(f"train and test streams have {len(train_streams)} and {len(test_streams)} layers")
    rows = [lag_decodability(a, {"identity": train_ids}, b, {"identity": test_ids}, lags, ridge=ridge).assign(layer=layer)
            for layer, (a, b) in enumerate(zip(train_streams, test_streams, strict=True))]
    df = pd.concat(rows, ignore_index=True)
    df["decodability"] = (df.accuracy - df.chance) / (1 - df.chance)
    return df[["layer", "target", "lag", "accuracy", "chance", "n_test", "decodability"]]


# --------------------------------------------------------------------------- closed form for a fixed trace bank
def trace_lag_weights(alphas: Sequence[float], n: int) -> np.ndarray:
    """``(S, n)`` weights of the input at lag ``j`` in each EMA trace: ``alpha_s (1 - alpha_s)^j``
    (``h_t = sum_j w_{s,j} x_{t-j}``, from :mod:`paper_lib.ema`'s recurrence with ``h_0 = 0``).

    Raises:
        ValueError: an alpha outside (0, 1] or ``n`` < 1.
    """
    a = check_alphas(alphas).numpy()
    if n < 1:
        raise ValueError(f"n must be >= 1, got n={n}")
    return a[:, None] * (1 - a[:, None]) ** np.arange(n)[None, :]


def matched_filter_identity_accuracy(alphas: Sequence[float], lag: int, vocab_size: int, d_model: int,
                                     window: int, signal_share: float = 1.0) -> float:
    """Closed-form accuracy of reading the token at ``t - lag`` from a fixed trace bank with the
    matched filter (a linear reader that knows the embeddings), tokens drawn uniformly and
    independently, embeddings random with unit expected norm in ``d_model`` dimensions.

    The reader scores every token ``v`` by ``sum_s c_s <h_s, E_v>``: the true token gets
    ``c . w_k`` (``signal_share`` of its embedding's energy is its own; the rest is shared and
    does not tell tokens apart), every other token Gaussian interference of variance
    ``c^T M c / d_model`` with ``M = sum_{j != k, j < window} w_j w_j^T`` (``S x S``, the other
    lags' weights). The best ``c`` gives ``snr^2 = d_model * share * w_k^T M^{-1} w_k`` and the
    accuracy is ``E_z[Phi(z + snr)^(V - 1)]`` (Gauss-Hermite quadrature). An approximation (our
    design): it ignores repeats of the token in the window and the interference's own
    dependence between tokens.

    Raises:
        ValueError: ``lag`` outside ``[0, window)``, ``vocab_size`` or ``d_model`` < 1.
    """
    from scipy.stats import norm

    if not 0 <= lag < window or vocab_size < 1 or d_model < 1:
        raise ValueError(f"need 0 <= lag < window and sizes >= 1, got lag={lag}, window={window}, "
                         f"vocab_size={vocab_size}, d_model={d_model}")
    if vocab_size == 1:
        return 1.0
    w = trace_lag_weights(alphas, window)
    wk = w[:, lag]
    other = np.delete(w, lag, axis=1)
    M = other @ other.T + 1e-12 * np.eye(len(wk))
    snr = float(np.sqrt(max(d_model * signal_share * wk @ np.linalg.solve(M, wk), 0.0)))
    z, q = np.polynomial.hermite_e.hermegauss(80)
    return float(np.sum(q * norm.cdf(z + snr) ** (vocab_size - 1)) / np.sqrt(2 * np.pi))
