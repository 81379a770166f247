"""The online softmax, one row at a time, as a fused attention kernel computes it (standard library only).

A row of scores s_0 .. s_{n-1} (one query against n keys) is walked block by block, as a kernel sees its key
tiles. The kernel never holds the whole row: it keeps a running max m, a running sum l and a partial output o
(the values weighted by unnormalised probabilities). When a block raises the max, everything summed so far was
taken against the old max and is multiplied by the rescale factor exp2(m_old - m_new) <= 1 (Milakov and
Gimelshein, "Online normalizer calculation for softmax", 2018; Dao et al., FlashAttention, 2022). As the
kernels do, the scores are first multiplied by scale * log2(e), so each exponential is an exp2:
exp(scale * s - c) == exp2(x - c * log2(e)) with x = scale * log2(e) * s.

    steps = online_softmax([3.0, 1.0, 5.0, 2.0], block=2)     # the state after each block
    out, lse = finish(steps[-1])                            # O = o / l, LSE = (m + log2 l) * ln 2
    direct_softmax([3.0, 1.0, 5.0, 2.0])                    # what `out` equals (values=None: V is the identity)

A masked score is -inf; a block whose scores are all -inf leaves the state unchanged (the kernels subtract 0
instead of an infinite max, so that exp2 never sees -inf - -inf), and a row with every score masked ends with
l = 0: its output is 0 and its LSE is -inf, as kernels/attention/reference.py says.
"""

import math
from collections import namedtuple

__all__ = ["LOG2E", "Step", "direct_softmax", "direct_attention", "online_softmax", "finish", "online_error"]

LOG2E = 1.0 / math.log(2.0)   # log2(e): exp(y) == 2 ** (y * LOG2E)

Step = namedtuple("Step", "block keys x m_old m_new rescale p l o")
Step.__doc__ = """The state after block `block` (keys range(*keys)): x, this block's scaled scores
(scale * log2(e) * s); m_old and m_new, the running max before and after it; rescale = exp2(m_old - m_new),
what l and o were multiplied by; p = exp2(x - m_new), this block's unnormalised probabilities; l, the running
sum; o, the running output (a list: the values weighted by the probabilities so far, not yet divided by l)."""


def _row(scores, what):
    """`scores` as a list of floats (a list or tuple of numbers, -inf for a masked key), refused otherwise."""
    if not isinstance(scores, (list, tuple)) or not scores:
        raise ValueError(f"{what}: scores must be a non-empty list of numbers, got {scores!r}")
    row = []
    for s in scores:
        if isinstance(s, bool) or not isinstance(s, (int, float)) or s != s or s == math.inf:
            raise ValueError(f"{what}: every score must be a number (or -inf for a masked key), got {s!r}")
        row.append(float(s))
    return row


def _values(values, n, what):
    """The value vectors, one per key (values=None: the identity, key j's value is the unit vector e_j, so that
    the output is the softmax row itself)."""
    if values is None:
        return [[1.0 if i == j else 0.0 for i in range(n)] for j in range(n)]
    if not isinstance(values, (list, tuple)) or len(values) != n:
        raise ValueError(f"{what}: values must hold one vector per key ({n}), got {values!r}")
    vs = [[float(x) for x in v] if isinstance(v, (list, tuple)) else [float(v)] for v in values]
    if len({len(v) for v in vs}) != 1:
        raise ValueError(f"{what}: every value vector must have the same length, got lengths "
                         f"{sorted({len(v) for v in vs})}")
    return vs


def direct_softmax(scores, scale=1.0):
    """softmax(scale * scores), the textbook way with the whole row at hand: subtract the max, exponentiate,
    divide by the sum. A row of -inf only gives zeros."""
    row = _row(scores, "direct_softmax")
    top = max(row)
    if top == -math.inf:
        return [0.0] * len(row)
    e = [math.exp(scale * (s - top)) for s in row]
    total = sum(e)
    return [x / total for x in e]


def direct_attention(scores, values=None, scale=1.0):
    """One output row, softmax(scale * scores) @ values, and its LSE = log(sum exp(scale * s)) (-inf where every
    score is masked), computed with the whole row at hand."""
    row = _row(scores, "direct_attention")
    vs = _values(values, len(row), "direct_attention")
    p = direct_softmax(row, scale)
    out = [sum(pj * v[d] for pj, v in zip(p, vs)) for d in range(len(vs[0]))]
    top = max(row)
    lse = -math.inf if top == -math.inf else scale * top + math.log(sum(math.exp(scale * (s - top)) for s in row))
    return out, lse


def online_softmax(scores, block, values=None, scale=1.0):
    """The online softmax of one row, walked `block` keys at a time: the list of Steps, one per block.

    Per block (x = scale * log2(e) * s for its keys):
        m_new   = max(m_old, max(x))
        rescale = exp2(m_old - m_new)             (0 for the first block: m_old = -inf)
        p       = exp2(x - m_new)
        l       = l * rescale + sum(p)
        o       = o * rescale + p @ values
    Post: finish(steps[-1]) == direct_attention(scores, values, scale), up to rounding (online_error).
    """
    row = _row(scores, "online_softmax")
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise ValueError(f"online_softmax: block must be a whole number >= 1, got {block!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < math.inf:
        raise ValueError(f"online_softmax: scale must be a positive number, got {scale!r}")
    vs = _values(values, len(row), "online_softmax")
    m, l, o = -math.inf, 0.0, [0.0] * len(vs[0])
    steps = []
    for b, start in enumerate(range(0, len(row), block)):
        keys = (start, min(start + block, len(row)))
        x = [s * scale * LOG2E for s in row[keys[0]:keys[1]]]
        m_new = max([m] + x)
        shift = 0.0 if m_new == -math.inf else m_new     # a fully masked block so far: subtract 0, not -inf
        rescale = 2.0 ** (m - shift)
        p = [2.0 ** (xj - shift) for xj in x]
        l = l * rescale + sum(p)
        o = [od * rescale + sum(pj * vs[keys[0] + j][d] for j, pj in enumerate(p)) for d, od in enumerate(o)]
        steps.append(Step(b, keys, x, m, m_new, rescale, p, l, o))
        m = m_new
    return steps


def finish(step):
    """(output, lse) from the last Step: o / l, and the LSE in the units of the scaled scores,
    (m + log2 l) * ln 2; a row with every key masked (l == 0) gives zeros and -inf."""
    if step.l == 0.0:
        return [0.0] * len(step.o), -math.inf
    return [od / step.l for od in step.o], (step.m_new + math.log2(step.l)) / LOG2E


def online_error(scores, block, values=None, scale=1.0):
    """The largest difference between the online result (output and LSE) and direct_attention's: what a
    checker compares with a rounding tolerance."""
    out, lse = finish(online_softmax(scores, block, values, scale)[-1])
    want, want_lse = direct_attention(scores, values, scale)
    lse_err = 0.0 if lse == want_lse else abs(lse - want_lse)
    return max([abs(a - b) for a, b in zip(out, want)] + [lse_err])
