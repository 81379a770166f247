"""Forward attention in NumPy: what every attention kernel of the book is checked against.

    O, lse = reference(q, k, v, causal=True)            # q (B, S_q, H, D); k, v (B, S_k, H_kv, D)
    O, lse = reference(q, k, v, layout="BHSD")           # q (B, H, S_q, D); k, v (B, H_kv, S_k, D)

O = softmax(scale * Q K^T [+ mask]) V for each batch and head, in the layout of q, and LSE, (B, H, S_q):
the log of each row's sum of exp(scale * s) (what a kernel stores to let a backward pass or a split-K
combine rebuild the softmax). Computed in `dtype` (float32 by default, float64 for a tighter reference)
from inputs of any float type.

- scale defaults to 1 / sqrt(D).
- causal: query i sees key j <= i + S_k - S_q, the diagonal aligned bottom-right as FlashAttention aligns it
  when S_q != S_k (cutelite.teach.attention.visible). With S_q > S_k the first S_q - S_k queries see no key:
  their row of O is 0 and their LSE is -inf (FlashAttention's convention; a softmax of nothing is undefined).
- grouped-query attention: k and v may have H_kv heads, H divisible by H_kv; query head h reads key and value
  head h // (H // H_kv).
"""

import numpy as np

__all__ = ["reference", "LAYOUTS"]

LAYOUTS = ("BSHD", "BHSD")   # the order of the modes of q, k, v and O: batch, sequence, head, head dimension


def _bhsd(x, name, layout):
    x = np.asarray(x)
    if x.ndim != 4:
        raise ValueError(f"reference: {name} must have 4 modes ({layout}), got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"reference: {name} must hold floats, got {x.dtype}")
    return x if layout == "BHSD" else x.transpose(0, 2, 1, 3)


def reference(q, k, v, causal=False, scale=None, layout="BSHD", dtype=np.float32):
    """(O, LSE) of forward attention: O in q's layout with v's head dimension, LSE of shape (B, H, S_q), both
    of `dtype` (see the module's docstring for the mask, the scale and grouped heads)."""
    if layout not in LAYOUTS:
        raise ValueError(f"reference: layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise TypeError(f"reference: dtype must be float32 or float64, got {np.dtype(dtype)}")
    q, k, v = (_bhsd(x, name, layout).astype(dtype) for x, name in ((q, "q"), (k, "k"), (v, "v")))
    B, H, S_q, D = q.shape
    _, H_kv, S_k, _ = k.shape
    if k.shape[:3] != v.shape[:3] or k.shape[0] != B or k.shape[3] != D:
        raise ValueError(f"reference: k and v must be (B, H_kv, S_k) alike with q's B = {B} and k's D = {D}; "
                         f"got q {q.shape}, k {k.shape}, v {v.shape} (as BHSD)")
    if H % H_kv:
        raise ValueError(f"reference: the query heads H = {H} must be a multiple of the key heads H_kv = {H_kv}")
    heads = np.arange(H) // (H // H_kv)
    k, v = k[:, heads], v[:, heads]
    scale = dtype(1.0 / np.sqrt(D)) if scale is None else dtype(scale)
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    if causal:
        i, j = np.arange(S_q)[:, None], np.arange(S_k)[None, :]
        s = np.where(j <= i + S_k - S_q, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)                 # a row with every key masked: subtract 0
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        o = np.where(l > 0, np.einsum("bhij,bhjd->bhid", p, v) / l, 0).astype(dtype)
        lse = np.where(l > 0, m + np.log(l), -np.inf)[..., 0].astype(dtype)
    return (o if layout == "BHSD" else o.transpose(0, 2, 1, 3)), lse
