"""What chapter 7 needs around kernels.gemm's steps: quotes of their source and what changed from one step to
the next, a check of each step against NumPy, live timings against cuBLAS (kernels.harness), and the figures
that say what limits a step (shared-memory wavefronts and occupancy from cutelite.teach.gemm, registers and
stall reasons recorded on an H100: RECORD, records.json beside this file).

    import kernels; info = kernels.setup()
    from kernels.gemm import chapter
    step = chapter.step("simt 3: smem tiles")
    print(chapter.quote(step))                         # the kernel's source, from its module
    C, want, what = chapter.check_run(step)            # simulator-sized (GPU: 256^3), output poisoned
    bench = chapter.Bench(info)                        # GPU: cuBLAS baselines; simulator: recorded H100
    bench.measure(step)                                # GPU: TFLOP/s at 4096^3; simulator: the record
    print(chapter.changes(step_a, step_b))             # the lines of b's kernel that differ from a's
    chapter.limits(["tc sm80 128x128x32 4st"])         # registers, occupancy, stall reasons (recorded)

In the simulator the tensor-core steps run the same kernels built with 64x64 CTA tiles (4 warps, as at
full size; kernels.lib.matmul does the same), since a 128x128 tile's work is slow to simulate.
"""

import difflib
import inspect
import io
import re
import textwrap
import tokenize
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from cutelite.teach.gemm import occupancy, smem_wavefronts  # noqa: F401  (the chapter calls them from here)
from cutelite.teach.records import load

from ..capability import MIN_SM, lacking, sm, why_not
from ..harness import blas, check_and_time, cublas_baseline
from ..ladder import Step
from ..runtime import in_simulator
from ..timing import gpu_time_ms
from . import EXPLORE, LADDER, ceiling, prepare, simt_coalesced, simt_naive, step  # noqa: F401  (step: for the chapter)

__all__ = ["RECORD", "recorded", "recorded_regs", "step", "quote", "changes", "check_run", "Bench", "device_numbers",
           "BASELINE_NAMES", "instruction_mix", "smem_wavefronts", "occupancy", "limits", "STALL_MEANING", "fastest",
           "recorded_change", "loop_schedule", "PROBE_STEPS", "prefetch_probe", "probe_hotspots", "compare_schedules"]

RECORD = load("kernels/gemm")


BASELINE_NAMES = {"f32": "cuBLAS fp32 (torch)", "f16": "cuBLAS fp16->fp32 (torch)"}   # the tensor-core steps: fp16 in, fp32 out


def _key(name):
    """The record's name for `name`: a step's `recorded` name, or `name` itself (a row that is no step: cuBLAS's)."""
    return next((s.recorded for s in LADDER + EXPLORE if s.name == name), name)


def _row(name):
    """(name, dtype, TFLOP/s at 4096^3, registers per thread or None) of the record's row for `name`; all None
    where it has none."""
    return next((r for r in RECORD["rows"] if r[0] == _key(name)), (None,) * 4)


def recorded(name):
    """The recorded TFLOP/s of a step or a row of the record (cuBLAS's), or None if it was not measured."""
    return _row(name)[2]


def recorded_regs(name):
    """Registers per thread of a step's kernel in the recorded SASS, or None."""
    return _row(name)[3]


def _recorded(table, name):
    """A step's entry in a table of the record keyed by name (RECORD["stalls"], ["schedule"]), or None."""
    return RECORD[table].get(_key(name))


def _source(s):
    """(source lines, first line number, path from kernels/) of a Step's object or of any object."""
    obj = (s.module if s.quoted is None else getattr(s.module, s.quoted)) if isinstance(s, Step) else s
    obj = getattr(obj, "fn", obj)                        # a cutejit kernel: the function it traces
    obj = inspect.unwrap(getattr(obj, "py_func", obj))   # a decorated function (contextmanager): its own
    lines, first = inspect.getsourcelines(obj)
    path = inspect.getsourcefile(obj).replace("\\", "/")
    path = path[path.rindex("kernels/"):] if "kernels/" in path else path
    return lines, first or 1, path                       # a module's source starts at line 1, reported as 0


