"""kernels.gemm in Numba's CUDA simulator: every rung of the ladder against NumPy (small sizes, outputs
poisoned with NaN), the tensor-core kernels in both operand majornesses, matmul() and its errors."""

import numpy as np
import pytest

from kernels import gemm
from kernels.capability import CapabilityError
from kernels.gemm import matmul, tc_sm75, tc_sm80, tc_sm80_prefetch
from kernels.numeric import from_bf16_bits, to_bf16_bits

pytestmark = pytest.mark.numba("simulator")
SIMT = [r.name for r in gemm.LADDER if r.dtype == "f32"]


def _check(C, A, B, tol):
    want = A.astype(np.float64) @ B.astype(np.float64)
    assert np.all(np.isfinite(C)), "%d outputs never written" % np.sum(~np.isfinite(C))
    err = np.max(np.abs(C - want)) / max(1.0, np.max(np.abs(want)))
    assert err < tol, err


@pytest.mark.parametrize("name", SIMT)
def test_simt_rung_matches_numpy(name):
    r = gemm.step(name)
    M, N = (128, 128) if r.tile[0] == 128 else (64, 64)
    K = 16 if r.tile[2] < 32 else 32
    rng = np.random.default_rng(7)
    A, B = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    r.kernel.launch(A, B, C)
    _check(C, A, B, 1e-5)


def _operands(M, N, K, majors, seed, bf16=False):
    """A (M, K) and B (K, N) as the kernels take them (uint16 bits; each row- or column-major in memory),
    and their values as float32."""
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    if bf16:
        Ab, Bb = to_bf16_bits(A), to_bf16_bits(B)
        A, B = from_bf16_bits(Ab), from_bf16_bits(Bb)
    else:
        Ab, Bb = A.astype(np.float16).view(np.uint16), B.astype(np.float16).view(np.uint16)
        A, B = A.astype(np.float16).astype(np.float32), B.astype(np.float16).astype(np.float32)
    Ab = Ab if majors[0] == "K" else np.asfortranarray(Ab)          # K-major A is row-major
    Bb = np.asfortranarray(Bb) if majors[1] == "K" else Bb          # K-major B is column-major
    return Ab, Bb, A, B


RUNGS = {"sm75": "tc_sm75", "sm80": "tc_sm80", "sm80_prefetch": "tc_sm80_prefetch"}


@pytest.mark.parametrize("module", ["sm80", "sm80_prefetch", "sm75"])
@pytest.mark.parametrize("majors", [("K", "MN"), ("MN", "K")])
def test_tensor_core_rung_matches_numpy(module, majors):
    """Each tensor-core rung at a simulator size (one 64x64 CTA tile of 4 warps), 3 k-tiles: the pipelines'
    prologue, steady state and drain."""
    mod = {"sm80": tc_sm80, "sm80_prefetch": tc_sm80_prefetch, "sm75": tc_sm75}[module]
    k = mod.make(**dict(mod.BEST, BM=64, BN=64, majors=majors))
    Ab, Bb, A, B = _operands(64, 64, 96, majors, 3)
    C = np.full((64, 64), np.nan, np.float32)
    k.launch(Ab, Bb, C)
    _check(C, A, B, 1e-5)


@pytest.mark.parametrize("module", ["sm80", "sm80_prefetch", "sm75"])
def test_tensor_core_rung_predicates_the_edges(module):
    """edges=True: M, N, K that are not multiples of the tile. The simulator's twins raise on any access
    outside an array, so this also shows that nothing outside A, B and C is touched."""
    mod = {"sm80": tc_sm80, "sm80_prefetch": tc_sm80_prefetch, "sm75": tc_sm75}[module]
    cfg = dict(mod.BEST, BM=64, BN=64, edges=True, majors=("MN", "MN"))
    k = mod.make(**dict(cfg, stages=3) if module != "sm75" else cfg)
    Ab, Bb, A, B = _operands(72, 88, 40, ("MN", "MN"), 5)
    C = np.full((72, 88), np.nan, np.float32)
    k.launch(Ab, Bb, C)
    _check(C, A, B, 1e-5)


