"""kernels.gemm in Numba's CUDA simulator: every rung of the ladder against NumPy (small sizes, outputs
poisoned with NaN), the tensor-core kernels in both operand majornesses, matmul() and its errors.
Reruns itself in a fresh interpreter when numba is not in simulator mode in this process."""

import numpy as np
import pytest

from kernels._testing import numba_mode, run_in_subprocess

IN_PROCESS = numba_mode(simulator=True)
here = pytest.mark.skipif(not IN_PROCESS, reason="numba is not in simulator mode in this process: "
                          "test_gemm_simulator_suite_in_subprocess ran these")


@pytest.mark.skipif(IN_PROCESS, reason="ran in this process")
def test_gemm_simulator_suite_in_subprocess():
    rc, out = run_in_subprocess(__file__, simulator=True)
    assert rc == 0, out[-4000:]


if IN_PROCESS:
    from kernels import gemm
    from kernels.capability import CapabilityError
    from kernels.gemm import matmul, tc_sm75, tc_sm75_large, tc_sm80, tc_sm80_large, tc_sm80_lean
    SIMT = [r.name for r in gemm.LADDER if r.dtype == "f32"]
else:
    SIMT = []


def _check(C, A, B, tol):
    want = A.astype(np.float64) @ B.astype(np.float64)
    assert np.all(np.isfinite(C)), "%d outputs never written" % np.sum(~np.isfinite(C))
    err = np.max(np.abs(C - want)) / max(1.0, np.max(np.abs(want)))
    assert err < tol, err


@here
@pytest.mark.parametrize("name", SIMT)
def test_simt_rung_matches_numpy(name):
    r = next(r for r in gemm.LADDER if r.name == name)
    M, N = (128, 128) if r.tile[0] == 128 else (64, 64)
    K = 16 if r.tile[2] < 32 else 32
    rng = np.random.default_rng(7)
    A, B = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    r.launch(A, B, C)
    _check(C, A, B, 1e-5)


@here
@pytest.mark.parametrize("module", ["sm80", "sm75"])
@pytest.mark.parametrize("a_kmajor,b_kmajor", [(True, False), (False, True)])
def test_tensor_core_kernel_matches_numpy(module, a_kmajor, b_kmajor):
    small = dict(BM=64, BN=64, BK=32, WARPS_M=2, WARPS_N=2, a_kmajor=a_kmajor, b_kmajor=b_kmajor)
    k = tc_sm80.make_kernel(prefetch=True, **small) if module == "sm80" else tc_sm75.make_kernel(**small)
    M, N, K = 64, 128, 96        # 3 k-tiles: the pipelines' prologue, steady state and drain
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    Ag = A if a_kmajor else np.ascontiguousarray(A.T)
    Bg = np.ascontiguousarray(B.T) if b_kmajor else B
    C = np.full((M, N), np.nan, np.float32)
    k[(M // 64) * (N // 64), 128](Ag.view(np.uint16), Bg.view(np.uint16), C)
    _check(C, A, B, 1e-5)


@here
@pytest.mark.parametrize("module", ["sm80_large", "sm80_lean", "sm75_large"])
@pytest.mark.parametrize("a_kmajor,b_kmajor", [(True, False), (False, True)])
def test_large_tensor_core_kernel_matches_numpy(module, a_kmajor, b_kmajor):
    """The 64x64-warp-tile rungs at a simulator size (32x32 warp tiles: same code paths)."""
    small = dict(BM=64, BN=64, BK=32, WARPS_M=2, WARPS_N=2, a_kmajor=a_kmajor, b_kmajor=b_kmajor)
    M, N, K = 64, 128, 96
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    Ag = (A if a_kmajor else np.ascontiguousarray(A.T)).view(np.uint16)
    Bg = (np.ascontiguousarray(B.T) if b_kmajor else B).view(np.uint16)
    variants = ([dict(STAGES=3), dict(STAGES=2, dbuf=False), dict(STAGES=4)] if module == "sm80_large" else
                [dict(STAGES=3), dict(STAGES=2)] if module == "sm80_lean" else [{}])
    for cfg in variants:
        C = np.full((M, N), np.nan, np.float32)
        if module == "sm80_large":
            tc_sm80_large.launch(tc_sm80_large.make_kernel(**small, **cfg), Ag, Bg, C)
        elif module == "sm80_lean":
            tc_sm80_large.launch(tc_sm80_lean.make_kernel(**small, **cfg), Ag, Bg, C)
        else:
            tc_sm75_large.make_kernel(**small)[(M // 64) * (N // 64), 128](Ag, Bg, C)
        _check(C, A, B, 1e-5)


@here
def test_large_kernel_fragment_rule_is_checked():
    """The per-lane fragment offsets are derived, and verified for every lane, when a kernel is built."""
    from kernels.gemm.tc_sm80_large import fragment_address, step_rule
    from kernels.gemm.tiles import ldmatrix_tile
    from kernels.layout_codegen import layout_pyfunc
    at = layout_pyfunc(ldmatrix_tile(128, 32), by_mode=True)
    assert step_rule(fragment_address(at, True, True), 4, 2, [0, 64]) == ("+", 16 * 32, "^", 16)
    with pytest.raises(ValueError):
        step_rule(lambda i, s, lane, w: (i * i + s) * (lane + 1), 4, 2, [0])


@here
def test_matmul_odd_shapes_and_column_major():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((40, 20)).astype(np.float16)
    B = rng.standard_normal((20, 72)).astype(np.float16)
    _check(matmul(np.asfortranarray(A), B), A, B, 1e-5)        # A column-major, padded M, N, K
    for name in ("tc_sm75", "tc_sm80", "tc_sm75_large"):
        _check(matmul(A, B, kernel=name), A, B, 1e-5)
    _check(matmul(A.astype(np.float32), B.astype(np.float32), kernel="simt_warptile"), A, B, 1e-5)
    A32, B32 = A.astype(np.float32)[:9, :5], B.astype(np.float32)[:5, :3]
    out = np.full((9, 3), np.nan, np.float32)
    assert matmul(A32, B32, out=out) is out
    _check(out, A32, B32, 1e-5)


@here
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


@here
def test_auto_picks_the_t4_path_on_sm75():
    from kernels.gemm.matmul import _choose
    assert _choose("auto", "f16", (7, 5)) == "tc_sm75_large"      # the fastest rung of each path
    assert _choose("auto", "f16", (9, 0)) == "tc_sm80_large"
    assert _choose("tc_sm75", "f16", (7, 5)) == "tc_sm75"          # the smaller rungs stay reachable
    with pytest.raises(CapabilityError, match="needs sm_80"):
        _choose("tc_sm80_large", "f16", (7, 5))
    assert _choose("auto", "bf16", (7, 5)) == "simt"
    assert _choose("auto", "f32", (7, 5)) == "simt"
    with pytest.raises(CapabilityError, match="needs sm_80"):
        _choose("tc_sm80", "f16", (7, 5))
    with pytest.raises(CapabilityError, match="needs sm_75"):
        _choose("auto", "f16", (6, 1))
