"""The order of a tensor-core rung's main loop in SASS, offline (no GPU): Numba -> PTX -> `ptxas` for sm_90 (or
--cc) -> `nvdisasm`, then the loop that holds the HMMA written one character an instruction, and, for each
ldmatrix, how many instructions later the first mma reads what it loaded. Chapter 7 prints what this finds
(kernels.gemm.recorded.SCHEDULE) for steps 10 and 11.

    python benchmarks/gemm/sass_schedule.py [--cc 90] [NAME ...]
    python benchmarks/gemm/sass_schedule.py --sass FILE      # SASS text or a cubin written elsewhere

nvdisasm is not in every CUDA install: NVDISASM=path, or on the PATH (PyPI: nvidia-cuda-nvdisasm). --sass
reads what prefetch_probe.py wrote on the GPU machine (the SASS the driver compiled and ran).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# One character an instruction; anything else is "."
LETTERS = (("HMMA", "m"), ("LDSM", "l"), ("LDGSTS", "c"), ("LDGDEPBAR", "."), ("LDG", "g"), ("STS", "s"),
           ("DEPBAR", "w"), ("BAR.", "|"))
LEGEND = ("m mma (HMMA), l ldmatrix (LDSM), c cp.async (LDGSTS), w cp.async.wait_group (DEPBAR), | barrier, "
          "g ld.global (LDG), s st.shared (STS), . other")


def _nvdisasm():
    path = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if not path:
        raise SystemExit("sass_schedule: nvdisasm not found (set NVDISASM, or pip install nvidia-cuda-nvdisasm)")
    return path


def cubin_of(rung_name, cc=(9, 0)):
    """(cubin bytes, ptxas version line) of a rung of kernels.gemm, compiled offline."""
    import ptxas_report
    from kernels import gemm
    k = gemm.rung(rung_name).kernel
    facts = ptxas_report.report(k.numba, cc)
    ptx = facts["_ptx"]
    lb = getattr(k.numba, "targetoptions", {}).get("launch_bounds")
    if lb:                                     # as ptxas_report: the launch bounds compile_ptx leaves out
        t, b = (lb + (1,))[:2] if isinstance(lb, tuple) else (lb, 1)
        ptx = re.sub(r"(\.visible \.entry [^(]+\([^)]*\))", r"\1\n.maxntid %d, 1, 1\n.minnctapersm %d" % (t, b),
                     ptx, count=1)
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        open(src, "w").write(ptx)
        subprocess.run(["ptxas", "-arch=sm_%d%d" % cc, src, "-o", out], check=True)
        version = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
        return open(out, "rb").read(), version[-1]


def instructions(sass):
    """[(label or None, opcode text)] of a kernel's SASS: nvdisasm's or cuobjdump's text, or a cubin (bytes)."""
    if isinstance(sass, bytes):
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(sass)
            f.flush()
            sass = subprocess.run([_nvdisasm(), "-c", f.name], capture_output=True, text=True, check=True).stdout
    out, label = [], None
    for line in sass.splitlines():
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            label = m.group(1)
            continue
        m = re.match(r"^\s*/\*[0-9a-f]+\*/\s+(.*?)\s*;", line)
        if m:
            out.append((label, m.group(1)))
            label = None
    return out


def main_loop(code):
    """The instructions of the loop that holds the HMMA: from its label to the branch back to it."""
    labels = {lab: i for i, (lab, _) in enumerate(code) if lab}
    for j, (_, ins) in enumerate(code):
        m = re.search(r"BRA `?\((\.L_x_\d+)\)", ins)
        if m and labels.get(m.group(1), j) < j and any("HMMA" in x for _, x in code[labels[m.group(1)]:j]):
            return [x for _, x in code[labels[m.group(1)]:j + 1]]
    raise ValueError("sass_schedule: no loop with HMMA in this kernel")


def strip(loop):
    """The loop as one character an instruction (LETTERS)."""
    return "".join(next((c for op, c in LETTERS if ins.split()[0 if not ins.startswith("@") else 1]
                         .startswith(op)), ".") for ins in loop)


def _regs(operand):
    """Registers named by an operand R<n> of an instruction writing or reading `width` registers."""
    m = re.match(r"R(\d+)", operand.strip().lstrip("-"))
    return int(m.group(1)) if m else None


def ldmatrix_distances(loop):
    """For each LDSM of the loop: instructions until the first HMMA that reads one of its four registers
    (around the loop's back edge if need be), or None if none does."""
    hmma = []
    for i, ins in enumerate(loop):
        if "HMMA" in ins:
            ops = ins.split(None, 1)[1].split(",")
            a, b = _regs(ops[1]), _regs(ops[2])
            hmma.append((i, set(range(a, a + 4)) | set(range(b, b + 2))))
    out = []
    for i, ins in enumerate(loop):
        if "LDSM" in ins:
            dst = _regs(ins.split(None, 1)[1].split(",")[0])
            n = 4 if ".4" in ins.split()[0] else 2 if ".2" in ins.split()[0] else 1
            regs = set(range(dst, dst + n))
            later = [j - i for j, r in hmma if j > i and r & regs] + [j + len(loop) - i for j, r in hmma if j < i and r & regs]
            out.append(min(later) if later else None)
    return out


def schedule(sass, source):
    """{"strip", "ldmatrix_to_mma", "source"} of the main loop of a kernel's SASS (text or cubin bytes)."""
    loop = main_loop(instructions(sass))
    return {"strip": strip(loop), "ldmatrix_to_mma": ldmatrix_distances(loop), "source": source}


def _show(name, s):
    print("%r: {  # %s, %d instructions" % (name, s["source"], len(s["strip"])))
    print("    \"strip\": %r," % s["strip"])
    print("    \"ldmatrix_to_mma\": %r}," % (s["ldmatrix_to_mma"],))


def main():
    args = sys.argv[1:]
    print("# " + LEGEND)
    if args[:1] == ["--sass"]:
        data = open(args[1], "rb").read()
        _show(args[1], schedule(data if data[:4] == b"\x7fELF" else data.decode(), "SASS file " + args[1]))
        return
    cc = (9, 0)
    if args[:1] == ["--cc"]:
        cc, args = (int(args[1][0]), int(args[1][1:])), args[2:]
    import kernels
    kernels.setup(verbose=False, simulator=False)
    for name in args or ["tc sm80 128x128x32 4st", "tc sm80 + k-block prefetch"]:
        cubin, version = cubin_of(name, cc)
        _show(name, schedule(cubin, "offline: ptxas %s, sm_%d%d" % (version, *cc)))


if __name__ == "__main__":
    main()
