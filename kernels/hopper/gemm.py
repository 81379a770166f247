"""Chapter 8's ladder as runnable GEMMs: C (M x N, float32) = A (M x K) @ Bt (N x K).T, fp16 or bf16.

    g = HopperGemm(BN=256, regs=(40, 232), group=16, persistent=True, tma_store=True)
    g(a, bt, c)            # Numba device arrays; tensor maps encoded once per (address, shape)
    step("ws BN128 st4").kernel       # a step of the ladder (kernels.ladder.Step), its HopperGemm built once

`python -m kernels.hopper` checks every step against NumPy (outputs poisoned first) and times it against
cuBLAS in the same process (GPU time, kernels.harness), then checks the variants of kernels.hopper.variants
(clusters, split-K, fused epilogues) against NumPy; `python -m kernels.hopper NAME ...` only the steps and
variants whose names contain a NAME (`python -m kernels.hopper cluster split-K epilogue`: the variants).
"""

import sys

import numpy as np

from cutelite import Major

from ..arrays import operand_major
from ..cutejit import encode_tensor_map
from ..cutejit.scheduler import last_tiles_box
from ..runtime import prepared_zero
from ..harness import blas, check, check_and_time, cublas_baseline, sass_counts
from ..ladder import Step, find
from . import pingpong as pingpong_
from . import warp_specialized, wgmma_cp_async

__all__ = ["HopperGemm", "make_step", "LADDER", "EXPLORE", "step", "MATMUL_CONFIG", "operand_major",
           "row_pitch", "tma_readable", "time_vs_cublas", "main"]


