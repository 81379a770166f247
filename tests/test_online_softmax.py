"""The online softmax model (cutelite.teach.softmax) and chapter 10's arithmetic (cutelite.teach.attention):
the online result is the direct softmax (NumPy), each step's state is what the recurrence says, the mask is
kernels/attention/reference.py's (NumPy's triangle), the counts are the formulas of the FlashAttention papers."""

import math

import numpy as np
import pytest

from cutelite.teach.attention import (attention_flops, fused_bytes, naive_bytes, tile_kind, tile_mask, visible)
from cutelite.teach.softmax import LOG2E, direct_attention, direct_softmax, finish, online_error, online_softmax


def _numpy_softmax(row, scale=1.0):
    x = scale * np.asarray(row, np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 8, 100])
def test_online_equals_numpy_softmax_for_every_block(block):
    rng = np.random.default_rng(block)
    row = (rng.standard_normal(23) * 4).tolist()
    V = rng.standard_normal((23, 3)).tolist()
    out, lse = finish(online_softmax(row, block, scale=0.7)[-1])
    np.testing.assert_allclose(out, _numpy_softmax(row, 0.7), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(direct_softmax(row, 0.7), _numpy_softmax(row, 0.7), rtol=1e-12)
    out, lse = finish(online_softmax(row, block, values=V, scale=0.7)[-1])
    np.testing.assert_allclose(out, _numpy_softmax(row, 0.7) @ np.array(V), rtol=1e-12, atol=1e-13)
    assert lse == pytest.approx(math.log(np.exp(0.7 * np.array(row)).sum()), rel=1e-13)
    assert online_error(row, block, V, 0.7) < 1e-12


def test_each_step_follows_the_recurrence():
    """Scores chosen as integers in log2 units (scale = ln 2): every exp2 is a power of two, the states exact."""
    row = [3, 1, 5, 2, 2, 7]
    steps = online_softmax(row, 2, scale=math.log(2))
    assert [s.keys for s in steps] == [(0, 2), (2, 4), (4, 6)]
    assert [s.m_new for s in steps] == pytest.approx([3, 5, 7])
    assert steps[0].m_old == -math.inf and steps[0].rescale == 0
    assert [s.rescale for s in steps[1:]] == pytest.approx([2 ** -2, 2 ** -2])
    assert steps[1].p == pytest.approx([1.0, 2 ** -3])
    l0 = 1 + 2 ** -2
    assert steps[1].l == pytest.approx(l0 / 4 + 1 + 2 ** -3)
    assert steps[2].l == pytest.approx(sum(2.0 ** (x - 7) for x in row))
    assert steps[0].x == pytest.approx([3, 1])   # s * scale * log2(e) = s


def test_masked_keys_and_rows():
    row = [-math.inf, -math.inf, 1.0, -math.inf, 0.5]
    steps = online_softmax(row, 2)
    assert steps[0].l == 0 and steps[0].m_new == -math.inf      # nothing visible yet: unchanged, no NaN
    np.testing.assert_allclose(finish(steps[-1])[0], [0, 0, *_numpy_softmax([1.0, -math.inf, 0.5])[[0, 1, 2]]])
    out, lse = finish(online_softmax([-math.inf] * 3, 2)[-1])
    assert out == [0.0, 0.0, 0.0] and lse == -math.inf
    assert direct_attention([-math.inf] * 3) == ([0.0, 0.0, 0.0], -math.inf)
    assert online_error(row, 2) < 1e-15


def test_refusals():
    for bad, match in (([], "non-empty"), ([1, "x"], "every score"), ([1, math.nan], "every score"),
                       ([math.inf], "every score")):
        with pytest.raises(ValueError, match=match):
            online_softmax(bad, 2)
    with pytest.raises(ValueError, match="online_softmax: block must be a whole number >= 1, got 0"):
        online_softmax([1.0], 0)
    with pytest.raises(ValueError, match="online_softmax: values must hold one vector per key"):
        online_softmax([1.0, 2.0], 1, values=[[1.0]])
    with pytest.raises(ValueError, match="online_softmax: scale must be a positive number"):
        online_softmax([1.0], 1, scale=-1)


def test_log2e():
    assert 2 ** (3.0 * LOG2E) == pytest.approx(math.exp(3.0), rel=1e-15)


# ---- the arithmetic --------------------------------------------------------------------------------------------
def test_flops_and_bytes():
    assert attention_flops(4, 16, 4096, 4096, 128) == 4 * 4 * 16 * 4096 ** 2 * 128
    assert attention_flops(4, 16, 4096, 4096, 128, causal=True) == 2 * 4 * 16 * 4096 ** 2 * 128
    # 1 x 1 x 4 x 8 x 2, fp16: S (32 scores) written, read, P written, read: 4 x 32 x 2; Q, O 4 x 2, K, V 8 x 2
    assert naive_bytes(1, 1, 4, 8, 2, 2) == 4 * 32 * 2 + (2 * 4 * 2 + 2 * 8 * 2) * 2
    assert naive_bytes(1, 1, 4, 8, 2, 2, causal=True) == 6 * 32 * 2 + (2 * 4 * 2 + 2 * 8 * 2) * 2
    assert fused_bytes(1, 1, 4, 8, 2, 2) == (2 * 4 * 2 + 2 * 8 * 2) * 2
    with pytest.raises(ValueError, match="attention_flops: D must be a whole number >= 1, got 0"):
        attention_flops(1, 1, 1, 1, 0)


@pytest.mark.parametrize("S_q, S_k", [(6, 10), (10, 6), (8, 8), (5, 13)])
def test_mask_is_numpys_bottom_right_triangle(S_q, S_k):
    want = np.tril(np.ones((S_q, S_k), bool), k=S_k - S_q)
    got = np.array([[visible(i, j, S_q, S_k, causal=True) for j in range(S_k)] for i in range(S_q)])
    np.testing.assert_array_equal(got, want)
    BM, BN = 4, 4
    full = np.zeros((-(-S_q // BM) * BM, -(-S_k // BN) * BN), bool)
    full[:S_q, :S_k] = want
    for m in range(full.shape[0] // BM):
        for n in range(full.shape[1] // BN):
            tile = full[m * BM:(m + 1) * BM, n * BN:(n + 1) * BN]
            np.testing.assert_array_equal(tile_mask(m, n, (BM, BN), S_q, S_k, causal=True), tile)
            assert tile_kind(m, n, (BM, BN), S_q, S_k, causal=True) == (
                "full" if tile.all() else "partial" if tile.any() else "skip")
    assert not visible(0, S_k, S_q, S_k) and visible(0, S_k - 1, S_q, S_k)


# ---- the explorer ------------------------------------------------------------------------------------------------
def test_explorer_text_is_the_model_and_the_same_in_the_widget_and_the_live_page():
    import json
    from cutelite.teach import live
    from cutelite.teach.explorers import online_softmax_result
    values = {"scores": "3, 1, 5, 2, 2, 7", "block": "2", "step": "1", "scale": str(math.log(2))}
    text, (x, now, final, block) = online_softmax_result(**values)
    # after block 1 (keys 0..3): m = 5, l = 2^-2 + 2^-4 + 1 + 2^-3; the weights are 2^(s - 5) / l
    l = 2 ** -2 + 2 ** -4 + 1 + 2 ** -3
    np.testing.assert_allclose(now, [2.0 ** (s - 5) / l for s in (3, 1, 5, 2)])
    np.testing.assert_allclose(final, _numpy_softmax([3, 1, 5, 2, 2, 7], math.log(2)))
    assert block == 2 and len(x) == 6
    assert "    1    2..3         5         3         5      0.25     1.438" in text
    shown = json.loads(live.view("online_softmax", json.dumps(values)))
    assert shown["text"] == text and shown["svg"].count("<rect") >= 3 * 7
    pytest.importorskip("ipywidgets")
    from cutelite.teach.widgets import OnlineSoftmaxExplorer
    assert OnlineSoftmaxExplorer(**values).render() == (text, shown["svg"])
    last = online_softmax_result(**dict(values, step="2"))[0]
    assert "last block: the online weights are the softmax" in last


@pytest.mark.parametrize("values, words", [
    ({"scores": ", ".join(["1"] * 65)}, "Refused: 65 scores; the explorer walks at most 64 keys"),
    ({"scores": "1, two"}, "ValueError: scores must be numbers"),
    ({"step": "7"}, "ValueError: after block 7: the row has blocks 0 to 2"),
    ({"block": "0"}, "ValueError: online_softmax: block must be a whole number >= 1"),
    ({"scale": "nan"}, "ValueError: online_softmax: scale must be a positive number"),
    ({"scores": "1, nan"}, "ValueError: online_softmax: every score must be a number")])
def test_explorer_refuses_in_words(values, words):
    from cutelite.teach.explorers import online_softmax_result
    text, case = online_softmax_result(**values)
    assert text.startswith(words) and case is None
