"""What a GPU does with an ldmatrix row address that is not 16-byte aligned (chapter 6, "ldmatrix needs
16-byte rows"). C++ CuTe compiles such a copy (tests/fixtures/ldsm_copy_cpp.txt); the PTX ISA requires each
row to be naturally aligned and leaves the rest undefined. This asks the hardware.

    python benchmarks/ldmatrix_alignment.py

Each case runs in its own process (a fault ends the CUDA context): one warp loads four 8x8 matrices of
halves with ldmatrix.x4 from shared memory, lane l giving row l at element offset 8 l + shift (shift 0: every
row 16-byte aligned; 1, 4: 2 and 8 bytes past). Prints one line per case: the registers compared with the
rows they should hold, or the error the launch raised.
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CASES = (0, 1, 4)      # element shifts of every row address: 0, 2 and 8 bytes


def run_case(shift):
    """Launch the kernel for one shift in this process; print the outcome."""
    global cuda                             # a global: the simulator swaps the kernel's module-level `cuda`
    import numpy as np
    import kernels
    info = kernels.setup()                  # before numba is imported
    where = "the simulator" if info.simulator else f"{info.name} ({info.sm})"
    from numba import cuda
    from cutelite import make_copy_atom
    from kernels.instructions import SMEM_ALIGN, ldmatrix_for
    ld = ldmatrix_for(make_copy_atom("SM75_U32x4_LDSM_N", "half_t"))

    @cuda.jit
    def k(src, out):
        s = cuda.shared.array(264, np.uint16, alignment=SMEM_ALIGN)
        lane = cuda.threadIdx.x
        for i in range(lane, 264, 32):
            s[i] = src[i]
        cuda.syncthreads()
        r = ld(s, 8 * lane + shift)
        for j in range(4):
            out[lane, j] = r[j]

    src = np.arange(264, dtype=np.uint16)
    out = np.zeros((32, 4), np.uint32)
    try:
        d_out = cuda.to_device(out)
        k[1, 32](cuda.to_device(src), d_out)
        cuda.synchronize()
        got = d_out.copy_to_host()
    except Exception as e:                  # the launch or the synchronize reports the fault
        print(f"{where}, shift {shift} ({2 * shift} bytes): {type(e).__name__}: {str(e).strip().splitlines()[-1]}")
        return
    # lane l's register j holds two halves of matrix j: row l // 4, columns 2 (l % 4) and + 1
    want = np.array([[int(src[8 * (8 * j + l // 4) + shift + 2 * (l % 4)]) |
                      int(src[8 * (8 * j + l // 4) + shift + 2 * (l % 4) + 1]) << 16 for j in range(4)]
                     for l in range(32)], np.uint32)
    same = np.array_equal(got, want)
    print(f"{where}, shift {shift} ({2 * shift} bytes): ran; registers {'==' if same else '!='} the shifted rows"
          + ("" if same else f" (lane 0 got {[hex(x) for x in got[0]]}, expected {[hex(x) for x in want[0]]})"))


if __name__ == "__main__":
    if len(sys.argv) == 2:
        run_case(int(sys.argv[1]))
    else:
        for shift in CASES:
            p = subprocess.run([sys.executable, __file__, str(shift)], capture_output=True, text=True)
            lines = (p.stdout + p.stderr).strip().splitlines()
            print(next((ln for ln in lines if ln.startswith(("the simulator", "NVIDIA"))), lines[-1]))
