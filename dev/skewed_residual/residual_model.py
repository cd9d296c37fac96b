#!/usr/bin/python3
# Lab (not product code): a CPU model of u14_stream_sp's and u24_stream_sp's residual on the generality suite's
# matrices (log-normal row densities capped at 1, as matrix/generators.cc draws them; Bernoulli columns; not the
# suite's exact matrices). Prints, per matrix, the longest per-split residual list a warp walks in order and the
# longest per-quad share when spread over eight quads (SPREAD_RESIDUAL 1), with rows in order and dealt by count
# (BALANCE_ROWS 1, RowOrder's rule), and the residual's size. Needs numpy (Debian: python3-numpy, /usr/bin/python3).
#   /usr/bin/python3 dev/skewed_residual/residual_model.py
import math
import numpy as np


def capped_mean(mu, s):  # E[min(1, X)], X ~ LogNormal(mu, s)
    phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
    return math.exp(mu + s * s / 2) * phi((-mu - s * s) / s) + (1 - phi(-mu / s))


def solve_mu(target, s):
    lo = math.log(target) - 0.5 * s * s
    hi = lo + 1
    while capped_mean(hi, s) < target:
        hi += 1
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if capped_mean(mid, s) < target else (lo, mid)
    return (lo + hi) / 2


def matrix(m, k, density, sigma, seed):
    rng = np.random.default_rng(seed)
    d = np.minimum(1, np.exp(solve_mu(density, sigma) + sigma * rng.standard_normal(m))) if sigma > 0 else np.full(m, density)
    return rng.random((m, k)) < d[:, None]


def lists(stored, firsts, seconds):
    """Residual entries per (row tile, list g, K tile of 64): beyond `firsts` a group of four, less the record's
    `seconds` second values (16 rows x 64 columns, stored row then column order)."""
    m, k = stored.shape
    mp, kp = -(-m // 128) * 128, -(-k // 64) * 64
    s = np.zeros((mp, kp), bool)
    s[:m, :k] = stored
    tiles, kts = mp // 16, kp // 64
    count = s.reshape(tiles, 16, kts, 16, 4).sum(-1)
    extra = np.maximum(count - firsts, 0)
    wants = (count > firsts).transpose(0, 2, 1, 3).reshape(tiles, kts, 256)
    got = (wants & (np.cumsum(wants, axis=2) <= seconds)).reshape(tiles, kts, 16, 16).transpose(0, 2, 1, 3)
    per_row = (extra - got).sum(-1)
    return per_row[:, :8, :] + per_row[:, 8:, :]


def walk(res, splits):
    kts = res.shape[2]
    per = -(-kts // splits)
    in_order = spread = 0
    for k0 in range(0, kts, per):
        part = res[:, :, k0:k0 + per].sum(-1)
        in_order = max(in_order, int(part.max()))
        spread = max(spread, int(np.ceil(part / 8).sum(1).max()))
    return in_order, spread, int(res.sum())


def row_order(nnz):  # u14_stream_sp's RowOrder(balance = true)
    rows = len(nnz)
    tiles = -(-rows // 16)
    order = np.full(tiles * 16, -1)
    for i, r in enumerate(np.argsort(-nnz, kind="stable")):
        turn, at = divmod(i, tiles)
        tile = tiles - 1 - at if turn % 2 else at
        order[tile * 16 + (turn if turn < 8 else 23 - turn)] = r
    return order


for name, m, k, density, sigma, splits, firsts, seconds in [
        ("u90 sigma 1, 5120^2, u14", 5120, 5120, 0.1, 1.0, 4, 1, 16),
        ("u90 sigma 1, 13824x5120, u14", 13824, 5120, 0.1, 1.0, 2, 1, 16),
        ("u90 uniform, 4096^2, u14", 4096, 4096, 0.1, 0.0, 4, 1, 16),
        ("u70 sigma 0.5, 5120^2, u24", 5120, 5120, 0.3, 0.5, 4, 2, 0),
        ("u70 uniform, 4096^2, u24", 4096, 4096, 0.3, 0.0, 4, 2, 0)]:
    a = matrix(m, k, density, sigma, 23)
    order = row_order(a.sum(1))
    balanced = np.zeros((len(order), k), bool)
    balanced[order >= 0] = a[order[order >= 0]]
    print(f"{name}: {a.sum()} nonzeros; (longest in order, longest spread, entries): "
          f"rows in order {walk(lists(a, firsts, seconds), splits)}, dealt by count {walk(lists(balanced, firsts, seconds), splits)}")
