"""Compiling the DSL's GEMM kernels (gemm_tile, tc_sm80). The DSL's compiler needs no GPU to turn a `@cute.jit`
host function into PTX and a cubin for a named architecture; on a GPU the same host function is compiled for
run-time tensors and called with them.

    compiled = compile_gemm(tc_sm80, arch="sm_80", keep_ptx=True)    # no GPU needed
    instruction_mix(compiled.__ptx__)      # Counter of the mma, ldmatrix, cp.async ... the PTX holds
    args = [runtime_tensor(x) for x in (A, B, C)] + [cuda.bindings.driver.CUstream(0)]
    cute.compile(tc_sm80.host, *args)(*args)                         # on a GPU: C = A @ B
"""

import re
import tempfile
from collections import Counter

__all__ = ["compile_gemm", "runtime_tensor", "instruction_mix"]


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


def runtime_tensor(x):
    """A row-major matrix on the GPU (a PyTorch tensor: anything with DLPack) as the DSL's run-time tensor:
    both extents run-time values, the row stride a multiple of 8 elements and the base 16-byte aligned (what
    the 16-byte copies need, and what the book's Numba kernels assume too). One compiled kernel then takes
    every size."""
    from cutlass.cute.runtime import from_dlpack
    t = from_dlpack(x, assumed_align=16)
    return t.mark_compact_shape_dynamic(mode=1, stride_order=(0, 1), divisibility=8) \
        .mark_compact_shape_dynamic(mode=0, stride_order=(0, 1), divisibility=1)


_INSTRUCTIONS = r"\b(mma\.sync\.aligned\.\S+|ldmatrix\.sync\.aligned\.\S+|cp\.async\.cg\.shared\.global|" \
                r"cp\.async\.commit_group|cp\.async\.wait_group|bar\.sync|st\.global\.\S+)"


def instruction_mix(ptx):
    """How often each GEMM instruction appears in the PTX text (static count: a loop body counts once per
    copy the compiler made of it)."""
    return Counter(m.rstrip(";") for m in re.findall(_INSTRUCTIONS, ptx))
