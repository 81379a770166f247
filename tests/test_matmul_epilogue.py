"""matmul's epilogues in Numba's CUDA simulator: D = act(alpha A @ B + beta C + bias) in float32, float16 or
bfloat16, fused into the SIMT kernel and chapter 7's tensor-core steps, against NumPy in float64 (the output
NaN-poisoned first where C is not read); the refusals; a plain call builds the kernels it built before."""

import numpy as np
import pytest

from cutelite.numeric import BFloat16
from kernels.capability import CapabilityError
from kernels.hopper.variants import reference
from kernels.lib import matmul
from kernels.numeric import decode, encode

pytestmark = pytest.mark.numba("simulator")


def _values(D, out_dtype):
    return decode(D, BFloat16).astype(np.float64) if out_dtype == "bfloat16" else D.astype(np.float64)


# (inputs, kernel, out_dtype, alpha, beta, bias shape, activation): every path and option at least once
CASES = [
    (np.float16, "tc_sm80", "bfloat16", 0.5, -1.5, "col", "gelu"),
    (np.float16, "tc_sm80", "float16", 1.0, 0.0, "row", "relu"),
    (np.float16, "tc_sm75", "float32", 2.0, 1.0, None, None),
    (np.float32, "simt", "float16", 1.0, 2.0, "col", "gelu"),
    (np.float32, "simt", "bfloat16", -1.0, 0.0, "row", None),
    (np.float32, "simt", "float32", 1.0, 0.0, "col", "relu"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c[1:])))
def test_epilogue_matches_numpy(case):
    dtype, kernel, out_dtype, alpha, beta, bias_shape, activation = case
    rng = np.random.default_rng(CASES.index(case))
    M, N, K = (70, 72, 40) if kernel != "simt" else (130, 129, 20)
    A = rng.standard_normal((M, K)).astype(dtype)
    B = rng.standard_normal((K, N)).astype(dtype)
    bias = {None: None, "col": rng.standard_normal(N), "row": rng.standard_normal((M, 1))}[bias_shape]
    bias = None if bias is None else bias.astype(np.float32)
    C = rng.standard_normal((M, N)).astype(np.float32)
    held = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16}[out_dtype]
    if beta:
        out = encode(C, BFloat16) if out_dtype == "bfloat16" else C.astype(held)
        C = _values(out, out_dtype)                     # C as out holds it
    else:
        out = np.full((M, N), np.nan, held) if held is not np.uint16 else np.full((M, N), 0x7FC0, np.uint16)
    got = matmul(A, B, out=out, out_dtype=out_dtype, alpha=alpha, beta=beta, bias=bias, activation=activation,
                 kernel=kernel)
    assert got is out
    D = _values(out, out_dtype)
    want = reference(A, B.T, alpha, beta, C, bias, activation)
    assert np.all(np.isfinite(D)), "%d outputs never written" % np.sum(~np.isfinite(D))
    tol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 8e-3}[out_dtype]
    err = np.max(np.abs(D - want)) / max(1.0, np.max(np.abs(want)))
    assert err < tol, err


def test_epilogue_without_out_returns_the_type():
    """No `out`: a NumPy result of out_dtype (bfloat16 as its bits in uint16)."""
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((64, 16)).astype(np.float32), rng.standard_normal((16, 128)).astype(np.float32)
    D = matmul(A, B, out_dtype="float16", activation="relu")
    assert D.dtype == np.float16 and D.shape == (64, 128)
    assert np.max(np.abs(D - np.maximum(A.astype(np.float64) @ B, 0))) < 2e-3 * np.max(np.abs(A @ B))
    E = matmul(A, B, out_dtype="bfloat16", bias=np.ones(128, np.float32))
    assert E.dtype == np.uint16 and np.allclose(decode(E, BFloat16), A.astype(np.float64) @ B + 1, rtol=8e-3, atol=8e-3)


def test_refusals_name_matmul_the_argument_and_the_value():
    a = np.ones((8, 8), np.float32)
    with pytest.raises(ValueError, match="matmul: beta=0.5 adds beta \\* C, the values of `out`"):
        matmul(a, a, beta=0.5)
    with pytest.raises(ValueError, match="matmul: activation must be one of None, 'relu', 'gelu', got 'tanh'"):
        matmul(a, a, activation="tanh")
    with pytest.raises(ValueError, match="matmul: out_dtype must be one of float32, float16, bfloat16, got 'float64'"):
        matmul(a, a, out_dtype="float64")
    with pytest.raises(ValueError, match=r"matmul: bias must have shape \(8,\) or \(1, 8\) .* got \(7,\)"):
        matmul(a, a, bias=np.ones(7, np.float32))
    with pytest.raises(TypeError, match="matmul: bias must be float32, float16 or bfloat16, got float64"):
        matmul(a, a, bias=np.ones(8))
    with pytest.raises(TypeError, match="matmul: alpha must be a real number, got '2'"):
        matmul(a, a, alpha="2")
    with pytest.raises(ValueError, match="matmul: out must be a float16 \\(8, 8\\) array, got float32"):
        matmul(a, a, out=np.zeros((8, 8), np.float32), out_dtype="float16")
    from numba import cuda
    with pytest.raises(ValueError, match="matmul: bias is in host memory but the product is computed from device"):
        matmul(cuda.to_device(a), cuda.to_device(a), bias=np.ones(8, np.float32))
    with pytest.raises(CapabilityError, match="matmul: kernel='simt_warptile' cannot .* simt_warptile has no epilogue"):
        matmul(a, a, activation="relu", kernel="simt_warptile")