def quote(s, start=None, stop=None):
    """Lines of the source of a Step's `quoted` (or of any object inspect can read), from the first line
    containing `start` to the first line after it containing `stop` (a Step's `span` by default), dedented,
    headed by the file and line numbers."""
    start = s.span[0] if isinstance(s, Step) and start is None else start
    stop = s.span[1] if isinstance(s, Step) and stop is None else stop
    lines, first, path = _source(s)
    name = getattr(s, "name", getattr(s, "__name__", s))
    i = 0 if start is None else next((n for n, ln in enumerate(lines) if start in ln), None)
    if i is None:
        raise ValueError("quote: no line of %s contains %r" % (name, start))
    j = len(lines) - 1 if stop is None else next((n for n in range(i, len(lines)) if stop in lines[n]), None)
    if j is None:
        raise ValueError("quote: no line of %s after %r contains %r" % (name, start, stop))
    head = "# %s, lines %d-%d" % (path, first + i, first + j)
    return head + "\n" + textwrap.dedent("".join(lines[i:j + 1])).rstrip()


def _code(lines):
    """Each source line without its comment and trailing spaces (a comment is not a change of code)."""
    w = min(len(ln) - len(ln.lstrip()) for ln in lines if ln.strip())    # what dedent removes
    out = [ln.rstrip() for ln in lines]
    for tok in tokenize.generate_tokens(io.StringIO(textwrap.dedent("".join(lines))).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            out[row - 1] = lines[row - 1][:col + w].rstrip()
    return out


def _span(first, count):
    """A unified diff's line range: first line and count (the count left out when 1; after line first - 1
    when 0)."""
    return "%d" % first if count == 1 else "%d,%d" % (first - (count == 0), count)


def changes(a, b):
    """What changed from step a's kernel to step b's (Steps or objects): the lines of each that differ,
    matched by their code with comments aside, shown as written ('-' a's, '+' b's) under '@@' headers
    with their line numbers in the two files."""
    (la, fa, pa), (lb, fb, pb) = _source(a), _source(b)
    out = ["# from %s (-) to %s (+); lines that differ only in comments are left out" % (pa, pb)]
    ops = difflib.SequenceMatcher(None, _code(la), _code(lb), autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        out.append("@@ -%s +%s @@" % (_span(fa + i1, i2 - i1), _span(fb + j1, j2 - j1)))
        out += ["-" + ln.rstrip("\n") for ln in la[i1:i2]] + ["+" + ln.rstrip("\n") for ln in lb[j1:j2]]
    return "\n".join(out)


# ---- checks ------------------------------------------------------------------------------------------
def _sim_twin(s):
    """The kernel a tensor-core step runs in the simulator: same module and options, 64x64 CTA tiles."""
    return s.module.make(**dict(s.config, BM=64, BN=64))


def check_size(s):
    """(M, N, K) a step is checked at: the smallest multiple of its tile in the simulator (K: two k-tiles
    at least, 32 at least), 256^3 on a GPU."""
    if not in_simulator():
        return (256, 256, 256)
    tm, tn, tk = s.tile
    if s.dtype == "f16":
        tm, tn = 64, 64
    return (max(tm, 32), max(tn, 32), max(2 * tk, 32))


def inputs(M, N, K, dtype, seed=7):
    """Random A (M, K), B (K, N) as float32 or float16 (standard normal)."""
    rng = np.random.default_rng(seed)
    t = np.float32 if dtype == "f32" else np.float16
    return rng.standard_normal((M, K)).astype(t), rng.standard_normal((K, N)).astype(t)


def check_run(s, size=None, seed=7):
    """Run step `s` once on random inputs with its output poisoned (NaN): returns (C, the NumPy product in
    float64, a label for check_close)."""
    M, N, K = size or check_size(s)
    A, B = inputs(M, N, K, s.dtype, seed)
    C = np.full((M, N), np.nan, np.float32)
    if in_simulator() and s.dtype == "f16":
        _sim_twin(s).launch(A.view(np.uint16), B.view(np.uint16), C)
    elif in_simulator():
        s.kernel.launch(A, B, C)
    else:
        dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.to_device(C)
        prepare(s, dA, dB, dC)()
        C = dC.copy_to_host()
    want = A.astype(np.float64) @ B.astype(np.float64)
    return C, want, "%s, %dx%dx%d %s, vs NumPy" % (s.name, M, N, K, s.dtype)


# ---- timing on a GPU ---------------------------------------------------------------------------------
class Bench:
    """TFLOP/s of the ladder's steps at size^3: measured on a GPU (kernels.harness: each step checked against
    cuBLAS, then timed), the recorded H100 figures (RECORD) in the simulator. `results` maps a step name to
    (TFLOP/s, "measured" or "recorded"), or to (None, why not) for a step this GPU (or the profile,
    kernels.setup(profile=...)) cannot run; `baseline` maps "f32"/"f16" to cuBLAS's TFLOP/s (None when there
    is no cuBLAS to call: then the steps are timed unchecked, as check_run checked them)."""

    def __init__(self, info, size=4096, progress=True):
        self.info, self.size, self.progress = info, size, progress
        self.live = not info.simulator and info.cc is not None
        self.results, self.baseline, self.ceilings = {}, {}, {}
        self.note = None
        self._inputs, self._want = {}, {}
        if not self.live:
            run = RECORD["run"]
            self.source = "recorded %s on %s (%s)" % (run["date"], run["device"], run["source"])
            self.baseline = {d: recorded(n) for d, n in BASELINE_NAMES.items()}
            self.ceilings = dict(RECORD["ceilings"])
            return
        self.source = "measured now on %s (%s)" % (info.label, info.sm)
        lib, self.note = blas()
        for d in ("f32", "f16"):
            self.baseline[d] = None if lib is None else self._cublas(d)

    @property
    def flop(self):
        return 2.0 * self.size ** 3

    def _host(self, dtype):
        if dtype not in self._inputs:
            A, B = inputs(self.size, self.size, self.size, dtype, seed=11)
            self._inputs[dtype] = (A, B, cuda.to_device(A), cuda.to_device(B))
        return self._inputs[dtype]

    def _cublas(self, dtype):
        """cuBLAS's TFLOP/s on this dtype's inputs; its C is what the steps are checked against."""
        A, B, _, _ = self._host(dtype)
        _, run = cublas_baseline(A, B)
        self._want[dtype] = run()
        return self.flop / gpu_time_ms(run) / 1e9

    def why_not(self, s):
        """None when this GPU (or profile) runs step s (a Step or a step name), else a sentence saying why not."""
        s = s if isinstance(s, Step) else step(s)
        return why_not(s.needs, self.info.cc, self.info.label)

    def measure(self, s):
        """TFLOP/s of step s (a Step, or the name of a step of LADDER or EXPLORE), measured or recorded;
        None if this GPU cannot run it (why_not says why). Stored in results."""
        s = s if isinstance(s, Step) else step(s)
        missing = lacking(s.needs, self.info.cc)
        if missing:
            self.results[s.name] = (None, "needs %s" % sm(max(MIN_SM[n] for n in missing)))
            return None
        if not self.live:
            tf = recorded(s.name)
            self.results[s.name] = (tf, "recorded" if tf is not None else "not in the recorded run")
            return tf
        _, _, dA, dB = self._host(s.dtype)
        want = self._want.get(s.dtype)
        C = cuda.device_array((self.size, self.size), np.float32)
        run = prepare(s, dA, dB, C)
        bar = _progress(self.progress, "%s at %d^3" % (s.name, self.size))
        counted = lambda: (run(), bar.update(1))  # noqa: E731
        ms = (check_and_time(counted, C, want, "%s at %d^3, against cuBLAS" % (s.name, self.size))[0]
              if want is not None else gpu_time_ms(counted))
        bar.close()
        tf = self.flop / ms / 1e9
        self.results[s.name] = (tf, "measured")
        return tf

    def tflops(self):
        """name -> TFLOP/s of everything measured (or recorded) so far."""
        return {n: tf for n, (tf, _) in self.results.items()}

    def chart_rows(self):
        """(name, TFLOP/s, dtype, how it was obtained) of the chapter's steps measured so far, in ladder
        order."""
        return [(s.name, *self.results[s.name][:1], s.dtype, self.results[s.name][1]) for s in LADDER
                if s.name in self.results]

    def ceiling(self, shape="m16n8k16"):
        """TFLOP/s of the register-only mma.sync loop (kernels.gemm.ceiling): measured on a GPU that has
        the instruction, recorded (H100) in the simulator, None (saying why, once) where the GPU or the
        profile lacks the instruction."""
        why = why_not(["mma.%s.f16" % shape], self.info.cc, self.info.label)
        if why:
            print("no %s ceiling: it %s" % (shape, why))
            self.ceilings[shape] = None
            return None
        if not self.live:
            return self.ceilings.get(shape)
        k = ceiling.make_kernel(shape)
        blocks, threads, iters = 8 * device_numbers(self.info)["sms"], 256, 2048
        out = cuda.device_array(blocks * threads, np.float32)
        ms = gpu_time_ms(lambda: k[blocks, threads](out, iters))
        self.ceilings[shape] = ceiling.flops(k, blocks, threads, iters) / ms / 1e9
        return self.ceilings[shape]


class _NoBar:
    def update(self, n=1):
        pass

    def close(self):
        pass


def _progress(on, desc):
    if not on:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(desc=desc, unit="run", leave=False)


# ---- the device's numbers ----------------------------------------------------------------------------
H100_DATASHEET = {"name": "NVIDIA H100 SXM5 80GB (datasheet)", "sms": 132, "clock_ghz": 1.98,
                  "dram_tbs": 3.35, "source": "NVIDIA H100 datasheet: 132 SMs, 1.98 GHz boost, 3.35 TB/s HBM3"}


def device_numbers(info, measure_dram=True):
    """{"name", "sms", "clock_ghz", "dram_tbs", "smem_tbs", "source"} of this GPU: SM count and clock from
    the driver, DRAM bandwidth measured (a 512 MiB device-to-device copy, read + write); shared memory =
    SMs x 128 bytes per clock x clock. In the simulator: the H100's datasheet numbers, labelled so."""
    if info.simulator or info.cc is None:
        d = dict(H100_DATASHEET)
    else:
        dev = cuda.get_current_device()
        d = {"name": info.name, "sms": int(dev.MULTIPROCESSOR_COUNT), "clock_ghz": None, "dram_tbs": None,
             "source": "driver attributes and a timed copy on this GPU"}
        try:
            d["clock_ghz"] = int(dev.CLOCK_RATE) / 1e6
        except Exception:  # noqa: BLE001  (some drivers no longer report it)
            pass
        if measure_dram:
            n = 1 << 27                                   # 128 Mi floats = 512 MiB
            a, b = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
            ms = gpu_time_ms(lambda: b.copy_to_device(a), reps=5)
            d["dram_tbs"] = 2 * 4 * n / ms / 1e9
            del a, b
    d["smem_tbs"] = d["sms"] * 128 * d["clock_ghz"] / 1e3 if d.get("clock_ghz") else None
    return d


# ---- the layouts the tensor-core kernels use, as the chapter compares them ------------------------------
def intensities(s, size=4096):
    """(FLOP/byte of step s from DRAM at size^3 if A, B, C moved once; from global memory per CTA tile;
    from shared memory per thread tile (SIMT) or warp tile (tensor cores), None without shared memory)."""
    from cutelite.teach.gemm import ai_dram, ai_global, ai_shared
    e = 4 if s.dtype == "f32" else 2
    BM, BN, _ = s.tile
    smem = None if s.module in (simt_naive, simt_coalesced) else ai_shared(*s.thread_tile, e)
    return ai_dram(size, size, size, e), ai_global(BM, BN, e), smem


# ---- one step of the chapter: check, measure, chart -----------------------------------------------------
def climb(bench, s):
    """Step s as the chapter runs it: checked against NumPy (output poisoned, a PASS line), its TFLOP/s
    measured (GPU) or recorded (simulator) and printed, and the running bar chart of the steps so far drawn;
    a step this GPU (or profile) cannot run is neither checked nor measured, and the line says why.
    Returns the chart's axes."""
    from cutelite import check_close
    from cutelite.teach.gemm import draw_ladder
    why = bench.why_not(s)
    if why is None:
        check_close(*check_run(s))
    tf = bench.measure(s)
    base = bench.baseline.get(s.dtype)
    if why:
        print("%s: not checked or measured: it %s" % (s.name, why))
    elif tf is None:
        print("%s: %s" % (s.name, bench.results[s.name][1]))
    else:
        print("%s: %.1f TFLOP/s at %d^3 (%s)%s" % (s.name, tf, bench.size, bench.results[s.name][1],
                                                  ", %.2f of cuBLAS" % (tf / base) if base else ""))
    return draw_ladder(bench.chart_rows(), bench.baseline, highlight=s.name,
                       title="GEMM ladder, %d^3: %s" % (bench.size, bench.source))


def compiled_resources(kernel):
    """(shared bytes per block, registers per thread) the compiler gave `kernel` (launched at least once),
    or None in the simulator or when this Numba cannot say."""
    if in_simulator():
        return None
    try:
        smem, regs = kernel.get_shared_mem_per_block(), kernel.get_regs_per_thread()
    except Exception:  # noqa: BLE001
        return None
    pick = lambda v: max(v.values()) if isinstance(v, dict) and v else (None if isinstance(v, dict) else v)  # noqa: E731
    return pick(smem), pick(regs)


# ---- what limits a tensor-core step ---------------------------------------------------------------------
def instruction_mix(kernel):
    """Counter of the instructions (intrinsic calls and barriers) in the main k-loop of a cutejit kernel's
    generated source: what one thread issues per k-tile."""
    lines = kernel.source.splitlines()
    top = next((n for n, ln in enumerate(lines) if ln.startswith("    for ")), None)
    if top is None:
        raise ValueError("instruction_mix: %s has no run-time loop" % lines[0])
    body = []
    for ln in lines[top + 1:]:
        if not ln.startswith("        "):
            break
        body.append(ln)
    calls = re.findall(r"([A-Za-z_][\w.]*)\(", "\n".join(body))
    return Counter(c for c in calls if c not in ("range", "min", "float32"))


# What Nsight Compute's stall reasons mean (its Kernel Profiling Guide, "Warp Scheduler States"), in short.
STALL_MEANING = {
    "long_scoreboard": "waits for a register written by a global (L1TEX) load",
    "short_scoreboard": "waits for a register written by shared memory (ldmatrix, ld.shared) or MUFU",
    "mio_throttle": "the queue of shared-memory instructions is full",
    "lg_throttle": "the queue of global-memory instructions is full",
    "barrier": "waits at a CTA barrier (syncthreads) for the other warps",
    "math_pipe_throttle": "the math pipe it needs (the tensor cores) is busy",
    "wait": "a fixed-latency dependency (e.g. an mma waiting for the previous one)",
    "dispatch_stall": "the dispatcher could not issue the chosen instruction",
    "not_selected": "ready, but another warp issued",
    "selected": "issuing",
    "no_instruction": "no instruction fetched (instruction cache, or after a branch)",
    "branch_resolving": "waits for a branch target",
    "membar": "waits at a memory barrier",
    "drain": "waits for its stores to drain before exiting",
    "imc_miss": "immediate-constant cache miss",
    "sleeping": "sleeping",
    "tex_throttle": "the texture queue is full",
    "misc": "other",
}


def limits(names, top=4):
    """Print what the record says limits the steps `names` (one column each): registers per thread (the
    SASS), the occupancy that follows on an H100 with the kernel's threads and shared memory, and the
    `top` stall reasons of each (Nsight Compute, RECORD["stalls"]), or "not recorded"."""
    cols = []
    for name in names:
        cfg = step(name).kernel.config
        regs, stalls = recorded_regs(name), _recorded("stalls", name)
        occ = occupancy(regs, cfg["threads"], cfg["smem"]) if regs else None
        cols.append((cfg, regs, occ, stalls))
    width = max(34, *(len(n) + 2 for n in names))

    def row(label, values):
        print("%-30s" % label + "".join("%-*s" % (width, v) for v in values))

    print("recorded on %s (kernels/gemm/records.json), at %d^3" % (RECORD["run"]["device"], RECORD["run"]["size"][0]))
    row("", names)
    row("threads, shared bytes per CTA", ["%d, %d" % (c["threads"], c["smem"]) for c, *_ in cols])
    row("registers per thread", ["not recorded" if g is None else g for _, g, _, _ in cols])
    row("CTAs (warps) per SM, limit", ["not recorded" if o is None else "%d (%d of 64), %s" % o
                                       for _, _, o, _ in cols])
    reasons = []
    for *_, st in cols:
        reasons += [k for k in sorted(st or {}, key=lambda k: -st[k])[:top] if k not in reasons]
    if not reasons:
        row("stall reasons", ["not recorded"] * len(cols))
        return
    print("stall reasons, %s:" % RECORD["stalls_unit"])
    for k in reasons:
        row("  " + k, ["not recorded" if st is None else "-" if k not in st else "%.2f" % st[k] for *_, st in cols])
    for k in reasons:
        print("  %-20s %s" % (k, STALL_MEANING.get(k, "")))


# ---- reading the record: the fastest step, what changed from one step to the next, the SASS loop ----------
def fastest(results, names=None):
    """The name of the fastest kernel in `results` (name -> (TFLOP/s or None, how), as Bench.results) among
    `names` (default: all of them), counting only those that have a figure; None when none has one."""
    figures = {n: r[0] for n, r in results.items() if r[0] is not None and (names is None or n in names)}
    return max(figures, key=figures.get) if figures else None


def recorded_change(a, b):
    """Print what the H100 record says changed from step a to step b: TFLOP/s, registers, CTAs an SM, every
    stall reason the two share (the largest change first) and their sums. Summed over all reasons, `selected`
    included, the unit (warps per issued instruction) is a scheduler's warps times the cycles between two of
    its issues; so with the same warps a scheduler, a k-tile's time goes as the instructions it issues (the
    recorded SASS loop) times that sum, which the last line compares with the measured ratio.
    Returns {reason: (a's value, b's value)}."""
    sa, sb = (_recorded("stalls", n) for n in (a, b))
    tfa, tfb = recorded(a), recorded(b)
    ra, rb = recorded_regs(a), recorded_regs(b)
    occ = [occupancy(r, c["threads"], c["smem"]) for r, c in ((ra, step(a).kernel.config),
                                                                (rb, step(b).kernel.config))]
    print("recorded on %s at %d^3: %s -> %s" % (RECORD["run"]["device"], RECORD["run"]["size"][0], a, b))
    print("  %-20s %6.1f -> %6.1f   (%.2fx)" % ("TFLOP/s", tfa, tfb, tfb / tfa))
    print("  %-20s %6d -> %6d" % ("registers", ra, rb))
    print("  %-20s %6s -> %6s" % ("CTAs (warps) an SM", "%d (%d)" % occ[0][:2], "%d (%d)" % occ[1][:2]))
    common = sorted((k for k in sa if k in sb), key=lambda k: -abs(sb[k] - sa[k]))   # ties in a's order
    print("  stall reasons, %s, the largest change first:" % "warps stalled per issued instruction")
    for k in common:
        print("  %-20s %6.2f -> %6.2f   (%+.2f)  %s" % (k, sa[k], sb[k], sb[k] - sa[k], STALL_MEANING.get(k, "")))
    ta, tb = sum(sa.values()), sum(sb.values())
    print("  %-20s %6.2f -> %6.2f" % ("all of them", ta, tb))
    if _recorded("schedule", a) and _recorded("schedule", b):
        na, nb = (len(_recorded("schedule", n)["strip"]) for n in (a, b))
        print("  %-20s %6d -> %6d   (SASS, loop_schedule)" % ("instructions a k-tile", na, nb))
        print("  time a k-tile, ~ instructions x all stall reasons: %.2fx; measured: %.2fx"
              % (nb * tb / (na * ta), tfa / tfb))
    return {k: (sa[k], sb[k]) for k in common}


def loop_schedule(names, width=96):
    """Print the recorded SASS of each step's main loop (RECORD["schedule"]), one character an
    instruction, and how far ahead of the first mma that reads it each ldmatrix is issued. Returns
    {name: (instructions in the loop, the smallest ldmatrix-to-mma distance)}."""
    print("main loop in SASS (%s)\n%s\n" % (RECORD["schedule_source"], RECORD["schedule_legend"]))
    out = {}
    for name in names:
        s = _recorded("schedule", name)
        strip, ahead = s["strip"], sorted(d for d in s["ldmatrix_to_mma"] if d is not None)
        print("%s: %d instructions, %d mma, %d ldmatrix" % (name, len(strip), strip.count("m"), strip.count("l")))
        print("\n".join("    " + strip[i:i + width] for i in range(0, len(strip), width)))
        print("    ldmatrix -> its first mma, instructions: %s\n" % " ".join(map(str, ahead)))
        out[name] = (len(strip), ahead[0])
    return out


# ---- the prefetch probe: steps 10 and 11 side by side in four configurations (recorded on an H200) ----------
PROBE_STEPS = {"tc sm80 128x128x32 4st": ("128x128x32 4st", "plain"),
               "tc sm80 + k-block prefetch": ("128x128x32 4st", "prefetch")}   # the probe's names of steps 10, 11


def _per_k_tile(config, kind):
    """Instructions a k-tile in the SASS loop the probe's GPU ran (a loop may hold several k-tiles: one barrier
    each), or None where its SASS was not recorded."""
    s = RECORD["probe_schedule"].get(config, {}).get(kind)
    return s and len(s["strip"]) / s["strip"].count("|")


def prefetch_probe(reasons=("long_scoreboard", "short_scoreboard", "barrier")):
    """Print the record of benchmarks/gemm/prefetch_probe.py (RECORD["probe*"]): for each configuration, step
    10's and step 11's registers, CTAs an SM and TFLOP/s at each size (the median of the rounds; "~" where the
    two kernels' ranges over the rounds overlap), step 11 / step 10; then the stall reasons
    `reasons` and the sum of all, step 10 -> step 11, the instructions a k-tile in the SASS the GPU ran, and
    instructions x all stall reasons against the measured ratio of times (as recorded_change).
    Returns {(size, config): step 11's TFLOP/s / step 10's}."""
    run, sizes = RECORD["probe_run"], sorted(RECORD["probe"])
    print("recorded on %s, %s, %d rounds; not the ladder's GPU: compare these only with each other\n(%s)"
          % (run["device"], run["date"], run["rounds"], run["command"]))
    print("%-16s %-11s %-5s" % ("configuration", "registers", "CTAs") +
          "".join("| %-21s %-6s" % ("%d^3: step 10 -> 11" % n, "11/10") for n in sizes))
    ratios = {}
    for config, kinds in RECORD["probe_kernels"].items():
        (r10, c10), (r11, c11) = kinds["plain"], kinds["prefetch"]
        cells = []
        for n in sizes:
            a, b = (RECORD["probe"][n][config][k] for k in ("plain", "prefetch"))
            ratios[n, config] = b[0] / a[0]
            apart = a[2] < b[1] or b[2] < a[1]
            cells.append("| %-21s %-6s" % ("%.1f -> %.1f" % (a[0], b[0]),
                                           "%.2f%s" % (ratios[n, config], "" if apart else "~")))
        print("%-16s %-11s %-5s" % (config, "%d -> %d" % (r10, r11), c10 if c10 == c11 else "%d, %d" % (c10, c11))
              + "".join(cells))
    print("TFLOP/s: the median of the rounds; ~: the two kernels' ranges over the rounds (min-max) overlap")
    for n in sizes:
        tf = {(c, k): t[0] for c, kinds in RECORD["probe"][n].items() for k, t in kinds.items()}
        config, kind = max(tf, key=tf.get)
        print("fastest at %d^3: %s, step %s" % (n, config, {"plain": 10, "prefetch": 11}[kind]))
    print()
    n = sizes[0]
    print("Nsight Compute, one launch at %d^3: warps stalled per issued instruction, step 10 -> step 11; "
          "instructions a k-tile\nin the SASS the GPU ran; time of step 11 / step 10, ~ instructions x all "
          "reasons, and measured:" % n)
    print("%-16s" % "configuration" + "".join("%-17s" % r for r in reasons + ("all reasons", "instructions"))
          + "time ~, measured")
    for config in RECORD["probe_kernels"]:
        st = RECORD["probe_stalls"][config]
        pair = lambda a, b, f: "%-17s" % ((f + " -> " + f) % (a, b))    # noqa: E731
        tot = [sum(st[k].values()) for k in ("plain", "prefetch")]
        ins = [_per_k_tile(config, k) for k in ("plain", "prefetch")]
        measured = RECORD["probe"][n][config]["plain"][0] / RECORD["probe"][n][config]["prefetch"][0]
        row = "".join(pair(st["plain"][r], st["prefetch"][r], "%.2f") for r in reasons) + pair(tot[0], tot[1], "%.2f")
        if None in ins:
            row += "%-17s" % " -> ".join("%g" % x if x else "?" for x in ins) + "?, %.2f" % measured
        else:
            row += pair(ins[0], ins[1], "%g") + "%.2f, %.2f" % (ins[1] * tot[1] / (ins[0] * tot[0]), measured)
        print("%-16s" % config + row)
    print("?: not recorded (the kernel's SASS did not come back from the GPU's machine)")
    return ratios


def probe_hotspots():
    """Print where the long- and short-scoreboard samples fall in the loops whose Nsight Compute source page
    the probe recorded (RECORD["probe_hotspots"]): the instruction with the most samples of each,
    its share of the kernel's samples of that reason, its place in the loop, and what it waits for."""
    print("Nsight Compute's samples per SASS instruction, one launch at 4096^3 (%s):" % RECORD["probe_run"]["device"])
    step = {"plain": "step 10", "prefetch": "step 11"}
    for config, kinds in RECORD["probe_hotspots"].items():
        for kind, spots in kinds.items():
            loop = len(RECORD["probe_schedule"][config][kind]["strip"])
            print("%s, %s:" % (config, step[kind]))
            for reason, (i, share, ins, why) in spots.items():
                print("    %-17s %3.0f%% on instruction %d of %d, %s" % (reason, 100 * share, i, loop, ins))
                print("    %-17s %s" % ("", why or "waits on no register of an ldmatrix or a cp.async"))


def compare_schedules(names=tuple(PROBE_STEPS)):
    """Print, for the steps `names`, the main loop compiled offline (RECORD["schedule"]) against the one the
    probe's GPU ran (RECORD["probe_schedule"]): instructions, the smallest ldmatrix-to-mma distance, and whether
    the two loops are the same instruction for instruction. Returns {name: same?}."""
    for label, source in (("offline", RECORD["schedule_source"].split(";")[0]),
                          ("on the GPU", RECORD["probe_schedule_source"])):
        print(textwrap.fill("%s: %s" % (label, source), 112, subsequent_indent="    "))
    same = {}
    for name in names:
        config, kind = PROBE_STEPS[name]
        a, b = _recorded("schedule", name), RECORD["probe_schedule"][config][kind]
        same[name] = a == b
        print("%-28s instructions %d offline, %d on the GPU; nearest ldmatrix -> mma %d and %d: %s"
              % (name, len(a["strip"]), len(b["strip"]), min(a["ldmatrix_to_mma"]), min(b["ldmatrix_to_mma"]),
                 "the same loop" if same[name] else "different loops"))
    return same
