"""Issue 31's probe: is the FP8 kernel wrong at 8192^3 with promotion every 4 k-tiles, or was the benchmark?

1. The kernel (kernels.hopper.fp8 in matmul's configuration, bf16 out) with promotion every 0, 1, 2 and 4
   k-tiles, at M = N = 4096, 6144, 8192 and K = 8192 or 8192 + 3 x 128 (67 k-tiles: 67 % 4 leaves a promotion
   for the tail, 67 % 6 stages = 1), e4m3 Gaussian data scaled per tensor; each output poisoned with NaN and
   compared with the float64 product of the dequantized inputs (relative, Frobenius; PASS under 2e-2).
2. The benchmark's failure replayed at 4096^3, promote 4: a launch prepared on tensor maps that are then dropped
   (the benchmark's ours() did so), Numba's pending deallocations flushed (it frees dropped arrays in batches),
   and tensor maps of another pair of operands made after it. "bare": the launch as Kernel.prepare returned it
   before issue 31's fix (runtime.prepared_launch, which passes addresses and holds no array); "prepare": as it
   returns it now (holding its arrays). Where a later map takes a dropped map's memory, the bare launch reads the
   other operands: garbage.

    python benchmarks/gemm/fp8_probe.py            # about 2 minutes on an H100 or H200, 4 kernels to compile
"""
import gc
import time

import numpy as np

import kernels

kernels.setup()
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels.cutejit import encode_tensor_map  # noqa: E402
from kernels.hopper import fp8  # noqa: E402
from kernels.lib.fp8 import CONFIG  # noqa: E402
from kernels.runtime import prepared_launch  # noqa: E402

PROMOTE = (0, 1, 2, 4)
SIZES = (4096, 6144, 8192)
KS = (8192, 8192 + 3 * 128)
TOL = 2e-2


def operands(M, N, K, seed):
    """(A (M, K), Bt (N, K) e4m3, their float32 (1, 1) scales): Gaussian, each tensor's largest magnitude at 448."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    out = []
    for rows in (M, N):
        x = torch.randn((rows, K), generator=g, device="cuda")
        s = (x.abs().max() / 448.0).reshape(1, 1)
        out += [(x / s).to(torch.float8_e4m3fn), s.float()]
    a, sa, bt, sb = out
    return a, bt, sa, sb


def reference(a, bt, sa, sb):
    return (a.double() * sa.double()) @ (bt.double() * sb.double()).T


def launch_args(k, a, bt, C, sa, sb):
    """The kernel's arguments on these tensors: A, Bt as bytes, C (bf16) as uint16, the scales, two tensor maps."""
    u8 = [cuda.as_cuda_array(x.view(torch.uint8)) for x in (a, bt)]
    c = cuda.as_cuda_array(C.view(torch.int16)).view(np.uint16)
    o = k.objects
    return (*u8, c, *(cuda.as_cuda_array(s) for s in (sa, sb)),
            encode_tensor_map(u8[0], o.tmA), encode_tensor_map(u8[1], o.tmB))


def error(run, C, want):
    """run() into C poisoned with NaN: the relative error against want (inf where an output is not finite)."""
    C.fill_(float("nan"))
    run()
    torch.cuda.synchronize()
    got = C.double()
    if not torch.isfinite(got).all():
        return float("inf")
    return ((got - want).norm() / want.norm()).item()


def row(what, err, extra=""):
    verdict = "PASS" if err < TOL else "FAIL"
    print("| %s | %s | %.2e |%s" % (what, verdict, err, extra), flush=True)
    return verdict


def sweep(built):
    print("| M = N, K, promote | result | rel err |\n|---|---|---|")
    verdicts = []
    for S in SIZES:
        for K in KS:
            a, bt, sa, sb = operands(S, S, K, seed=S + K)
            want = reference(a, bt, sa, sb)
            C = torch.empty((S, S), device="cuda", dtype=torch.bfloat16)
            for p in PROMOTE:
                k = built[p]
                run = k.prepare(*launch_args(k, a, bt, C, sa, sb))
                verdicts.append(row("%d, %d, %d" % (S, K, p), error(run, C, want)))
            del want, C
            torch.cuda.empty_cache()
    return verdicts


def replay(k, how):
    """A launch prepared (`how`: "bare" or "prepare") on maps then dropped, later maps of other operands made:
    (its error, whether a later map took a dropped map's memory)."""
    S = 4096
    a, bt, sa, sb = operands(S, S, S, seed=1)
    want = reference(a, bt, sa, sb)
    C = torch.empty((S, S), device="cuda", dtype=torch.bfloat16)
    args = launch_args(k, a, bt, C, sa, sb)
    dropped = {m.__cuda_array_interface__["data"][0] for m in args[-2:]}
    if how == "bare":
        run = prepared_launch(k.numba, args, k.grid(*args), k.threads, k.smem_bytes)
    else:
        run = k.prepare(*args)
    del args
    gc.collect()
    cuda.current_context().memory_manager.deallocations.clear()     # what Numba does once 10 arrays are pending
    others = operands(S, S, S, seed=2)
    later = [launch_args(k, others[0], others[1], C, others[2], others[3])[-2:] for _ in range(16)]
    taken = any(m.__cuda_array_interface__["data"][0] in dropped for maps in later for m in maps)
    return error(run, C, want), taken


def main():
    start = time.time()
    name = cuda.get_current_device().name
    print("FP8 probe on %s, matmul's configuration %s, bf16 out\n" % (name.decode() if isinstance(name, bytes)
                                                                    else name, CONFIG))
    built = {p: fp8.make(out="bfloat16", **dict(CONFIG, promote=p)) for p in PROMOTE}
    verdicts = sweep(built)
    print("\n| replay at 4096^3, promote 4 | result | rel err | a later map took a dropped map's memory |")
    print("|---|---|---|---|")
    for how in ("prepare", "bare"):         # bare last: its kernel may read a map from freed memory
        err, taken = replay(built[4], how)
        row(how, err, " %s |" % ("yes" if taken else "no"))
    print("\nsweep: %d of %d PASS; %.0f s" % (verdicts.count("PASS"), len(verdicts), time.time() - start))


if __name__ == "__main__":
    main()
