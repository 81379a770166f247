"""kernels.lib.attention in Numba's simulator: NumPy inputs through fa2_mma against the NumPy reference (three
small launches: the simulator is slow), the choice of kernel for each GPU, and every refusal (no launch)."""

import numpy as np
import pytest

from kernels.capability import CapabilityError
from kernels.lib import attention
from kernels.lib.attention import pick
from kernels.attention.reference import reference
from kernels.runtime import DeviceInfo

pytestmark = pytest.mark.numba("simulator")
T4, A100, H100 = (DeviceInfo(simulator=False, name=n, cc=cc) for n, cc in
                  (("Tesla T4", (7, 5)), ("A100", (8, 0)), ("H100", (9, 0))))
SIM = DeviceInfo(simulator=True, name="CUDA simulator")
TOL = 4e-3          # |O - reference|: P rounded to float16, O stored in float16
LSE_TOL = 1e-4


def _inputs(B, S_q, S_k, H, H_kv, layout="BSHD", seed=0):
    rng = np.random.default_rng(seed)

    def one(S, heads):
        shape = (B, S, heads, 64) if layout == "BSHD" else (B, heads, S, 64)
        return rng.standard_normal(shape).astype(np.float16)
    return one(S_q, H), one(S_k, H_kv), one(S_k, H_kv)


def _check(O, LSE, q, k, v, **kw):
    want_o, want_lse = reference(q, k, v, dtype=np.float64, **kw)
    assert O.dtype == np.float16 and O.shape == q.shape and LSE.dtype == np.float32
    assert not np.isnan(O).any() and not np.isnan(LSE).any(), "outputs never written"
    assert np.max(np.abs(O.astype(np.float64) - want_o)) < TOL
    np.testing.assert_array_equal(np.isneginf(LSE), np.isneginf(want_lse))
    finite = np.isfinite(want_lse)
    assert np.max(np.abs(LSE[finite] - want_lse[finite]), initial=0) < LSE_TOL


def test_attention_numpy_grouped_heads():
    """Two query heads on one key head; S_q and S_k past a tile's edge."""
    q, k, v = _inputs(1, 33, 20, 2, 1)
    O, LSE = attention(q, k, v)
    assert isinstance(O, np.ndarray) and isinstance(LSE, np.ndarray)
    _check(O, LSE, q, k, v)


def test_attention_numpy_causal_bhsd_into_out():
    """(B, H, S, D) arrays, the causal mask with S_q > S_k (the first rows see no key), a scale, into `out`."""
    q, k, v = _inputs(1, 33, 17, 2, 2, layout="BHSD", seed=1)
    out = np.full(q.shape, np.nan, np.float16)
    O, LSE = attention(q, k, v, causal=True, scale=0.2, out=out, layout="BHSD")
    assert O is out
    _check(O, LSE, q, k, v, causal=True, scale=0.2, layout="BHSD")


def test_attention_device_arrays_with_strides():
    """Numba device arrays: q a (B, S, H, D) view of a (B, H, S, D) array, used in place; O and LSE stay on the
    device."""
    from numba import cuda
    q, k, v = _inputs(1, 24, 24, 2, 2, seed=2)
    qd = cuda.to_device(np.ascontiguousarray(q.transpose(0, 2, 1, 3))).transpose((0, 2, 1, 3))
    O, LSE = attention(qd, cuda.to_device(k), cuda.to_device(v), causal=True)
    _check(O.copy_to_host(), LSE.copy_to_host(), q, k, v, causal=True)


def test_pick_by_gpu():
    assert pick("float16", H100) == pick("bfloat16", H100) == "hopper"
    assert pick("bfloat16", A100) == pick("float16", T4) == pick("float16", SIM) == "mma_sync"
    with pytest.raises(CapabilityError, match="attention: bfloat16 .* Tesla T4"):
        pick("bfloat16", T4)


@pytest.mark.parametrize("change, error, match", [
    (dict(q=np.zeros((2, 64), np.float16)), ValueError, r"q must have 4 modes \(BSHD\), got shape \(2, 64\)"),
    (dict(q=np.zeros((1, 8, 2, 32), np.float16)), ValueError, r"D must be one of \(64, 128\), .*\(D = 32\)"),
    (dict(k=np.zeros((1, 8, 2, 128), np.float16), v=np.zeros((1, 8, 2, 128), np.float16)), ValueError,
     "q and k must have the same head dimension"),
    (dict(k=np.zeros((2, 8, 2, 64), np.float16), v=np.zeros((2, 8, 2, 64), np.float16)), ValueError,
     "same batch, got 1 .* and 2"),
    (dict(k=np.zeros((1, 8, 3, 64), np.float16), v=np.zeros((1, 8, 3, 64), np.float16)), ValueError,
     "H = 2 must be a multiple of k's heads H_kv = 3"),
    (dict(v=np.zeros((1, 9, 2, 64), np.float16)), ValueError, "k and v must have the same shape"),
    (dict(q=np.zeros((1, 0, 2, 64), np.float16)), ValueError, "every mode must be nonempty"),
    (dict(q=np.zeros((1, 8, 2, 64), np.float32)), TypeError,
     "q has dtype float32; attention takes float16 or bfloat16"),
    (dict(q=[[0.0]]), TypeError, "q must be a NumPy array or a GPU array .* got list"),
    (dict(scale="0.1"), TypeError, "scale must be a finite number or None, got '0.1'"),
    (dict(causal=1), TypeError, "causal must be True or False, got 1"),
    (dict(layout="BSDH"), ValueError, "layout must be one of BSHD, BHSD, got 'BSDH'"),
    (dict(out=np.zeros((1, 8, 2, 128), np.float16)), ValueError, r"out must have q's shape \(1, 8, 2, 64\)"),
])
def test_attention_refuses(change, error, match):
    args = dict(zip("qkv", (np.zeros((1, 8, 2, 64), np.float16) for _ in range(3))))
    args.update(change)
    with pytest.raises(error, match="attention: .*" + match):
        attention(**args)


