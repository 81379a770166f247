"""kernels.gemm's tensor-core kernels as real PTX, offline: the T4 path (tc_sm75) assembles with
`ptxas -arch=sm_75`, in registers only (no local memory); the sm_80 rungs are refused for sm_75 and
assemble for sm_80 (with tests/test_kernels_ptx.py's helpers)."""

import pytest

from kernels.capability import CapabilityError
from kernels.gemm import tc_sm75, tc_sm80, tc_sm80_prefetch
from test_kernels_ptx import PTXAS, T, compile_kernel_ptx, ptxas, toolchain  # noqa: F401  (the fixture)

pytestmark = pytest.mark.numba("cuda")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found")


def compile_ptx(kernel, cc):
    # the kernels read strides at run time: one signature of any-layout arrays covers every majorness
    return compile_kernel_ptx(kernel.numba, (T.uint16[:, :], T.uint16[:, :], T.float32[:, :]), cc)


@needs_ptxas
@pytest.mark.parametrize("majors", [("K", "MN"), ("MN", "K")])
def test_tc_sm75_is_t4_legal(toolchain, majors):  # noqa: F811
    k = tc_sm75.make(**dict(tc_sm75.BEST, majors=majors))
    ptx = compile_ptx(k, (7, 5))
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in ptx and "ldmatrix.sync.aligned" in ptx
    assert "cp.async" not in ptx and "m16n8k16" not in ptx and "ld.local" not in ptx
    rc, err = ptxas(ptx, "sm_75")
    assert rc == 0, err


@needs_ptxas
@pytest.mark.parametrize("module", ["tc_sm80", "tc_sm80_prefetch"])
def test_tc_sm80_needs_sm80(toolchain, module):  # noqa: F811
    mod = {"tc_sm80": tc_sm80, "tc_sm80_prefetch": tc_sm80_prefetch}[module]
    k = mod.make(**mod.BEST)
    with pytest.raises(Exception) as info:
        compile_ptx(k, (7, 5))
    assert isinstance(info.value, CapabilityError) or "needs sm_80" in str(info.value)
    ptx = compile_ptx(k, (8, 0))
    assert "cp.async.cg.shared.global" in ptx and "m16n8k16" in ptx and "ld.local" not in ptx
    rc, err = ptxas(ptx, "sm_80")
    assert rc == 0, err
