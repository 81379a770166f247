"""What a T4 (sm_75) does with the kernels its chapters launch, offline: every kernel of the T4 path that is not
already assembled for sm_75 elsewhere (the SIMT rungs of chapter 7, the m16n8k8 ceiling loop; tc_sm75 and
chapter 6's kernels are in test_gemm_ptx.py / test_kernels_tiled_ptx.py, the instructions of chapter 5's
kernels in test_kernels_ptx.py) assembles with `ptxas -arch=sm_75`, and every kernel of chapters 6 and 7 that a
T4 runs fits a T4's SM: registers within the register file, shared memory within 48 KiB (64 KiB where the
kernel opts in), at least one CTA per SM by the occupancy the chapter computes. What one mma.m8n8k4 becomes
in SASS on sm_75, sm_80 and sm_90 (kernels.sass), against its record. And that the sm_75 profile makes Numba
compile for sm_75. No GPU needed, but numba must run without the simulator.
"""

import re

import pytest
from numba.cuda import types as T

from cutelite.teach.gemm import SM_LIMITS, SMEM_PER_CTA_DEFAULT, occupancy
from kernels import gemm, sass
from kernels.gemm import ceiling
from kernels.sass import tool
from kernels.tiled import make_copy_kernel, make_gemm_kernel

pytestmark = pytest.mark.numba("cuda")
needs_ptxas = pytest.mark.skipif(tool("ptxas") is None, reason="ptxas not found (install the CUDA toolkit's nvcc)")
needs_nvdisasm = pytest.mark.skipif(tool("nvdisasm") is None, reason="nvdisasm not found (pip install "
                                    "nvidia-cuda-nvdisasm)")
F32 = T.float32[:, ::1]
# name -> (the Numba kernel, its signature, threads per CTA, dynamic shared bytes)
T4_KERNELS = {r.name: (r.kernel.numba, (F32, F32, F32), r.kernel.module.grid(4096, 4096)[1], 0)
              for r in gemm.LADDER if r.dtype == "f32"}
T4_KERNELS["mma.sync m16n8k8 ceiling"] = (ceiling.make_kernel("m16n8k8"), (T.float32[::1], T.int64), 256, 0)
# and the cutejit kernels a T4 runs in chapters 6 and 7 (assembled for sm_75 by their own tests)
U16, ANY32 = T.uint16[:, :], T.float32[:, :]
RESOURCES = dict(T4_KERNELS)
for name, k, sig in (("tc sm75 128x128x32", gemm.step("tc sm75 128x128x32").kernel, (U16, U16, ANY32)),
                     ("ch. 6 GEMM tile sm75", make_gemm_kernel("sm75"), (U16, U16, ANY32)),
                     ("ch. 6 copy 128-bit", make_copy_kernel(128, "ldg"), (ANY32, ANY32)),
                     ("ch. 6 copy 32-bit", make_copy_kernel(32, "ldg"), (ANY32, ANY32))):
    RESOURCES[name] = (k.numba, sig, k.threads, k.smem_bytes)


def _threads(t):
    return t if isinstance(t, int) else t[0] * t[1] * (t[2] if len(t) > 2 else 1)


def _resources(kernel, sig):
    """(registers per thread, static shared bytes) ptxas gives the kernel for sm_75."""
    rc, err = sass.assemble(sass.kernel_ptx(kernel, sig, (7, 5)), "sm_75", flags=("-v",))
    assert rc == 0, err
    regs = int(re.search(r"Used (\d+) registers", err).group(1))
    smem = re.search(r"(\d+) bytes smem", err)
    return regs, int(smem.group(1)) if smem else 0


@needs_ptxas
@pytest.mark.parametrize("name", list(T4_KERNELS))
def test_t4_kernel_assembles_for_sm75(name):
    kernel, sig, _, _ = T4_KERNELS[name]
    ptx = sass.kernel_ptx(kernel, sig, (7, 5))
    assert ".target sm_75" in ptx and "cp.async" not in ptx and "m16n8k16" not in ptx
    rc, err = sass.assemble(ptx, "sm_75")
    assert rc == 0, err


@needs_ptxas
@pytest.mark.parametrize("name", list(RESOURCES))
def test_t4_kernel_fits_a_t4_sm(name):
    kernel, sig, threads, dynamic = RESOURCES[name]
    regs, static = _resources(kernel, sig)
    threads, smem, sm = _threads(threads), static + dynamic, SM_LIMITS["T4"]
    assert regs <= sm["max_regs"] and regs * threads <= sm["registers"], (regs, threads)
    assert static <= SMEM_PER_CTA_DEFAULT and smem <= sm["smem_per_cta"], (static, dynamic)
    ctas, warps, _ = occupancy(regs, threads, smem, "T4")
    assert ctas >= 1 and warps <= sm["warps"], (ctas, warps)


@needs_ptxas
@needs_nvdisasm
def test_m8n8k4_sass_on_t4_a100_h100():
    """sm_75 runs mma.m8n8k4 on its tensor cores (HMMA.884); sm_80 and sm_90 have no HMMA for it and compute
    it with FP32 FMAs. The record chapter 5 shows is what this ptxas makes, where it is the same release."""
    counts = sass.mma_sass(sass.RECORDED["atom"])
    work = {arch: sass.mma_work(c) for arch, c in counts.items()}
    assert all(op.startswith("HMMA.884") for op in work["sm_75"]) and sum(work["sm_75"].values()) >= 1
    for arch in ("sm_80", "sm_90"):
        assert not any(op.startswith("HMMA") for op in work[arch]) and work[arch].get("FFMA", 0) > 0, work[arch]
    if sass.ptxas_release() == sass.RECORDED["ptxas"]:
        assert work == sass.RECORDED["sass"]


def test_profile_makes_numba_compile_for_sm75():
    """On a machine that compiles (a GPU, or none without the simulator), a profile makes Numba compile for
    it whatever it is asked, so the intrinsics refuse what it lacks; without the profile again, it does not."""
    import kernels
    from kernels.capability import CapabilityError
    from kernels.instructions import selftest
    plain, sig = selftest.k_layout_copy, (T.float32[::1],) * 3
    cp_async, cp_sig = selftest.k_cp_async, (T.float32[:, :, ::1],) * 2
    kernels.setup(verbose=False, simulator=False, profile="sm_75")
    try:
        assert kernels.current_cc() == (7, 5)
        assert ".target sm_75" in sass.kernel_ptx(plain, sig, (8, 0))
        with pytest.raises(CapabilityError, match="cp.async needs sm_80"):
            sass.kernel_ptx(cp_async, cp_sig, (8, 0))
    finally:
        kernels.setup(verbose=False, simulator=False, profile=None)
    assert ".target sm_80" in sass.kernel_ptx(cp_async, cp_sig, (8, 0))
