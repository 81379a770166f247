"""kernels.attention.fa2_mma as real PTX, offline: the T4 path assembles with `ptxas -arch=sm_75` (m16n8k8, no
cp.async), the sm_80 path (m16n8k16, cp.async; bf16 through cvt.rn.bf16x2) with -arch=sm_80; at D = 64 neither
spills to local memory, and nothing is computed in float64. `python tests/test_attention_ptx.py` prints the
registers and spills of each configuration, D = 128 included: the build attention() makes at D = 128 off sm_90
(FlashAttention-2's tiles, fa2_mma.FA2_TILES) spills 92 bytes with ptxas 13.0, and takes a minute and a half to
compile, so CI leaves it to that script and to the GPU's fuzz (benchmarks/attention/RESULTS.md)."""

import re

import pytest

from kernels.sass import assemble
from test_kernels_ptx import PTXAS, T, compile_kernel_ptx, toolchain  # noqa: F401  (the fixture)

pytestmark = pytest.mark.numba("cuda")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found")

SIG = (T.uint16[:, :, :, :],) * 4 + (T.float32[:, :, :],)
# per arch: what the PTX must and must not contain
CONFIGS = {"sm75": (("mma.sync.aligned.m16n8k8", "ldmatrix.sync.aligned", "ex2.approx.ftz.f32", "shfl.sync.bfly"),
                    ("cp.async", "m16n8k16")),
           "sm80": (("mma.sync.aligned.m16n8k16", "cp.async.cg.shared.global", "ex2.approx.ftz.f32",
                     "shfl.sync.bfly"), ())}


def build(arch, dtype="float16", D=64, causal=True, **tiles):
    """(PTX, ptxas -v's report) of one configuration (tiles: BM, BN, warps; fa2_mma.BEST[arch] by default)."""
    from kernels.attention import fa2_mma
    k = fa2_mma.make(D=D, dtype=dtype, causal=causal, arch=arch, **tiles)
    ptx = compile_kernel_ptx(k.numba, SIG, (7, 5) if arch == "sm75" else (8, 0))
    rc, err = assemble(ptx, "sm_75" if arch == "sm75" else "sm_80", flags=("-v",))
    assert rc == 0, err
    return ptx, err


def usage(err):
    """(registers, spill store bytes) from ptxas -v."""
    regs = int(re.search(r"Used (\d+) registers", err).group(1))
    return regs, int(re.search(r"(\d+) bytes spill stores", err).group(1))


@needs_ptxas
@pytest.mark.parametrize("arch, dtype", [("sm75", "float16"), ("sm80", "float16"), ("sm80", "bfloat16")])
def test_fa2_mma_assembles_without_spills(toolchain, arch, dtype):  # noqa: F811
    ptx, err = build(arch, dtype)
    must, must_not = CONFIGS[arch]
    assert all(s in ptx for s in must), [s for s in must if s not in ptx]
    assert not any(s in ptx for s in must_not), [s for s in must_not if s in ptx]
    assert ("cvt.rn.bf16x2.f32" in ptx) == (dtype == "bfloat16")
    assert not re.search(r"\.f64\b", ptx), "float64 arithmetic: a constant not made float32"
    assert "ld.local" not in ptx and usage(err)[1] == 0, err


if __name__ == "__main__":
    import kernels
    kernels.setup(simulator=False, verbose=False)
    import sys
    only = sys.argv[1:] == ["--variants"]         # only the configurations of 4 warps of 32 rows
    print("%-6s %-9s %4s %4s %4s %6s %7s %10s %12s" % ("arch", "dtype", "D", "BM", "BN", "warps", "q_regs",
                                                      "registers", "spill bytes"))
    rows = [("sm75", 64, 64, 32, 4, True), ("sm75", 128, 64, 32, 4, True), ("sm75", 128, 64, 64, 4, True),
            ("sm80", 64, 128, 64, 8, True), ("sm80", 128, 128, 64, 8, True), ("sm80", 128, 64, 64, 4, True),
            ("sm80", 64, 128, 128, 4, False), ("sm80", 128, 128, 64, 4, False), ("sm80", 64, 128, 64, 4, True),
            ("sm80", 128, 128, 32, 4, False), ("sm80", 128, 128, 32, 4, True)]
    for arch, D, BM, BN, warps, q_regs in rows[6:] if only else rows:
        regs, spill = usage(build(arch, "float16", D, True, BM=BM, BN=BN, warps=warps, q_regs=q_regs)[1])
        print("%-6s %-9s %4d %4d %4d %6d %7s %10d %12d" % (arch, "float16", D, BM, BN, warps, q_regs, regs, spill))
