"""What matmul's staging copies cost on shapes whose rows the TMA cannot read (issue 30: 777 x 1333 x 2049 ran at
0.34 of cuBLAS), before and after they became prepared launches, in one process on an H100 or H200.

For each shape, fp16 A and B row-major PyTorch tensors, fp32 `out`: matmul's repeated call (the prepared call
it keeps) with its copies launched through Numba's dispatcher, as before (kernels.lib.staging.prepare2
swapped for Numba's launch while that call is prepared), and as prepared launches (one driver call each),
into two `out` tensors, each checked against cuBLAS with its output poisoned first. Then the kernels one
repeated call launches (by Numba's dispatcher, by the driver; split-K's memset of C not counted), GPU time of
back-to-back calls (kernels.harness.time_rounds: interleaved rounds, the host's work per call in the queue)
of cuBLAS and both, and the host's microseconds per call (200 calls queued, the GPU not waited for).

    PYTHONPATH=. python3 benchmarks/gemm/staging_replay.py        # about 4 minutes (3 kernel builds)
"""
import statistics
import time

import kernels

kernels.setup()
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels import runtime  # noqa: E402
from kernels.harness import check, cublas_baseline, time_rounds  # noqa: E402
from kernels.timing import host_us  # noqa: E402
from kernels.lib import matmul, staging  # noqa: E402

# each needs copies: A's rows (2K bytes) or B's (2N bytes) or C's (4N bytes) are no 16-byte multiples;
# their tiles (kernels.lib.shapes): 128 x 128, 128 x 128 split-K, 64 x 128 split-K (three builds)
SHAPES = [(777, 1333, 2049), (333, 4097, 999), (2049, 2047, 4095), (129, 4097, 4097), (100, 777, 12289),
          (17, 5000, 3333)]


LAUNCHED = []           # "numba" or "driver" for each kernel launched since it was last emptied
_prepared_launch = runtime.prepared_launch


def numba_launch(kernel, shape, *args, stream=0):
    """The copies as they were launched before: Numba's dispatcher on every call."""
    def go():
        LAUNCHED.append("numba")
        staging.launch2(kernel, shape, *args, stream=stream)
    return go


def counted_launch(*args, **kwargs):
    """runtime.prepared_launch, its launches counted in LAUNCHED."""
    go = _prepared_launch(*args, **kwargs)
    if go is None:
        return None

    def launch():
        LAUNCHED.append("driver")
        go()
    return launch


def launches(call):
    """How many kernels one call() launches: (by Numba's dispatcher, by the driver)."""
    del LAUNCHED[:]
    call()
    return LAUNCHED.count("numba"), LAUNCHED.count("driver")


def main():
    torch.manual_seed(0)
    runtime.prepared_launch = counted_launch     # the staging copies' and the GEMM's (Kernel.prepare) launches
    rows = []
    for M, N, K in SHAPES:
        a = torch.randn(M, K, device="cuda").half()
        b = torch.randn(K, N, device="cuda").half()
        before, after = torch.empty(M, N, device="cuda"), torch.empty(M, N, device="cuda")
        ref = cublas_baseline(a, b)[1]()
        prepare2 = staging.prepare2
        staging.prepare2 = numba_launch          # the call into `before` is prepared with Numba's launches
        try:
            err_before = check(lambda: matmul(a, b, out=before), before, ref, "Numba copies %dx%dx%d" % (M, N, K))
        finally:
            staging.prepare2 = prepare2
        err_after = check(lambda: matmul(a, b, out=after), after, ref, "prepared copies %dx%dx%d" % (M, N, K))
        calls = {"cuBLAS": cublas_baseline(a, b, out=torch.empty(M, N, device="cuda"))[1],
                 "before": lambda: matmul(a, b, out=before), "after": lambda: matmul(a, b, out=after)}
        counts = {k: launches(calls[k]) for k in ("before", "after")}
        t = time_rounds(calls, 3, 20)
        ms = {k: statistics.median(v) for k, v in t.items()}
        ratio = {k: statistics.median(cu / x for cu, x in zip(t["cuBLAS"], t[k])) for k in ("before", "after")}
        us = {k: host_us(calls[k]) for k in ("cuBLAS", "before", "after")}
        cells = (M, N, K) + counts["before"] + counts["after"] + (
            ms["cuBLAS"], ms["before"], ms["after"], ratio["before"], ratio["after"], us["cuBLAS"], us["before"],
            us["after"], max(err_before, err_after))
        rows.append("| %dx%dx%d | %d + %d | %d + %d | %.4f | %.4f | %.4f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1e |"
                    % cells)
        print(rows[-1], flush=True)
    print("\n%s, %s, fp16 row-major in, fp32 out; GPU time of back-to-back calls (median of 3 rounds); host us "
          "per call; before: the staging copies launched by Numba, after: prepared launches"
          % (time.strftime("%Y-%m-%d"), torch.cuda.get_device_name()))
    print("\n| M x N x K | before: launches (Numba + driver) | after: launches | cuBLAS ms | before ms | after ms "
          "| before / cuBLAS | after / cuBLAS | cuBLAS host us | before host us | after host us | rel. err |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