def test_plain_call_builds_the_kernel_it_built_before():
    """The epilogue is a build-time option: without one, a step's kernel is traced from the same body into the
    same source (the PTX comparison is in the report of this change)."""
    from kernels.cutejit import Epilogue
    from kernels.gemm import tc_sm80_prefetch
    plain = tc_sm80_prefetch.make(BM=64, BN=64)
    assert "epilogue" not in plain.source and "rD" not in plain.source
    assert plain.source.splitlines()[0] == "def gemm_tc_sm80_prefetch(mA, mB, mC):"
    fused = tc_sm80_prefetch.make(BM=64, BN=64, epi=Epilogue(out="float16", bias="col"))
    assert fused.source.splitlines()[0] == "def gemm_tc_sm80_prefetch(mA, mB, mC, mBias):"
    assert "pack_half2" in fused.source
    assert Epilogue().plain and not Epilogue(alpha=True).plain
    with pytest.raises(ValueError, match="Epilogue: activation must be one of None, 'relu', 'gelu', got 'elu'"):
        Epilogue(activation="elu")


def test_traffic_counts_each_matrix_once_a_step():
    """kernels.lib.epilogue.traffic at M, N, K = 3, 5, 7 with 2-byte elements, counted by hand: the fused GEMM
    reads A (21), B (35) and the bias (5) and writes D (15) once; each separate pass reads and writes D again."""
    from kernels.lib.epilogue import traffic
    plans = traffic(3, 5, 7, in_bytes=2, out_bytes=2, passes=("bias", "gelu"))
    assert plans["fused"] == [("GEMM + bias + gelu", 2 * (21 + 35 + 5), 2 * 15)]
    assert plans["separate"] == [("GEMM", 2 * (21 + 35), 2 * 15), ("bias", 2 * (15 + 5), 2 * 15),
                                 ("gelu", 2 * 15, 2 * 15)]


def test_recorded_prints_the_record_and_its_fuzz(tmp_path):
    """kernels.lib.epilogue.recorded: a record written as epilogue_bench.py --records writes it prints its
    device, command, fuzz result and one table row per run; with no record it says so."""
    import json
    from kernels.lib.epilogue import RECORDS, recorded
    assert recorded(str(tmp_path)).startswith("no record yet: " + RECORDS)
    (tmp_path / RECORDS).parent.mkdir(parents=True)
    (tmp_path / RECORDS).write_text(json.dumps({
        "device": "GPU X", "date": "2026-01-02", "command": "python b.py", "fuzz": {"cases": 4, "failed": 1},
        "rows": [{"size": 64, "run": "torch.mm bf16 out", "ms": 0.0123, "tflops": 42.04}]}))
    lines = recorded(str(tmp_path)).splitlines()
    assert lines[0] == "GPU X, 2026-01-02: `python b.py`; its fuzz: 1 of 4 cases failed"
    assert lines[-1] == "| 64^3 | torch.mm bf16 out | 0.012 | 42.0 |"


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_bias_is_read_in_whole_pairs(dtype):
    """A bias per column of an odd N reaches the kernel as a matrix of an even number of columns (the
    tensor-core kernels read a thread's two columns at once, kept or dropped whole at the edge; the H200's
    epilogue fuzz: a (456, 589) float16 bias and a (218, 297) float32 one were refused): the values, then
    zeros; every row the same."""
    from numba import cuda
    from cutelite.numeric import Float16
    from kernels.lib.epilogue import fuse
    bias = np.arange(1, 10, dtype=dtype)
    D = cuda.device_array((5, 9), np.uint16)
    fused = fuse(Float16, 1.0, 0.0, cuda.to_device(bias), None, 5, 9, D, True)
    epi, wide = fused.for_kernel()
    assert not wide and epi.bias_dtype == np.dtype(dtype).name
    args, copies = fused.arguments(D, 0, wide)
    for copy in copies:
        copy()
    (b,) = args
    assert b.shape == (5, 10) and b.strides[0] == 0
    want = np.append(bias, dtype(0))
    want = want.view(np.uint16) if dtype == np.float16 else want
    assert all(np.array_equal(b[i].copy_to_host(), want) for i in range(5))
