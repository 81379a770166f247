"""The order of a tensor-core rung's main loop in SASS, offline (no GPU): Numba -> PTX -> `ptxas` for sm_90 (or
--cc) -> `nvdisasm`, then the loop that holds the HMMA written one character an instruction, and, for each
ldmatrix, how many instructions later the first mma reads what it loaded. Chapter 7 prints what this finds
(kernels/gemm/records.json, "schedule") for steps 10 and 11.

    python benchmarks/gemm/sass_schedule.py [--cc 90] [NAME ...]
    python benchmarks/gemm/sass_schedule.py --sass FILE      # SASS text or a cubin written elsewhere
    python benchmarks/gemm/sass_schedule.py --ncu FILE       # Nsight Compute's source page (CSV)

nvdisasm is not in every CUDA install: NVDISASM=path, or on the PATH (PyPI: nvidia-cuda-nvdisasm). --sass
reads what prefetch_probe.py wrote on the GPU machine (the SASS the GPU ran). --ncu reads the source page that
`prefetch_probe.py --ncu` writes (<config>_<kind>_source.csv: the stall samples of each SASS instruction) and
says, for the long and the short scoreboard, which instruction of the loop collects most of the kernel's
samples and what it waits for: the ldmatrix that writes a register it reads, or the cp.async that still reads a
register it writes (a memory instruction reads its address registers after it issues, and a scoreboard keeps
them from being overwritten until it has).
"""

import csv
import io
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
    k = gemm.step(rung_name).kernel
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


def loop_span(code):
    """(first, last) index in `code` of the loop that holds the HMMA: its label, the branch back to it. A label
    is nvdisasm's (.L_x_N) or an address (Nsight Compute's source page)."""
    labels = {lab: i for i, (lab, _) in enumerate(code) if lab}
    for j, (_, ins) in enumerate(code):
        m = re.search(r"BRA `?\(?(\.L_x_\d+|0x[0-9a-f]+)", ins)
        if m and labels.get(m.group(1), j) < j and any("HMMA" in x for _, x in code[labels[m.group(1)]:j]):
            return labels[m.group(1)], j
    raise ValueError("sass_schedule: no loop with HMMA in this kernel")


def main_loop(code):
    """The instructions of the loop that holds the HMMA: from its label to the branch back to it."""
    first, last = loop_span(code)
    return [x for _, x in code[first:last + 1]]


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


def _opcode(ins):
    return ins.split()[1 if ins.startswith("@") else 0]


def _operands(ins):
    return [o.strip() for o in ins.split(None, 2 if ins.startswith("@") else 1)[-1].split(",")]


def _named(operand, width=1):
    """The registers an operand names: R<n>, and R<n+1> where it is a 64-bit address (R<n>.64)."""
    return {r + k for r in map(int, re.findall(r"\bR(\d+)", operand))
            for k in range(2 if re.search(r"\bR\d+\.64", operand) else width)}


def writes(ins):
    """The registers an instruction writes: its first operand (4 for HMMA and ldmatrix.x4, 2 for .x2)."""
    op = _opcode(ins)
    n = 4 if op.startswith("HMMA") or op.endswith(".4") else 2 if op.endswith(".2") or ".WIDE" in op else 1
    if op.startswith(("LDGSTS", "STS", "BRA", "BAR", "DEPBAR", "LDGDEPBAR")):     # write memory or nothing
        return set()
    return _named(_operands(ins)[0], n)


def reads(ins):
    """The registers an instruction reads (an HMMA.16816's A: 4, B: 2, C: 4)."""
    ops = _operands(ins)
    if _opcode(ins).startswith("HMMA"):
        return _named(ops[1], 4) | _named(ops[2], 2) | _named(ops[3], 4)
    return set().union(*(_named(o) for o in (ops if _opcode(ins).startswith(("LDGSTS", "STS")) else ops[1:])))


def waits_on(loop, i, reason):
    """What the loop's instruction i waits for, in words, or None. short_scoreboard: an LDSM that last wrote a
    register it reads; long_scoreboard: an LDGSTS that last touched a register it writes, by reading it (its
    address). The nearest earlier such instruction, around the loop's back edge if need be."""
    n, found = len(loop), []
    mine, kind, words = ((reads, "LDSM", "reads R%d, which the LDSM %d instruction%s earlier writes")
                         if reason == "short_scoreboard" else
                         (writes, "LDGSTS", "writes R%d, which the LDGSTS %d instruction%s earlier reads"))
    for r in sorted(mine(loop[i])):
        for d in range(1, n):
            other = loop[(i - d) % n]
            if r in writes(other) or (kind == "LDGSTS" and r in reads(other)):   # the nearest that touches r
                if _opcode(other).startswith(kind):
                    found.append((d, r))
                break
    if not found:
        return None
    d, r = min(found)
    return words % (r, d, "s" if d > 1 else "")


NCU_REASONS = {"long_sb": "long_scoreboard", "short_sb": "short_scoreboard", "math": "math_pipe_throttle",
               "mio": "mio_throttle", "lg": "lg_throttle", "dispatch": "dispatch_stall", "no_inst": "no_instruction"}


def ncu_source(text):
    """[(address, instruction, {stall reason: samples})] of Nsight Compute's source page of one kernel (ncu -i
    REP --page source --csv --print-source sass), the reasons named as ncu's metrics name them."""
    rows = list(csv.reader(io.StringIO(text)))
    at = next(i for i, r in enumerate(rows) if r[:2] == ["Address", "Source"])
    head = rows[at]
    cols = {NCU_REASONS.get(h[6:], h[6:]): i for i, h in enumerate(head) if h.startswith("stall_") and "(" not in h}
    return [(r[0], r[1].strip(), {k: float(r[i] or 0) for k, i in cols.items()}) for r in rows[at + 1:]
            if len(r) == len(head)]


def hotspots(rows, reasons=("long_scoreboard", "short_scoreboard")):
    """For each reason: (position in the main loop, share of the kernel's samples of that reason, instruction,
    waits_on) of the loop instruction that collects the most of them."""
    first, last = loop_span([(a, ins) for a, ins, _ in rows])
    loop = [ins for _, ins, _ in rows[first:last + 1]]
    out = {}
    for reason in reasons:
        total = sum(s[reason] for *_, s in rows) or 1.0
        i = max(range(len(loop)), key=lambda k: rows[first + k][2][reason])
        out[reason] = (i, round(rows[first + i][2][reason] / total, 3), loop[i], waits_on(loop, i, reason))
    return out


def schedule(sass, source):
    """{"strip", "ldmatrix_to_mma", "source"} of the main loop of a kernel's SASS (text or cubin bytes, or
    [(label, instruction)])."""
    loop = main_loop(sass if isinstance(sass, list) else instructions(sass))
    return {"strip": strip(loop), "ldmatrix_to_mma": ldmatrix_distances(loop), "source": source}


def _show(name, s):
    print("%r: {  # %s, %d instructions" % (name, s["source"], len(s["strip"])))
    print("    \"strip\": %r," % s["strip"])
    print("    \"ldmatrix_to_mma\": %r}," % (s["ldmatrix_to_mma"],))


def main():
    args = sys.argv[1:]
    print("# " + LEGEND)
    if args[:1] == ["--ncu"]:
        rows = ncu_source(open(args[1]).read())
        _show(args[1], schedule([(a, ins) for a, ins, _ in rows], "Nsight Compute source page " + args[1]))
        print("# the loop instruction with the most samples of each reason: (position, share of the kernel's "
              "samples, instruction, what it waits for)")
        for reason, spot in hotspots(rows).items():
            print("    %r: %r," % (reason, spot))
        return
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
