"""What the assembler makes of an instruction, offline: a kernel's PTX (compiled by Numba for a compute
capability, no GPU needed), assembled by `ptxas` for an architecture and disassembled by `nvdisasm`, its SASS
opcodes counted.

Chapter 5 asks what one `mma.m8n8k4` (Volta's shape) becomes on a T4 (sm_75), an A100 (sm_80) and an H100
(sm_90). The PTX ISA says only that the shape is optimized for sm_70 and may be substantially slower on other
targets; the SASS says how: `mma_sass` measures it wherever the CUDA toolkit's ptxas and nvdisasm are (the
`nvidia-cuda-nvdisasm` wheel brings nvdisasm), RECORDED keeps what it measured for the places without them
(the simulator, Colab), and tests/test_sass.py checks that the two agree.

    python -m kernels.sass        # measure and print the table (no GPU; numba must not be in the simulator)
"""

import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

__all__ = ["tool", "kernel_ptx", "assemble", "sass_opcodes", "mma_sass", "mma_work", "summary", "ptxas_release",
           "RECORDED", "ARCHS"]

ARCHS = ("sm_75", "sm_80", "sm_90")


def tool(name):
    """The path of a CUDA toolkit program (ptxas, nvdisasm): on PATH, under CUDA_HOME / CUDA_PATH, or in an
    NVIDIA wheel's nvidia/cu*/bin; None if there is none."""
    found = shutil.which(name)
    if found:
        return found
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    homes += [d for p in sys.path if os.path.isdir(p) for d in sorted(glob.glob(os.path.join(p, "nvidia", "cu*")))]
    for home in homes:
        path = os.path.join(home, "bin", name) if home else None
        if path and os.path.isfile(path):
            if not os.access(path, os.X_OK):       # a wheel's files may arrive without their execute bit
                os.chmod(path, os.stat(path).st_mode | 0o111)
            return path
    return None


class _Device:
    """Stands in for the current device: numba-cuda compiles a kernel for the current device's capability."""

    def __init__(self, cc):
        self.compute_capability = cc


def kernel_ptx(kernel, sig, cc):
    """PTX of a cuda.jit kernel for compute capability cc, without a GPU (numba out of the simulator)."""
    from unittest import mock
    from numba import cuda
    from numba.cuda import dispatcher
    with mock.patch.object(dispatcher, "get_current_device", lambda: _Device(cc)):
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc)
    return ptx


_PTX_VERSION_OF_CUDA = {(12, n): "8.%d" % n for n in range(9)}
_PTX_VERSION_OF_CUDA.update({(13, n): "9.%d" % n for n in range(3)})


def _ptxas_ptx_version(ptxas):
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    return _PTX_VERSION_OF_CUDA.get((int(m.group(1)), int(m.group(2))), "7.8") if m else "7.8"


def assemble(ptx, arch, cubin=None, flags=()):
    """Assemble PTX with ptxas for `arch` ('sm_75'); (returncode, stderr), the cubin written to `cubin` if
    given. If Numba stamped a newer .version than this ptxas knows, the newest it knows is said instead."""
    ptxas = tool("ptxas")
    if ptxas is None:
        raise FileNotFoundError("assemble: ptxas not found (install the CUDA toolkit's nvcc)")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        for attempt in range(2):
            with open(src, "w") as f:
                f.write(ptx)
            r = subprocess.run([ptxas, "-arch=" + arch, *flags, src, "-o", cubin or os.path.join(d, "k.cubin")],
                               capture_output=True, text=True)
            if r.returncode and "Unsupported .version" in r.stderr and attempt == 0:
                ptx = re.sub(r"^\.version \S+", ".version " + _ptxas_ptx_version(ptxas), ptx, flags=re.M)
                continue
            return r.returncode, r.stderr


def sass_opcodes(cubin):
    """The opcodes (with their modifiers: 'HMMA.884.F32.F32.STEP0') of every instruction in a cubin, in order."""
    nvdisasm = tool("nvdisasm")
    if nvdisasm is None:
        raise FileNotFoundError("sass_opcodes: nvdisasm not found (pip install nvidia-cuda-nvdisasm)")
    out = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True, check=True).stdout
    ops = []
    for line in out.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m:
            ops.append(m.group(1))
    return ops


