"""DepthScore (Staerman et al., 2021): a data-depth pseudo-metric between token-embedding clouds.

Staerman, Mozharovskyi, Colombo, Clémençon and d'Alché-Buc. "A Pseudo-Metric between Probability
Distributions based on Depth-Trimmed Regions." arXiv:2103.12711 (2021), applied to text as
DepthScore. Defaults follow the authors' code (``depth_score.py`` of
``nlg_eval_via_simi_measures``): ``bert-base-uncased``, layer 9, integrated rank-weighted (IRW)
depth on 10,000 random directions, 5 trimming levels from 0.3 to 1, power p = 5.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hanna_stats.scoring.models._embed import encode, unit
from hanna_stats.scoring.registry import ScoringConfig, Texts, register

MODEL = "bert-base-uncased"
LAYER = 9
N_DIRECTIONS = 10_000
N_ALPHA = 5
EPS_MIN = 0.3
POWER = 5
SEED = 0


def sphere(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` directions drawn uniformly on the unit sphere of R^dim (normalised Gaussians)."""
    u = rng.standard_normal((n, dim))
    return u / np.linalg.norm(u, axis=1, keepdims=True)


def irw_depth(x: np.ndarray, directions: np.ndarray) -> np.ndarray:
    r"""Integrated rank-weighted depth of each row of ``x`` in the cloud ``x``.

    .. math:: D(x_i) = \frac{1}{K} \sum_{k=1}^{K} \min\bigl(r_{ik} / n,\ 1 - r_{ik} / n\bigr)

    where :math:`r_{ik} \in \{1..n\}` is the rank of :math:`\langle u_k, x_i \rangle` among the
    :math:`n` projections on direction :math:`u_k` (Ramsay et al., 2019; Staerman et al., 2021).
    """
    n = len(x)
    ranks = np.empty((n, len(directions)))
    order = np.argsort(x @ directions.T, axis=0)
    np.put_along_axis(ranks, order, np.arange(1, n + 1)[:, None] / n, axis=0)
    return np.minimum(ranks, 1 - ranks).mean(axis=1)


def dr_distance(
    x: np.ndarray,
    y: np.ndarray,
    depth_directions: np.ndarray,
    support_directions: np.ndarray,
    hanna_compat: bool = False,
) -> float:
    r"""Depth-trimmed-region distance between the clouds ``x`` and ``y``.

    .. math:: \mathrm{DR}_p(X, Y) = \Bigl(\frac{1}{|A|} \sum_{\alpha \in A}
              \max_{u} \bigl|h_{R_\alpha(X)}(u) - h_{R_\alpha(Y)}(u)\bigr|^p\Bigr)^{1/p}

    with :math:`R_\alpha(X)` the points of ``x`` whose :func:`irw_depth` is at least its
    :math:`\alpha`-quantile, :math:`h_R(u) = \max_{z \in R} \langle u, z \rangle` the support
    function, :math:`A` = :data:`N_ALPHA` levels evenly spaced from :data:`EPS_MIN` to 1 (as
    percentiles, linearly interpolated) and :math:`u` over ``support_directions``
    (Staerman et al., 2021, Def. 2). Under ``hanna_compat`` the authors' code is followed in
    raising the signed difference to the (odd) power instead of its absolute value.
    """
    depth_x, depth_y = irw_depth(x, depth_directions), irw_depth(y, depth_directions)
    proj_x, proj_y = x @ support_directions.T, y @ support_directions.T
    total = 0.0
    for level in np.linspace(int(EPS_MIN * 100), 100, N_ALPHA):
        hx = proj_x[depth_x >= np.percentile(depth_x, level)].max(axis=0)
        hy = proj_y[depth_y >= np.percentile(depth_y, level)].max(axis=0)
        diff = hx - hy if hanna_compat else np.abs(hx - hy)
        total += np.max(diff**POWER)
    return float((total / N_ALPHA) ** (1 / POWER))


def depthscore(
    candidates: Sequence[str],
    references: Sequence[str],
    config: ScoringConfig,
    *,
    model: str = MODEL,
    layer: int = LAYER,
    seed: int = SEED,
) -> np.ndarray:
    """DepthScore of each candidate against its reference: :func:`dr_distance` between the
    reference's and the candidate's unit-normalised token embeddings at ``layer`` (special tokens
    included, as in the authors' code). Lower is closer; 0 for identical texts.

    Parameters
    ----------
    candidates, references : sequence of str
        Aligned texts.
    config : ScoringConfig
        Device, batch size, checkpoint overrides, ``hanna_compat``, progress.
    model : str
        Encoder checkpoint (default ``bert-base-uncased``).
    layer : int
        Index into ``hidden_states`` (0 = embeddings).
    seed : int
        Seed of the random directions; the same directions serve every pair.

    Returns
    -------
    numpy.ndarray
        float64 scores.
    """
    both = encode([*references, *candidates], model, config, [layer], "DepthScore")
    refs, cands = both[: len(references)], both[len(references) :]
    if not refs:
        return np.empty(0)
    rng = np.random.default_rng(seed)
    dim = refs[0].hidden.shape[-1]
    depth_dirs, support_dirs = sphere(N_DIRECTIONS, dim, rng), sphere(N_DIRECTIONS, dim, rng)

    return np.array(
        [
            dr_distance(
                unit(r.hidden[0]), unit(c.hidden[0]), depth_dirs, support_dirs, config.hanna_compat
            )
            for r, c in zip(refs, cands, strict=True)
        ]
    )


@register(
    "depthscore",
    ["DepthScore"],
    family="embedding",
    reference=True,
    requires=("torch", "transformers"),
)
def score_depthscore(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """DepthScore of each candidate against the human reference (see :func:`depthscore`)."""
    return {"DepthScore": depthscore(texts.candidates, texts.references, config)}