class _Bfloat16:
    """A stand-in for a bfloat16 GPU array (NumPy has no bfloat16 here): what the type check reads."""
    dtype, shape, __cuda_array_interface__ = "torch.bfloat16", (1, 8, 2, 64), {}


def test_attention_refuses_mixed_types_places_and_strides():
    from numba import cuda
    x = np.zeros((1, 8, 2, 64), np.float16)
    with pytest.raises(TypeError, match="attention: q and v must have the same dtype, got float16 and bfloat16"):
        attention(x, x, _Bfloat16())
    with pytest.raises(TypeError, match="attention: q, k, v must all be NumPy arrays or all on one GPU, got q host, "
                                        "k GPU, v host"):
        attention(x, cuda.to_device(x), x)
    d = cuda.to_device(np.zeros((1, 8, 64, 2), np.float16))
    with pytest.raises(ValueError, match="attention: k must be contiguous along D"):
        attention(cuda.to_device(x), d.transpose((0, 1, 3, 2)), cuda.to_device(x))


def test_attention_numpy_into_out_and_lse():
    """NumPy `out` and `lse` are filled (and returned) as the results."""
    q, k, v = _inputs(1, 20, 20, 1, 1, seed=3)
    out, lse = np.full(q.shape, np.nan, np.float16), np.full((1, 1, 20), np.nan, np.float32)
    O, LSE = attention(q, k, v, out=out, lse=lse)
    assert O is out and LSE is lse
    _check(O, LSE, q, k, v)


def test_attention_refuses_an_lse_it_cannot_fill():
    x = np.zeros((1, 8, 2, 64), np.float16)
    with pytest.raises(ValueError, match=r"attention: lse must have shape \(B, H, S_q\) = \(1, 2, 8\), "
                                         r"got \(1, 8, 2\)"):
        attention(x, x, x, lse=np.zeros((1, 8, 2), np.float32))
    with pytest.raises(TypeError, match="attention: lse must be a float32 NumPy array like q, got ndarray float16"):
        attention(x, x, x, lse=np.zeros((1, 2, 8), np.float16))


class _Dev:
    """What a device array shows the key of a prepared call: its __cuda_array_interface__ (and a stream)."""

    def __init__(self, ptr, shape, typestr, stream=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape, "strides": None, "typestr": typestr,
                                         "version": 3, "stream": stream}


def test_attention_prepares_only_device_calls_with_out_and_lse():
    """A call is replayed only when q, k, v, out and lse are device arrays of one stream; the key holds their
    addresses, shapes, strides and types, the mask, the scale and the layout."""
    import importlib
    _call_key = importlib.import_module("kernels.lib.attention")._call_key
    q, k, v, o = (_Dev((i + 1) << 20, (1, 8, 2, 64), "<f2") for i in range(4))
    lse = _Dev(5 << 20, (1, 2, 8), "<f4")
    host = np.zeros((1, 8, 2, 64), np.float16)
    assert _call_key(q, k, v, o, None, False, None, "BSHD") is None
    assert _call_key(q, k, v, None, lse, False, None, "BSHD") is None
    assert _call_key(host, k, v, o, lse, False, None, "BSHD") is None
    key = _call_key(q, k, v, o, lse, False, None, "BSHD")
    assert key is not None and key == _call_key(q, k, v, o, lse, False, None, "BSHD")
    others = [_call_key(k, q, v, o, lse, False, None, "BSHD"), _call_key(q, k, v, o, lse, True, None, "BSHD"),
              _call_key(q, k, v, o, lse, False, 0.5, "BSHD"), _call_key(q, k, v, o, lse, False, None, "BHSD")]
    assert None not in others and len({key, *others}) == 5
    assert _call_key(q, k, v, o, _Dev(5 << 20, (1, 2, 8), "<f4", stream=7), False, None, "BSHD") is None


def test_attention_replays_a_prepared_call(monkeypatch):
    """The second call with the same device arrays, out and lse is the first call's launch again: no check runs
    (they are made to fail), and out and lse, poisoned between the calls, are written again. (The simulator's
    arrays have no __cuda_array_interface__: here they are keyed by id.)"""
    import importlib
    from numba import cuda
    lib, matmul = (importlib.import_module("kernels.lib." + m) for m in ("attention", "matmul"))
    monkeypatch.setattr(lib, "_PREPARED", {})
    monkeypatch.setattr(matmul, "_identity", lambda x: id(x) if hasattr(x, "copy_to_host") else None)
    q, k, v = _inputs(1, 16, 16, 1, 1, seed=4)
    dq, dk, dv = (cuda.to_device(x) for x in (q, k, v))
    out, lse = cuda.to_device(np.zeros(q.shape, np.float16)), cuda.to_device(np.zeros((1, 1, 16), np.float32))
    O, LSE = attention(dq, dk, dv, causal=True, out=out, lse=lse)
    assert O is out and LSE is lse and len(lib._PREPARED) == 1
    out.copy_to_device(np.full(q.shape, np.nan, np.float16))
    lse.copy_to_device(np.full((1, 1, 16), np.nan, np.float32))

    def no_checks(*args):
        raise AssertionError("a replayed call checked its arrays")
    monkeypatch.setattr(lib, "_check_arrays", no_checks)
    O, LSE = attention(dq, dk, dv, causal=True, out=out, lse=lse)
    assert O is out and LSE is lse
    _check(out.copy_to_host(), lse.copy_to_host(), q, k, v, causal=True)
