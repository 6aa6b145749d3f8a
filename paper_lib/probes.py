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

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import MiniBatchKMeans
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

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
