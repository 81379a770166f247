"""kernels as real PTX, offline: every demo kernel compiled with numba.cuda.compile_ptx for sm_75 (a T4)
and sm_80, then assembled by ptxas. No GPU needed, but numba must run without the simulator.

Proves: the T4 path (m8n8k4, m16n8k8 f16, ldmatrix, 128-bit loads, swizzled layouts) assembles for
sm_75; the Ampere-only kernels (m16n8k16, bf16, cp.async) are refused for sm_75 by our capability check
*and* by ptxas itself, and assemble for sm_80.
"""

import re

import pytest
from numba import cuda

from cutelite import MMA_ATOMS
from kernels.capability import MIN_SM, CapabilityError
from kernels.instructions import selftest
from kernels.instructions.atoms import LDSM_PTX, mma_need, supported
from kernels.sass import assemble, tool
from kernels.sass import kernel_ptx as compile_kernel_ptx

try:
    from numba.cuda import types as T
    T.UniTuple  # noqa: B018
except (ImportError, AttributeError):   # older numba-cuda: numba.cuda.types lacks the container types
    from numba.core import types as T

pytestmark = pytest.mark.numba("cuda")
PTXAS = tool("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found (install the CUDA toolkit's nvcc)")

u16_1, u32_1, u32_2, i64_1 = T.uint16[::1], T.uint32[::1], T.uint32[:, ::1], T.int64[::1]
f32_1, f32_2, f32_3 = T.float32[::1], T.float32[:, ::1], T.float32[:, :, ::1]

# name -> (kernel, argument types, oldest target it runs on); what its PTX must contain, as evidence the
# intrinsic really emitted the instruction
KERNELS, EXPECT = {}, {}
for atom in MMA_ATOMS.values():
    if supported(atom):
        c = f32_2 if atom.types[3] == "float32" else u32_2
        need = mma_need(atom)
        KERNELS[atom.name] = (selftest._mma_kernel(atom.name), (u32_2, u32_2, c, c), MIN_SM[need][:2])
        EXPECT[atom.name] = atom.ptx
for op, (ptx, _) in LDSM_PTX.items():
    KERNELS[op] = (selftest._ldmatrix_kernel(op), (u16_1, i64_1, u32_2), (7, 5))
    EXPECT[op] = ptx
KERNELS.update({
    "vector copy": (selftest.k_vector_copy, (f32_1, f32_1, u32_1, f32_1, u32_1, T.float64[:, ::1]), (7, 5)),
    "layout copy": (selftest.k_layout_copy, (f32_1, f32_1, f32_1), (7, 5)),
    "cp.async": (selftest.k_cp_async, (f32_3, f32_3), (8, 0)),
    "fast math": (selftest.k_fast_math, (f32_1, f32_1, f32_1, u32_1, f32_1), (7, 5)),
    "globaltimer": (selftest.k_globaltimer, (f32_1, T.uint64[:, ::1]), (7, 5)),
})
EXPECT.update({"vector copy": "shfl.sync.bfly.b32", "layout copy": "xor.b", "cp.async": "cp.async.wait_group 1",
               "fast math": "tanh.approx.f32", "globaltimer": "%globaltimer"})

T4_KERNELS = [k for k, v in KERNELS.items() if v[2] <= (7, 5)]
AMPERE_KERNELS = [k for k, v in KERNELS.items() if v[2] > (7, 5)]


def compile_ptx(name, cc):
    """PTX of KERNELS[name] for compute capability cc, without a GPU."""
    kernel, sig, _ = KERNELS[name]
    return compile_kernel_ptx(kernel, sig, cc)


def ptxas(ptx, arch):
    """Assemble; (returncode, stderr)."""
    return assemble(ptx, arch)


@pytest.fixture(scope="module")
def toolchain():
    """Skip (with the reason) when numba cannot compile at all here (no NVVM / NVRTC libraries)."""
    try:
        cuda.compile_ptx(lambda a: None, (T.float32[::1],), cc=(7, 5))
    except Exception as e:
        text = "%s: %s" % (type(e).__name__, e)
        if not re.search(r"nvvm|nvrtc|DynamicLib|CudaSupportError|libdevice", text, re.I):
            raise
        pytest.skip("numba cannot compile PTX here (CUDA libraries missing): %s" % text[:300])


@needs_ptxas
@pytest.mark.parametrize("name", T4_KERNELS)
def test_t4_kernel_assembles_for_sm75(toolchain, name):
    ptx = compile_ptx(name, (7, 5))
    assert EXPECT[name] in ptx
    assert ".target sm_75" in ptx
    rc, err = ptxas(ptx, "sm_75")
    assert rc == 0, err


@pytest.mark.parametrize("name", AMPERE_KERNELS)
def test_ampere_kernel_is_refused_for_sm75(toolchain, name):
    with pytest.raises(Exception) as info:
        compile_ptx(name, (7, 5))
    text = str(info.value)
    assert isinstance(info.value, CapabilityError) or "CapabilityError" in text or "needs sm_80" in text
    assert "needs sm_80" in text and "sm_75" in text


@needs_ptxas
@pytest.mark.parametrize("name", AMPERE_KERNELS)
def test_ampere_kernel_assembles_for_sm80_and_ptxas_refuses_it_for_sm75(toolchain, name):
    ptx = compile_ptx(name, (8, 0))
    assert EXPECT[name] in ptx
    rc, err = ptxas(ptx, "sm_80")
    assert rc == 0, err
    # the table is not stricter than the hardware: ptxas itself refuses the same PTX for a T4
    rc, err = ptxas(ptx.replace(".target sm_80", ".target sm_75"), "sm_75")
    assert rc != 0 and "sm_80" in err, err


def test_no_gpu_banner_without_simulator(capsys):
    import kernels
    if cuda.is_available():
        pytest.skip("a GPU is present")
    info = kernels.setup()
    assert not info.simulator and info.name == "no GPU"
    assert "compiled" in capsys.readouterr().out