def mma_sass(atom_name="SM70_8x8x4_F32F16F16F32_NT", archs=ARCHS):
    """{arch: Counter of SASS opcodes} of a one-warp kernel that issues the atom's mma once (the self-test
    kernel of kernels.instructions.selftest: loads, one mma, stores), compiled for each arch."""
    from cutelite import MMA_ATOMS
    from numba.cuda import types as T
    from .instructions import selftest
    atom = MMA_ATOMS[atom_name]
    u, f = T.uint32[:, ::1], T.float32[:, ::1]
    c = f if atom.types[3] == "float32" else u
    out = {}
    for arch in archs:
        ptx = kernel_ptx(selftest._mma_kernel(atom_name), (u, u, c, c), (int(arch[3]), int(arch[4:])))
        with tempfile.TemporaryDirectory() as d:
            cubin = os.path.join(d, "k.cubin")
            rc, err = assemble(ptx, arch, cubin)
            if rc:
                raise RuntimeError("mma_sass: ptxas refused %s for %s: %s" % (atom_name, arch, err[:300]))
            out[arch] = collections.Counter(sass_opcodes(cubin))
    return out


_MMA_WORK = ("HMMA", "FFMA", "FMUL", "FADD", "HADD2.F32", "HFMA2.F32", "F2FP", "SHFL", "CALL")


def mma_work(counts):
    """The opcodes of `counts` that do an mma's work: tensor-core HMMA, or what stands in for it where there
    is none (FP32 multiply-adds, half-to-float conversions, the shuffles that gather operands across lanes,
    calls into the routine that holds them). The kernel's own loads and stores are left out."""
    return {op: n for op, n in sorted(counts.items()) if op.startswith(_MMA_WORK)}


def summary(counts):
    """One line of what an mma became."""
    work = mma_work(counts)
    hmma = {op: n for op, n in work.items() if op.startswith("HMMA")}
    if hmma:
        return "%d HMMA (tensor cores): %s" % (sum(hmma.values()), ", ".join(hmma))
    return "no HMMA; in its place " + ", ".join("%d %s" % (n, op) for op, n in work.items())


# Measured by `python -m kernels.sass` (ptxas 13.0 V13.0.88, nvdisasm 13.5, numba-cuda 0.30.4): mma_work of the
# one-mma kernel of SM70_8x8x4_F32F16F16F32_NT (one mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 a lane).
RECORDED = {
    "atom": "SM70_8x8x4_F32F16F16F32_NT",
    "ptxas": "13.0",
    "sass": {
        "sm_75": {"HMMA.884.F32.F32.STEP0": 1, "HMMA.884.F32.F32.STEP1": 1, "HMMA.884.F32.F32.STEP2": 1,
                  "HMMA.884.F32.F32.STEP3": 1},
        "sm_80": {"CALL.REL.NOINC": 4, "FADD": 8, "FFMA": 32, "HADD2.F32": 24, "SHFL.IDX": 20},
        "sm_90": {"CALL.REL.NOINC": 4, "FADD": 8, "FFMA": 32, "HADD2.F32": 24, "SHFL.IDX": 20},
    },
}


def ptxas_release():
    """'13.0': the release of the ptxas that `tool` finds, or None."""
    ptxas = tool("ptxas")
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout if ptxas else ""
    m = re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else None


def main():
    from . import runtime
    runtime.setup(verbose=False, simulator=False)
    print("ptxas: %s\nnvdisasm: %s" % (tool("ptxas"), tool("nvdisasm")))
    counts = mma_sass(RECORDED["atom"])
    print("one mma.m8n8k4 (%s), SASS of the one-mma kernel:" % RECORDED["atom"])
    for arch, c in counts.items():
        print("  %s: %s" % (arch, summary(c)))
    print("\nptxas %s; RECORDED['sass'] = %r" % (ptxas_release(), {a: mma_work(c) for a, c in counts.items()}))


if __name__ == "__main__":
    main()
