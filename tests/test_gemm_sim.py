"""kernels.gemm in Numba's CUDA simulator: every rung of the ladder against NumPy (small sizes, outputs
poisoned with NaN), the tensor-core kernels in both operand majornesses (matmul: tests/test_matmul.py)."""

import numpy as np
import pytest

from kernels import gemm
from kernels.gemm import tc_sm75, tc_sm80, tc_sm80_prefetch
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
