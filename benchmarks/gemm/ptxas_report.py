"""Registers, spills, stack and shared memory of the ladder's kernels, offline (no GPU): Numba -> PTX for
a target, then `ptxas -v`. Usage: python benchmarks/gemm/ptxas_report.py [--cc 90] [NAME-substring ...]
Also importable: report(kernel, cc=(9, 0), sig=...) -> dict."""

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

kernels.setup(verbose=False, simulator=False)

from unittest import mock  # noqa: E402

from numba import cuda  # noqa: E402
from numba.cuda import dispatcher as _dispatcher  # noqa: E402
try:
    from numba.cuda import types as T
    T.UniTuple  # noqa: B018
except (ImportError, AttributeError):
    from numba.core import types as T


class _Dev:
    def __init__(self, cc):
        self.compute_capability = cc


def ptx_of(kernel, sig, cc):
    with mock.patch.object(_dispatcher, "get_current_device", lambda: _Dev(cc)):
        return cuda.compile_ptx(kernel.py_func, sig, cc=cc, **({"lineinfo": False}))[0]


def report(kernel, cc=(9, 0), sig=None, f32=False):
    if sig is None:
        sig = ((T.float32[:, ::1],) * 3) if f32 else (T.uint16[:, ::1], T.uint16[:, ::1], T.float32[:, ::1])
    ptx = ptx_of(kernel, sig, cc)
    lb = getattr(kernel, "targetoptions", {}).get("launch_bounds")
    if lb:   # compile_ptx ignores the dispatcher's launch_bounds: add the directives it would
        t, b = (lb + (1,))[:2] if isinstance(lb, tuple) else (lb, 1)
        ptx = re.sub(r"(\.visible \.entry [^(]+\([^)]*\))", r"\1\n.maxntid %d, 1, 1\n.minnctapersm %d" % (t, b),
                     ptx, count=1)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        open(p, "w").write(ptx)
        r = subprocess.run(["ptxas", "-v", "-arch=sm_%d%d" % cc, p, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True)
        out = r.stdout + r.stderr
        sass = ""
        if r.returncode == 0 and subprocess.run(["which", "cuobjdump"], capture_output=True).returncode == 0:
            sass = subprocess.run(["cuobjdump", "-sass", os.path.join(d, "k.cubin")], capture_output=True,
                                  text=True).stdout
    facts = {"rc": r.returncode}
    for key, pat in (("regs", r"Used (\d+) registers"), ("stack", r"(\d+) bytes stack frame"),
                     ("spill_st", r"(\d+) bytes spill stores"), ("spill_ld", r"(\d+) bytes spill loads"),
                     ("smem", r"(\d+) bytes smem")):
        m = re.search(pat, out)
        facts[key] = int(m.group(1)) if m else None
    if r.returncode:
        facts["error"] = " | ".join(l for l in out.splitlines() if "error" in l.lower())[:300]
    for op in ("mma.sync", "ldmatrix", "cp.async.cg", "ld.local", "st.local", "bar.sync", "fma.rn.f32",
               "ld.shared.v4", "ld.global.v4"):
        facts[op] = ptx.count(op)
    facts["_ptx"] = ptx
    facts["_sass"] = sass
    return facts


def main():
    from kernels import gemm
    args = sys.argv[1:]
    cc = (9, 0)
    if args and args[0] == "--cc":
        cc = (int(args[1][0]), int(args[1][1:]))
        args = args[2:]
    for r in gemm.LADDER + gemm.EXPLORE:
        if args and not any(a in r.name for a in args):
            continue
        f = report(r.kernel.numba, cc, f32=r.dtype == "f32")
        print("%-34s %s" % (r.name, " ".join("%s=%s" % (k, v) for k, v in f.items() if not k.startswith("_"))))


if __name__ == "__main__":
    main()
