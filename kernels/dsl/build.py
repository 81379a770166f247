"""Compiling the DSL's GEMM kernels (gemm_tile, tc_sm80) without running them: the DSL's compiler needs no GPU
to turn a `@cute.jit` host function into PTX and a cubin for a named architecture.

    compiled = compile_gemm(tc_sm80, arch="sm_80", keep_ptx=True)
    instruction_mix(compiled.__ptx__)      # Counter of the mma, ldmatrix, cp.async ... the PTX holds
"""

import re
import tempfile
from collections import Counter

__all__ = ["compile_gemm", "instruction_mix"]


def compile_gemm(module, arch=None, keep_ptx=False):
    """module.host compiled once for any M, N, K multiples of 128: fp16 A (M, K) and B (K, N), fp32 C (M, N),
    all row-major and 16-byte aligned. arch (e.g. "sm_80"): compile for it rather than for this GPU."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    M, N, K = (cute.sym_int32(divisibility=128) for _ in range(3))
    fake = [make_fake_compact_tensor(t, s, stride_order=(1, 0), assumed_align=16)
            for t, s in ((cutlass.Float16, (M, K)), (cutlass.Float16, (K, N)), (cutlass.Float32, (M, N)))]
    options = (f"--gpu-arch {arch} " if arch else "") + (f"--keep-ptx --dump-dir {tempfile.mkdtemp()}" if keep_ptx else "")
    return cute.compile(module.host, *fake, make_fake_stream(), options=options.strip())


_INSTRUCTIONS = r"\b(mma\.sync\.aligned\.\S+|ldmatrix\.sync\.aligned\.\S+|cp\.async\.cg\.shared\.global|" \
                r"cp\.async\.commit_group|cp\.async\.wait_group|bar\.sync|st\.global\.\S+)"


def instruction_mix(ptx):
    """How often each GEMM instruction appears in the PTX text (static count: a loop body counts once per
    copy the compiler made of it)."""
    return Counter(m.rstrip(";") for m in re.findall(_INSTRUCTIONS, ptx))