class HopperGemm:
    """One step of the ladder, built for one configuration (see LADDER); M, N, K multiples of the tile."""

    def __init__(self, BN=256, stages=4, consumers=2, regs=None, group=1, persistent=False, tma_store=False,
                 cp_async=False, pingpong=False, BM=None, dtype="float16", majors=("K", "K"), split_k=False,
                 epi=None, stream_k=False):
        if cp_async and (persistent or tma_store or regs or pingpong):
            raise ValueError("HopperGemm: cp_async=True is step 1 (every thread loads, no TMA): it takes BN, "
                             "stages, consumers and dtype only")
        if tuple(majors) != ("K", "K") and (cp_async or pingpong):
            raise ValueError("HopperGemm: MN-major operands are an option of steps 2-5 (the TMA kernels), got %r"
                             % (majors,))
        if split_k and (cp_async or pingpong or not tma_store):
            raise ValueError("HopperGemm: split_k=True is an option of the TMA-store kernel (step 5's body): it "
                             "needs tma_store=True, not cp_async or pingpong")
        if stream_k and (cp_async or pingpong or split_k or not (tma_store and persistent)):
            raise ValueError("HopperGemm: stream_k=True is an option of the persistent TMA-store kernel (step 5's "
                             "body): it needs persistent=True and tma_store=True, not cp_async, pingpong or split_k")
        if pingpong and (tma_store or consumers != 2):
            raise ValueError("HopperGemm: pingpong=True is step 6 (two consumers, st.global epilogue): it takes BM, "
                             "BN, stages, regs, group and dtype")
        if epi is not None and not tma_store:
            raise ValueError("HopperGemm: an epilogue (epi=%r) is an option of the TMA-store kernel (tma_store=True)"
                             % (epi,))
        if BM is not None and not pingpong and BM != 64 * consumers:
            raise ValueError("HopperGemm: BM is 64 per consumer warpgroup (%d) unless pingpong=True, got %r"
                             % (64 * consumers, BM))
        if cp_async:
            self.kernel = wgmma_cp_async.make(BN, stages, consumers, dtype)
        elif pingpong:
            self.kernel = pingpong_.make(BM or 64, BN, stages, regs or (40, 232), group, dtype)
        else:
            self.kernel = warp_specialized.make(BN, stages, consumers, regs, group, persistent, tma_store, dtype,
                                                tuple(majors), split_k, epi, stream_k)
        self.BM, self.BN = self.kernel.tile[0], self.kernel.tile[1]
        self.cp_async, self.tma_store, self.split_k, self.stream_k = cp_async, tma_store, split_k, stream_k
        self._maps = {}

    def _map(self, x, spec):
        key = (x.__cuda_array_interface__["data"][0], x.shape, x.strides, spec.atom.op, spec.atom.box, spec.dtype)
        if key not in self._maps:       # a tensor map holds the address, extents and pitch: key on them
            if len(self._maps) > 64:
                self._maps.clear()
            self._maps[key] = encode_tensor_map(x, spec)
        return self._maps[key]

    def __call__(self, a, bt, c, stream=0, splits=1, epilogue=()):
        self.prepare(a, bt, c, stream, splits, epilogue)()

    def prepare(self, a, bt, c, stream=0, splits=1, epilogue=()):
        """A zero-argument callable that computes C = A @ Bt.T on these arrays and stream (the tensor maps
        encoded and the launch prepared once). A split_k kernel runs `splits` blocks a tile, each over a run of
        K, that add their partial products into C: the call zeroes C first (one memset on the stream). A
        stream_k kernel adds the pieces of the last wave's tiles: the call zeroes their box of C first.
        `epilogue`: the run-time arguments of the kernel's Epilogue (kernels.lib.epilogue.Fused.arguments), if it
        was built with one."""
        M, K = a.shape
        N = bt.shape[0]
        grid = None
        if self.split_k:
            self.check_splits(K, splits)
            grid = (self.kernel.grid(a, bt, c), splits)     # (persistent blocks, splits)
        elif splits != 1:
            raise ValueError("HopperGemm: splits=%d needs a kernel built with split_k=True" % splits)
        if bt.shape[1] != K or c.shape != (M, N):
            raise ValueError("HopperGemm: A %s, Bt %s, C %s do not make a GEMM" % (a.shape, bt.shape, c.shape))
        if self.tma_store:      # TMA loads fill outside the matrices with zeros, TMA stores clip: any shape
            majors = self.kernel.config["majors"]
            if (operand_major(a), operand_major(bt), operand_major(c)) != tuple(majors) + (Major.K,) or not all(
                    map(tma_readable, (a, bt, c))):
                raise ValueError("HopperGemm: this kernel reads A and Bt %s-major and writes C row-major, each with "
                                 "rows of 16-byte multiples at 16-byte-aligned addresses (tma_readable); got strides "
                                 "%s, %s, %s" % ("-major and ".join(majors), a.strides, bt.strides, c.strides))
        elif M % self.BM or N % self.BN or K % self.kernel.tile[2]:
            raise ValueError("HopperGemm: A %s, Bt %s, C %s: M, N, K must be multiples of %d, %d, %d (any shape "
                             "needs tma_store=True)" % ((a.shape, bt.shape, c.shape) + self.kernel.tile))
        if self.cp_async:
            return self.kernel.prepare(a, bt, c, stream=stream)
        o = self.kernel.objects
        ma, mb = self._map(a, o.tmA), self._map(bt, o.tmB)
        if self.kernel.config.get("pingpong"):
            return self.kernel.prepare(a, bt, c, ma, mb, stream=stream)
        mc = self._map(c, o.tmC) if self.tma_store else ma
        run = self.kernel.prepare(a, bt, c, ma, mb, mc, *epilogue, grid=grid, stream=stream)
        if self.split_k:
            return _after(prepared_zero(c, stream), run)
        box = self.stream_k_box(M, N, self.kernel.grid(a, bt, c)) if self.stream_k else None
        return _after(prepared_zero(c[box[0]:, box[1]:], stream), run) if box else run

    def stream_k_box(self, M, N, grid):
        """(row, column) of C where the box of a stream-K launch's partial tiles starts (on `grid` blocks; the
        box reaches C's last row and column), or None where every tile is computed whole."""
        tiles_m, tiles_n = -(-M // self.BM), -(-N // self.BN)
        whole = tiles_m * tiles_n - tiles_m * tiles_n % grid
        if whole == tiles_m * tiles_n:
            return None
        m, n = last_tiles_box(tiles_m, tiles_n, self.kernel.config["group"], whole)
        return m * self.BM, n * self.BN

    def check_splits(self, K, splits):
        """A ValueError unless each of `splits` runs of ceil(k_tiles / splits) k-tiles (the kernel's split)
        holds at least one: a split without one would store accumulators it never wrote."""
        k_tiles = -(-K // self.kernel.tile[2])
        per_split = -(-k_tiles // max(splits, 1))
        if not 1 <= splits <= k_tiles or (splits - 1) * per_split >= k_tiles:
            raise ValueError("HopperGemm: %d splits of %d k-tiles (K = %d) leave a split without one (ceil(%d / %d) "
                             "= %d a split)" % (splits, k_tiles, K, k_tiles, splits, per_split))

    def sass_counts(self):
        """Counts of HGMMA / UTMALDG / local-memory instructions in the compiled SASS (needs nvdisasm)."""
        try:
            return sass_counts(self.kernel.numba, ("HGMMA", "UTMALDG", "UTMASTG", "LDL", "STL"))
        except Exception as e:  # noqa: BLE001  (a report, not a check: say why there is none)
            return {"error": str(e)[:200]}


def _after(first, then):
    """A callable that calls first(), then then()."""
    def call():
        first()
        then()
    return call


def make_step(name, label="", **config):
    """A step of chapter 8: HopperGemm(**config), its kernel's module and @kernel function quoted, what it needs
    of the GPU; `label`: what the step adds, where the ladder teaches it."""
    module = wgmma_cp_async if config.get("cp_async") else pingpong_ if config.get("pingpong") else warp_specialized
    needs = ("wgmma",) + (("cp.async",) if config.get("cp_async") else ("cp.async.bulk.tensor", "mbarrier.try_wait"))
    needs += ("setmaxnreg",) if config.get("regs") else ()
    return Step(name, module, quoted="gemm_" + module.__name__.rsplit(".", 1)[1],
                build=lambda s: HopperGemm(**s.config), config=config, needs=needs, label=label)


LADDER = [   # chapter 8's ladder, one idea a step
    make_step("cp.async + wgmma BN128 st4", "1. wgmma, fed by cp.async from every thread", BN=128, stages=4,
              cp_async=True),
    make_step("ws BN128 st4", "2. TMA loads on mbarriers, a producer warpgroup", BN=128, stages=4),
    make_step("ws BN256 st4 setmaxnreg group8", "3. 128 x 256 tiles, setmaxnreg, grouped raster", BN=256, stages=4,
              regs=(40, 232), group=8),
    make_step("persistent BN256 st4 group16", "4. a persistent grid", BN=256, stages=4, regs=(40, 232), group=16,
              persistent=True),
    make_step("persistent BN256 st4 group16 tma-store", "5. C out through shared memory and a TMA store", BN=256,
              stages=4, regs=(40, 232), group=16, persistent=True, tma_store=True),
    make_step("pingpong 64x256 st4 group16", "6. ping-pong consumers: one stores while the other computes", BM=64,
              BN=256, stages=4, regs=(40, 232), group=16, pingpong=True),
]

EXPLORE = [   # what `python -m kernels.hopper` also checks and times
    make_step("persistent BN256 st4 group8", BN=256, stages=4, regs=(40, 232), group=8, persistent=True),
    make_step("pingpong 128x128 st4 group16", BM=128, BN=128, stages=4, regs=(40, 232), group=16, pingpong=True),
]


def step(name):
    """The step of LADDER or EXPLORE called `name`."""
    return find(LADDER + EXPLORE, name, "kernels.hopper")


# what matmul("auto") runs on sm_90 (RESULTS_HOPPER.md; kernels.lib.wgmma reads it at each call): step 5
MATMUL_CONFIG = step("persistent BN256 st4 group16 tma-store").config


def tma_readable(x):
    """Whether a tensor map can describe the 2-D device array x (cuTensorMapEncodeTiled's rules): a unit
    stride, the other stride (the pitch between rows of the contiguous mode) a multiple of 16 bytes, and a
    16-byte-aligned address."""
    pitch = row_pitch(x, "tma_readable")
    if pitch is None:
        return False
    address = x.__cuda_array_interface__["data"][0] if hasattr(x, "__cuda_array_interface__") else 0
    return pitch % 16 == 0 and address % 16 == 0


def row_pitch(x, op="row_pitch"):
    """The bytes between consecutive rows of x's contiguous mode: strides[0] if x is K-major, strides[1] if
    MN-major (operand_major); None if neither."""
    major = operand_major(x, op)
    return None if major is None else x.strides[0 if major == Major.K else 1]


def _baseline(a, bt, reps):
    """(label, ms, C) of cuBLAS computing a @ bt.T (host arrays), fp16 -> fp32 (kernels.harness); (None, None, NumPy's
    C) where there is no cuBLAS to call."""
    from ..timing import gpu_time_ms
    if blas()[0] is None:
        return None, None, a.astype(np.float32) @ bt.astype(np.float32).T
    label, run = cublas_baseline(a, bt.T)
    return label, gpu_time_ms(run, reps), run()


def time_vs_cublas(gemms, size=4096, reps=20):
    """Time each kernel of `gemms` (a dict name -> kernel called as kernel(a, bt, c), e.g. a HopperGemm; or
    one kernel) at size^3 against cuBLAS in the same process, on the same Gaussian inputs, as GPU time
    (kernels.harness.check_and_time: each kernel's C is poisoned with NaN and checked against cuBLAS's first).
    Returns a Markdown table (device, date) for a notebook."""
    import datetime
    from numba import cuda
    if not isinstance(gemms, dict):
        gemms = {"this kernel": gemms}
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((size, size)) * 0.5).astype(np.float16)
    bt = (rng.standard_normal((size, size)) * 0.5).astype(np.float16)
    da, dbt = cuda.to_device(a), cuda.to_device(bt)
    flops = 2.0 * size ** 3
    lib, base, ref = _baseline(a, bt, reps)
    name = cuda.get_current_device().name
    name = name.decode() if isinstance(name, bytes) else name
    lines = ["Measured %s on %s, %d^3, GPU time, median of %d" % (datetime.date.today(), name, size, reps),
             "", "| kernel | ms | TFLOP/s | / cuBLAS |", "|---|---|---|---|"]
    if base is not None:
        lines.append("| %s | %.3f | %.1f | 1.00 |" % (lib, base, flops / base / 1e9))
    for label, gemm in gemms.items():
        dc = cuda.device_array((size, size), np.float32)
        ms, _ = check_and_time(lambda: gemm(da, dbt, dc), dc, ref, "time_vs_cublas: " + label, reps=reps)
        lines.append("| %s | %.3f | %.1f | %s |" % (label, ms, flops / ms / 1e9, "%.2f" % (base / ms) if base else "-"))
    if base is None:
        lines.append("\n(no torch or CuPy here: no cuBLAS to compare with)")
    return "\n".join(lines)


def main(argv=None, steps=None):
    """Check every step of LADDER + EXPLORE and every variant of kernels.hopper.variants (those whose name
    contains an argument of `argv`, if any; or the Steps `steps` and no variant) on this GPU. A step: NumPy
    reference, outputs poisoned with NaN first, two shapes, and shapes that are not multiples of the tile for
    the TMA-store kernel (kernels.harness.check), then checked against cuBLAS and timed at 4096^3 in the same
    process; a table. A variant: its shapes against NumPy, a PASS or FAIL line each (variants.check_all).
    Returns [(name, passed, ms, SASS counts)] of the steps."""
    import kernels
    kernels.setup()
    from .variants import VARIANTS, check_all
    chosen = [v for v in VARIANTS if not steps and (not argv or any(a in v.name for a in argv))]
    steps = steps or [s for s in LADDER + EXPLORE if not argv or any(a in s.name for a in argv)]
    if not steps and not chosen:
        raise SystemExit("kernels.hopper: no step or variant is named by %s; the steps: %s; the variants: %s" % (
            argv, "; ".join(s.name for s in LADDER + EXPLORE), "; ".join(v.name for v in VARIANTS)))
    rows = _check_steps(steps) if steps else []
    if chosen:
        results = check_all(chosen)
        print("\n| variant | worst error | result |\n|---|---|---|")
        for name, passed, worst in results:
            print("| %s | %.1e | %s |" % (name, worst, "PASS" if passed else "FAIL"))
    return rows


def _check_steps(steps):
    """main's check and timing of the Steps `steps`."""
    from numba import cuda
    rng = np.random.default_rng(7)
    S = 4096
    flops = 2.0 * S ** 3
    a = (rng.standard_normal((S, S)) * 0.5).astype(np.float16)
    bt = (rng.standard_normal((S, S)) * 0.5).astype(np.float16)
    da, dbt = cuda.to_device(a), cuda.to_device(bt)
    lib, base, ref_big = _baseline(a, bt, 30)
    rows = []
    for s in steps:
        g, ms = s.kernel, float("nan")
        ragged = [(1000, 1000, 1000), (129, 260, 72), (1, 4, 8)] if s.config.get("tma_store") else []
        try:
            for (M, N, K) in [(256, 512, 320), (384, 1024, 192)] + ragged:
                xa = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
                xb = (rng.standard_normal((N, K)) * 0.5).astype(np.float16)
                x, y, dc = cuda.to_device(xa), cuda.to_device(xb), cuda.device_array((M, N), np.float32)
                err = check(lambda: g(x, y, dc), dc, xa.astype(np.float32) @ xb.astype(np.float32).T,
                            "%s at %s" % (s.name, (M, N, K)), tol=1e-5)
                print("%s %s: rel err %.2e" % (s.name, (M, N, K), err), flush=True)
            dc = cuda.device_array((S, S), np.float32)
            ms, err = check_and_time(lambda: g(da, dbt, dc), dc, ref_big, "%s at %d^3" % (s.name, S), tol=1e-5, reps=30)
            print("%s %s: rel err %.2e" % (s.name, (S, S, S), err), flush=True)
            ok = True
        except Exception as e:  # noqa: BLE001  (report the step as failed and go on)
            print("%s: FAILED: %s" % (s.name, str(e)[:1500]), flush=True)
            ok = False
        rows.append((s.name, ok, ms, g.sass_counts() if ok else {}))
        print("%s: %s, %.3f ms, %.1f TFLOP/s, SASS %s" % (s.name, "PASS" if ok else "FAIL", ms, flops / ms / 1e9,
                                                          rows[-1][3]), flush=True)
    print("\n| kernel (4096^3, fp16 in, fp32 accumulate) | ms | TFLOP/s | / cuBLAS |")
    print("|---|---|---|---|")
    if base:
        print("| %s | %.3f | %.1f | 1.00 |" % (lib, base, flops / base / 1e9))
    for name, ok, ms, sass in rows:
        print("| %s | %s | %s | %s |" % (name, "%.3f" % ms if ok else "FAIL", "%.1f" % (flops / ms / 1e9) if ok else "-",
                                        "%.2f" % (base / ms) if ok and base else "-"))
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