def test_bf16_and_deeper_pipelines():
    for cfg in (dict(stages=2), dict(stages=4, BK=64)):
        k = tc_sm80_prefetch.make(**dict(tc_sm80_prefetch.BEST, BM=64, BN=64, dtype="bfloat16", **cfg))
        Ab, Bb, A, B = _operands(64, 64, 128, ("K", "MN"), 6, bf16=True)
        C = np.full((64, 64), np.nan, np.float32)
        k.launch(Ab, Bb, C)
        _check(C, A, B, 1e-5)


def test_matmul_odd_shapes_and_column_major():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((40, 20)).astype(np.float16)
    B = rng.standard_normal((20, 72)).astype(np.float16)
    _check(matmul(np.asfortranarray(A), B), A, B, 1e-5)        # A column-major, padded M, N, K
    for name in ("tc_sm75", "tc_sm80"):
        _check(matmul(A, B, kernel=name), A, B, 1e-5)
    _check(matmul(A.astype(np.float32), B.astype(np.float32), kernel="simt_warptile"), A, B, 1e-5)
    A32, B32 = A.astype(np.float32)[:9, :5], B.astype(np.float32)[:5, :3]
    out = np.full((9, 3), np.nan, np.float32)
    assert matmul(A32, B32, out=out) is out
    _check(out, A32, B32, 1e-5)


def test_matmul_holes_a_bad_input_probe_found():
    """NumPy's answers where the kernels used to go wrong: an out overlapping A, K = 0, f16 on the SIMT kernel,
    an out of the wrong kind."""
    from numba import cuda
    rng = np.random.default_rng(8)
    A = rng.standard_normal((64, 64)).astype(np.float32)
    dA = cuda.to_device(A)
    matmul(dA, dA, out=dA)                               # out is A: computed as if into a temporary
    np.testing.assert_allclose(dA.copy_to_host(), A.astype(np.float64) @ A, rtol=1e-5, atol=1e-4)
    z = matmul(np.ones((5, 0), np.float32), np.ones((0, 3), np.float32))
    assert z.shape == (5, 3) and (z == 0).all()
    out = np.full((5, 3), np.nan, np.float32)
    assert matmul(np.ones((5, 0), np.float16), np.ones((0, 3), np.float16), out=out) is out and (out == 0).all()
    ones = np.ones((16, 16), np.float16)
    for name in ("simt", "simt_warptile"):
        assert (matmul(ones, ones, kernel=name) == 16).all()
    with pytest.raises(TypeError, match="matmul: out must be a float32 .* got 'list'"):
        matmul(A, A, out=[[0.0]])


def test_matmul_errors():
    a = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match=r"A is 4x3 and B is 4x3: A's columns \(3\) must equal B's rows \(4\)"):
        matmul(a, a)
    with pytest.raises(TypeError, match="dtype float64"):
        matmul(a.astype(np.float64), a.T)
    with pytest.raises(TypeError, match="same dtype"):
        matmul(a, a.T.astype(np.float16))
    with pytest.raises(ValueError, match="kernel must be one of"):
        matmul(a, a.T, kernel="fast")
    with pytest.raises(TypeError, match="use 'simt'"):
        matmul(a, a.T, kernel="tc_sm80")
    with pytest.raises(ValueError, match="2 dimensions"):
        matmul(np.zeros(3, np.float32), a)


def test_auto_picks_the_t4_path_on_sm75():
    from kernels.gemm.matmul import _choose
    assert _choose("auto", "f16", (7, 5)) == "tc_sm75"            # the fastest rung of each path
    assert _choose("auto", "f16", (9, 0)) == "tc_sm80"
    assert _choose("auto", "bf16", (7, 5)) == "simt"
    assert _choose("auto", "f32", (7, 5)) == "simt"
    with pytest.raises(CapabilityError, match="needs sm_80"):
        _choose("tc_sm80", "f16", (7, 5))
    with pytest.raises(CapabilityError, match="needs sm_75"):
        _choose("auto", "f16", (6, 1))
