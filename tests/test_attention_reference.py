"""kernels/attention/reference.py against attention written out row by row with the math module (float64),
and against PyTorch's scaled_dot_product_attention (float64, CPU) where torch is installed: layouts, scale,
the causal mask aligned bottom-right when S_q != S_k, grouped-query heads, fully masked rows."""

import math

import numpy as np
import pytest

from kernels.attention.reference import reference


def _direct(q, k, v, causal, scale):
    """O and LSE of (B, S, H, D) inputs, one query row at a time, from the definition: query head h reads key
    head h * H_kv // H; query i sees key j when j <= i + S_k - S_q (causal)."""
    B, S_q, H, D = q.shape
    S_k, H_kv = k.shape[1], k.shape[2]
    O = np.zeros((B, S_q, H, v.shape[3]))
    lse = np.full((B, H, S_q), -math.inf)
    for b in range(B):
        for h in range(H):
            g = h * H_kv // H
            for i in range(S_q):
                keys = [j for j in range(S_k) if not causal or j <= i + S_k - S_q]
                if not keys:
                    continue
                s = [scale * float(np.dot(q[b, i, h].astype(np.float64), k[b, j, g].astype(np.float64)))
                     for j in keys]
                top = max(s)
                e = [math.exp(x - top) for x in s]
                lse[b, h, i] = top + math.log(sum(e))
                for w, j in zip(e, keys):
                    O[b, i, h] += w / sum(e) * v[b, j, g].astype(np.float64)
    return O, lse


def _inputs(B, S_q, S_k, H, H_kv, D, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((B, S_q, H, D)).astype(dtype), rng.standard_normal((B, S_k, H_kv, D)).astype(dtype),
            rng.standard_normal((B, S_k, H_kv, D)).astype(dtype))


CASES = [  # B, S_q, S_k, H, H_kv, D, causal
    (1, 5, 5, 1, 1, 4, False), (2, 7, 7, 2, 2, 8, True), (1, 3, 9, 4, 2, 8, True), (1, 9, 4, 2, 1, 4, True),
    (2, 6, 11, 6, 3, 16, False), (1, 1, 13, 2, 2, 8, True), (1, 8, 8, 4, 1, 8, True)]


@pytest.mark.parametrize("B, S_q, S_k, H, H_kv, D, causal", CASES)
def test_reference_is_the_definition(B, S_q, S_k, H, H_kv, D, causal):
    q, k, v = _inputs(B, S_q, S_k, H, H_kv, D)
    want_o, want_lse = _direct(q, k, v, causal, 1 / math.sqrt(D))
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        O, lse = reference(q, k, v, causal=causal, dtype=dtype)
        assert O.dtype == dtype and lse.dtype == dtype and O.shape == q.shape and lse.shape == (B, H, S_q)
        np.testing.assert_allclose(O, want_o, rtol=tol, atol=tol)
        np.testing.assert_array_equal(np.isinf(lse), np.isinf(want_lse))
        np.testing.assert_allclose(lse[np.isfinite(lse)], want_lse[np.isfinite(want_lse)], rtol=tol, atol=tol)


def test_layouts_and_scale():
    """BHSD inputs give the BHSD transpose of the BSHD result; a scale replaces 1/sqrt(D); 16-bit inputs are read
    as their values."""
    q, k, v = _inputs(2, 6, 10, 4, 2, 8, dtype=np.float16)
    O, lse = reference(q, k, v, causal=True, scale=0.3)
    O2, lse2 = reference(*(x.transpose(0, 2, 1, 3) for x in (q, k, v)), causal=True, scale=0.3, layout="BHSD")
    np.testing.assert_array_equal(O2, O.transpose(0, 2, 1, 3))
    np.testing.assert_array_equal(lse2, lse)
    want_o, want_lse = _direct(q, k, v, True, 0.3)
    np.testing.assert_allclose(O, want_o, atol=2e-5)
    np.testing.assert_allclose(lse, want_lse, atol=2e-5)


def test_fully_masked_rows_are_zero_with_lse_minus_inf():
    """S_q = 9 > S_k = 4, causal: queries 0..4 see no key (j <= i - 5)."""
    q, k, v = _inputs(1, 9, 4, 2, 2, 4)
    O, lse = reference(q, k, v, causal=True)
    assert (O[:, :5] == 0).all() and np.isneginf(lse[..., :5]).all()
    assert np.isfinite(lse[..., 5:]).all() and np.isfinite(O).all()


def test_refusals_name_the_operation():
    q, k, v = _inputs(1, 4, 4, 3, 2, 8)
    with pytest.raises(ValueError, match="reference: the query heads H = 3 must be a multiple"):
        reference(q, k, v)
    with pytest.raises(ValueError, match="reference: layout must be one of BSHD, BHSD, got 'SBHD'"):
        reference(q, k, v, layout="SBHD")
    with pytest.raises(ValueError, match="reference: q must have 4 modes"):
        reference(q[0], k, v)
    with pytest.raises(TypeError, match="reference: dtype must be float32 or float64"):
        reference(q, k, v, dtype=np.float16)
    with pytest.raises(ValueError, match="reference: k and v must be"):
        reference(q, k[..., :4], v)


def test_against_torch_sdpa():
    """PyTorch's SDPA (float64, CPU; causal as causal_lower_right, the bottom-right diagonal; enable_gqa)."""
    torch = pytest.importorskip("torch")
    from torch.nn.attention.bias import causal_lower_right
    for B, S_q, S_k, H, H_kv, D, causal in CASES:
        if causal and S_q > S_k:
            continue   # rows that see no key: torch returns NaN where the reference returns 0
        q, k, v = _inputs(B, S_q, S_k, H, H_kv, D, dtype=np.float64)
        t = [torch.from_numpy(x).transpose(1, 2) for x in (q, k, v)]
        mask = causal_lower_right(S_q, S_k) if causal else None
        want = torch.nn.functional.scaled_dot_product_attention(*t, attn_mask=mask, enable_gqa=H != H_kv)
        O, _ = reference(q, k, v, causal=causal, dtype=np.float64)
        np.testing.assert_allclose(O, want.transpose(1, 2).numpy(), rtol=1e-12, atol=1e-12)
