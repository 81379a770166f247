"""kernels.gemm's tensor-core kernels as real PTX, offline: the T4 path (tc_sm75) assembles with
`ptxas -arch=sm_75`, in registers only (no local memory); the sm_80 rungs are refused for sm_75 and
assemble for sm_80. Reruns itself without
the simulator when needed (see tests/test_kernels_ptx.py, whose helpers it uses)."""

import pytest

from kernels._testing import numba_mode, run_in_subprocess

IN_PROCESS = numba_mode(simulator=False)
here = pytest.mark.skipif(not IN_PROCESS, reason="ran in a subprocess")


@pytest.mark.skipif(IN_PROCESS, reason="ran in this process")
def test_gemm_ptx_suite_in_subprocess():
    rc, out = run_in_subprocess(__file__, simulator=False)
    assert rc == 0, out[-4000:]


if IN_PROCESS:
    try:
        from numba.cuda import types as T
        T.UniTuple  # noqa: B018
    except (ImportError, AttributeError):
        from numba.core import types as T

    from kernels.capability import CapabilityError
    from kernels.gemm import tc_sm75, tc_sm80, tc_sm80_prefetch
    from test_kernels_ptx import PTXAS, compile_kernel_ptx, ptxas, toolchain  # noqa: F401  (the fixture)

    def compile_ptx(kernel, cc):
        # the kernels read strides at run time: one signature of any-layout arrays covers every majorness
        return compile_kernel_ptx(kernel.numba, (T.uint16[:, :], T.uint16[:, :], T.float32[:, :]), cc)
else:
    PTXAS = None

needs_ptxas = pytest.mark.skipif(IN_PROCESS and PTXAS is None, reason="ptxas not found")


@here
@needs_ptxas
@pytest.mark.parametrize("majors", [("K", "MN"), ("MN", "K")])
def test_tc_sm75_is_t4_legal(toolchain, majors):  # noqa: F811
    k = tc_sm75.make(**dict(tc_sm75.BEST, majors=majors))
    ptx = compile_ptx(k, (7, 5))
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in ptx and "ldmatrix.sync.aligned" in ptx
    assert "cp.async" not in ptx and "m16n8k16" not in ptx and "ld.local" not in ptx
    rc, err = ptxas(ptx, "sm_75")
    assert rc == 0, err


@here
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
