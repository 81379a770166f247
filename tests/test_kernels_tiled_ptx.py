"""Chapter 6's kernels (kernels.tiled) as real PTX, offline: the sm75 TiledMMA GEMM and the 128-bit
ld.global.v4 copy assemble with `ptxas -arch=sm_75` (T4-legal); the cp.async variants are refused for
sm_75 and assemble for sm_80."""

import pytest

from kernels.tiled import make_copy_kernel, make_gemm_kernel
from test_kernels_ptx import PTXAS, T, ptxas, toolchain  # noqa: F401  (the fixture)
from test_kernels_ptx import compile_kernel_ptx as compile_ptx

pytestmark = pytest.mark.numba("cuda")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found")
GEMM_SIG = (T.uint16[:, :], T.uint16[:, :], T.float32[:, :])
COPY_SIG = (T.float32[:, :], T.float32[:, :])


@needs_ptxas
def test_sm75_tiled_gemm_is_t4_legal(toolchain):  # noqa: F811
    ptx = compile_ptx(make_gemm_kernel("sm75").numba, GEMM_SIG, (7, 5))
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert "ld.global.v4.b32" in ptx and "cp.async" not in ptx and "m16n8k16" not in ptx
    rc, err = ptxas(ptx, "sm_75")
    assert rc == 0, err


@needs_ptxas
def test_sm80_tiled_gemm_needs_sm80(toolchain):  # noqa: F811
    with pytest.raises(Exception, match="needs sm_80"):
        compile_ptx(make_gemm_kernel("sm80").numba, GEMM_SIG, (7, 5))
    ptx = compile_ptx(make_gemm_kernel("sm80").numba, GEMM_SIG, (8, 0))
    assert "cp.async.cg.shared.global" in ptx and "m16n8k16" in ptx and "ldmatrix" in ptx
    rc, err = ptxas(ptx, "sm_80")
    assert rc == 0, err


@needs_ptxas
@pytest.mark.parametrize("bits,path,cc,want", [
    (128, "ldg", (7, 5), "ld.global.v4.f32"),
    (32, "ldg", (7, 5), "ld.global.f32"),
    (128, "cp.async", (8, 0), "cp.async.cg.shared.global"),
])
def test_tiled_copy_assembles(toolchain, bits, path, cc, want):  # noqa: F811
    ptx = compile_ptx(make_copy_kernel(bits, path).numba, COPY_SIG, cc)
    assert want in ptx
    if bits == 32:
        assert "v4" not in ptx
    rc, err = ptxas(ptx, "sm_%d%d" % cc)
    assert rc == 0, err
