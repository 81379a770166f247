"""The FP8 GEMM (kernels.hopper.fp8, through matmul and alone) on a Hopper GPU: a fuzz, then speed and accuracy
against cuBLAS (torch._scaled_mm) in one process, on the same data.

1. Fuzz: matmul with e4m3 / e5m2 inputs (PyTorch float8 tensors), per-tensor and blockwise scales, float32 /
   bfloat16 / float16 out, row- and column-major operands, shapes at and off the tiles; every output poisoned
   with NaN first and compared with a float64 product of the dequantized inputs.
2. Speed at 4096^3 and 8192^3, e4m3, Gaussian data scaled into range per tensor: cuBLAS (torch._scaled_mm,
   per-tensor scales, bf16 out; also with use_fast_accum, cuBLASLt's FAST_ACCUM mode, which does not promote)
   against the kernel with promotion every k-tile (128 of K) and every 4, without promotion (also with 128 x 256
   tiles), and with blockwise scales (1 x 128 / 128 x 128, promotion every k-tile, on the same values quantized
   blockwise); GPU time (kernels.timing.gpu_time_ms) in interleaved rounds.
3. Accuracy (kernels.hopper.fp8_accuracy.errors, at the smallest size, float32 out, where the accumulation's
   precision is not hidden by bf16's rounding): each one's relative error (Frobenius) against the float64
   product of its own dequantized inputs, cuBLAS's on the same codes and scales.
4. The record: fp8_records.json in --out (default $OUT), {"fp8": {run, speed, accuracy}}
   (cutelite.teach.records.dump): the entry chapter 11 reads from kernels/hopper/records.json (merge it there).

    python benchmarks/gemm/fp8_bench.py [--sizes 4096 8192] [--rounds 2] [--out DIR]
"""
import argparse
import datetime
import os

import numpy as np

import kernels

kernels.setup()
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels.cutejit import encode_tensor_map  # noqa: E402
from kernels.harness import check, registers, rel_err, sass_counts, time_rounds  # noqa: E402
from kernels.hopper import fp8  # noqa: E402
from kernels.lib import matmul  # noqa: E402
from kernels.lib.fp8 import CONFIG as FP8_FAMILY_CONFIG, FP8 as FP8_FAMILY, OUT_DTYPES  # noqa: E402
from cutelite.numeric import Float8E4M3FN  # noqa: E402
from cutelite.teach import records  # noqa: E402
from kernels.hopper import fp8_accuracy  # noqa: E402

FP8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
LARGEST = {"e4m3": 448.0, "e5m2": 57344.0}
OUT = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def quantize(x, fmt, block=None):
    """(x in 8-bit floats, its float32 scales): per tensor (block None: a (1, 1) scale) or per (bm, bk) block
    (scales (ceil(M / bm), ceil(K / bk))), each block's largest magnitude mapped to the format's largest."""
    if block is None:
        s = (x.abs().max() / LARGEST[fmt]).clamp(min=1e-12).reshape(1, 1)
        return (x / s).to(FP8[fmt]), s.float()
    bm, bk = block
    M, K = x.shape
    pad = torch.zeros((-(-M // bm) * bm, -(-K // bk) * bk), device=x.device, dtype=x.dtype)
    pad[:M, :K] = x
    blocks = pad.reshape(pad.shape[0] // bm, bm, pad.shape[1] // bk, bk)
    s = (blocks.abs().amax(dim=(1, 3)) / LARGEST[fmt]).clamp(min=1e-12)
    q = (blocks / s[:, None, :, None]).reshape(pad.shape)[:M, :K]
    return q.to(FP8[fmt]), s.float()


def dequantize(q, s, block=None):
    """float64 values of q times its scales."""
    x = q.double()
    if block is None:
        return x * s.double().item()
    full = s.double().repeat_interleave(block[0], 0).repeat_interleave(block[1], 1)
    return x * full[:x.shape[0], :x.shape[1]]


def fuzz(rng):
    cases = [((128, 128, 128), "e4m3", "tensor", "bfloat16", "KK"), ((1, 16, 16), "e4m3", "tensor", "float32", "KK"),
             ((129, 260, 200), "e5m2", "tensor", "float16", "MK"), ((1000, 1000, 1000), "e4m3", "tensor", "float32",
             "KM"), ((777, 1333, 2049), "e4m3", "blockwise", "bfloat16", "KK"), ((64, 4096, 4096), "e4m3",
             "blockwise", "bfloat16", "MM"), ((384, 520, 1040), "e4m3", "blockwise", "bfloat16", "KM"),
             ((2048, 2048, 2048), "e4m3", "tensor", "bfloat16", "KK")]      # four kernels: compiles cost 10-20 s each
    print("| fuzz: M x N x K | format | scales | out | A, B major | rel err |\n|---|---|---|---|---|---|")
    for (M, N, K), fmt, scales, out, majors in cases:
        x = torch.from_numpy(rng.standard_normal((M, K))).cuda().float()
        y = torch.from_numpy(rng.standard_normal((K, N))).cuda().float()
        blocks = (None, None) if scales == "tensor" else ((1, 128), (128, 128))
        a, sa = quantize(x, fmt, blocks[0])
        bt, sbt = quantize(y.T.contiguous(), fmt, blocks[1])            # B's blocks: 128 x 128 of Bt (N, K)
        want = dequantize(a, sa, blocks[0]) @ dequantize(bt, sbt, blocks[1]).T
        if majors[0] == "M":
            a = a.T.contiguous().T                                      # column-major A: a transposing copy
        b = bt.T if majors[1] == "K" else bt.T.contiguous()            # B (K, N): K-major, or row-major
        sb = sbt.T.contiguous()                                         # matmul's B scales: (K blocks, N blocks)
        C = torch.empty((M, N), device="cuda", dtype=OUT[out])
        err = check(lambda: matmul(a, b, out=C, scale_a=sa, scale_b=sb), C, want,
                    "matmul fp8 %s %s %s %s %s" % ((M, N, K), fmt, scales, out, majors), tol=2e-2)
        print("| %d x %d x %d | %s | %s | %s | %s | %.2e |" % (M, N, K, fmt, scales, out, majors, err), flush=True)


_BUILT = {}


def ours(a, bt, C, sa, sb, **config):
    """The launch of kernels.hopper.fp8 built with `config` (once per config and output type) on torch tensors:
    A (M, K), Bt (N, K) e4m3, C, and the scales as the kernel reads them (MN-major (blocks along MN, blocks
    along K)). promote=4 and blockwise are matmul's configurations (kernels.lib.fp8.CONFIG), built by it."""
    out = str(C.dtype).split(".")[1]
    key = (out,) + tuple(sorted(config.items()))
    if key not in _BUILT:
        if config.get("promote") == FP8_FAMILY_CONFIG["promote"] or config.get("scales") == "blockwise":
            dtypes = {t.name: t for t in OUT_DTYPES}
            _BUILT[key] = FP8_FAMILY.kernel(Float8E4M3FN, dtypes[out], config.get("scales", "tensor"))[0]
        else:
            _BUILT[key] = fp8.make(out=out, **dict(FP8_FAMILY_CONFIG, **config))
    k = _BUILT[key]
    u8 = [cuda.as_cuda_array(x.view(torch.uint8)) for x in (a, bt)]
    c = cuda.as_cuda_array(C.view(torch.int16)).view(np.uint16) if C.dtype == torch.bfloat16 else cuda.as_cuda_array(C)
    s = [cuda.as_cuda_array(x) for x in (sa, sb)]
    o = k.objects
    return k.prepare(*u8, c, *s, encode_tensor_map(u8[0], o.tmA), encode_tensor_map(u8[1], o.tmB))


def _error(run, C, ref, what):
    """The relative error of run()'s result (cuBLAS's: returned; ours: in C, poisoned first), NaN where it fails."""
    try:
        return rel_err(run(), ref) if C is None else check(run, C, ref, what, tol=2e-2)
    except RuntimeError as e:       # a cuBLAS configuration torch does not offer: say so, go on
        print("%s: %s" % (what, str(e)[:200]))
        return float("nan")


def speed(S, rng, rounds):
    """{name: best GPU ms} and {name: relative error, bf16 out} of every kernel at S^3 on the same e4m3 data."""
    x = torch.from_numpy(rng.standard_normal((S, S))).cuda().float()
    y = torch.from_numpy(rng.standard_normal((S, S))).cuda().float()
    a, sa = quantize(x, "e4m3")
    bt, sb = quantize(y, "e4m3")
    ab, sab = quantize(x, "e4m3", (1, 128))
    bb, sbb = quantize(y, "e4m3", (128, 128))
    want = dequantize(a, sa) @ dequantize(bt, sb).T
    want_b = dequantize(ab, sab, (1, 128)) @ dequantize(bb, sbb, (128, 128)).T
    mn = lambda s: s.T.contiguous().T                                   # noqa: E731  (MN-major)
    per_tensor, blockwise = (a, bt, sa, sb, want), (ab, bb, mn(sab), mn(sbb), want_b)
    mine = [("fp8 promote 1", per_tensor, dict(promote=1)), ("fp8 promote 4", per_tensor, dict(promote=4)),
            ("fp8 no promotion", per_tensor, dict(promote=0)),
            ("fp8 BN256 no promotion", per_tensor, dict(BN=256, promote=0)),
            ("fp8 blockwise", blockwise, dict(scales="blockwise"))]

    def cublas(fast):
        return lambda: torch._scaled_mm(a, bt.T, scale_a=sa.reshape(()), scale_b=sb.reshape(()),
                                        out_dtype=torch.bfloat16, use_fast_accum=fast)
    named = {"cuBLAS _scaled_mm": (cublas(False), None, want), "cuBLAS _scaled_mm fast accum": (cublas(True), None, want)}
    for label, (x_, w, s_x, s_w, ref), config in mine:
        C = torch.empty((S, S), device="cuda", dtype=torch.bfloat16)
        named[label] = (ours(x_, w, C, s_x, s_w, **config), C, ref)
    runs, errs = {}, {}
    for name, (run, C_, ref) in named.items():
        errs[name] = _error(run, C_, ref, name + " at %d^3" % S)
        if errs[name] == errs[name]:
            runs[name] = run
    times = time_rounds(runs, rounds=rounds, reps=20)
    return {name: min(t) for name, t in times.items()}, errs


def accuracy(S, rng):
    """fp8_accuracy.errors at S^3, float32 out (the accumulation's error, not hidden by bf16's rounding), with
    cuBLAS (torch._scaled_mm, with and without use_fast_accum, cuBLASLt's mode that does not promote) on the same
    per-tensor codes and scales."""
    def cublas(fast):
        def f(a, bt, sa, sb):
            t = [torch.from_numpy(v).cuda().view(FP8["e4m3"]) for v in (a, bt)]
            s = [torch.tensor(float(v.reshape(-1)[0]), device="cuda") for v in (sa, sb)]
            return torch._scaled_mm(t[0], t[1].T, scale_a=s[0], scale_b=s[1], out_dtype=torch.float32,
                                    use_fast_accum=fast).double().cpu().numpy()
        return f
    x, y = rng.standard_normal((S, S)), rng.standard_normal((S, S))
    return fp8_accuracy.errors(x, y, others={"cuBLAS _scaled_mm": cublas(False),
                                             "cuBLAS _scaled_mm fast accum": cublas(True)})


def record(rows, errs, S_acc, device, rounds, out):
    """The run as a record (cutelite.teach.records.dump), for chapter 11: speed and accuracy."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "fp8_records.json")
    records.dump({"fp8": {
        "about": "FP8 e4m3 GEMM on Hopper (benchmarks/gemm/fp8_bench.py). speed: {size: {kernel: [ms, TFLOP/s, ratio "
                 "to cuBLAS _scaled_mm]}}, bf16 out, GPU time, best of the rounds; accuracy: {kernel: relative "
                 "(Frobenius) error against float64 of its dequantized inputs}, float32 out, at accuracy_size^3.",
        "run": {"date": str(datetime.date.today()), "device": device, "rounds": rounds,
                "command": "python benchmarks/gemm/fp8_bench.py --sizes " + " ".join(str(r) for r in
                                                                                    sorted({r[0] for r in rows}))},
        "speed": {S: {k: [round(t, 4), round(tf, 1), round(ratio, 3)] for S_, k, t, tf, ratio, _ in rows if S_ == S}
                  for S in sorted({r[0] for r in rows})},
        "accuracy_size": S_acc, "accuracy": {k: float("%.3e" % e) for k, e in errs.items()}}}, path)
    print("wrote", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[4096, 8192])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=os.environ.get("OUT", "."), help="where fp8_records.json goes")
    args = ap.parse_args()
    rng = np.random.default_rng(31)
    fuzz(rng)
    rows = []
    for S in args.sizes:
        ms, err = speed(S, rng, args.rounds)
        base = ms["cuBLAS _scaled_mm"]
        rows += [(S, name, t, 2.0 * S ** 3 / t / 1e9, base / t, err[name]) for name, t in ms.items()]
    S_acc = min(args.sizes or [4096])
    errs = accuracy(S_acc, rng)
    for key, k in _BUILT.items():        # what ptxas made of each kernel (a report: nvdisasm may be missing)
        try:
            print("%s: %d registers, SASS %s" % (", ".join(map(str, key)), registers(k.numba),
                                                 sass_counts(k.numba, ("QGMMA", "UTMALDG", "LDL", "STL", "BAR"))))
        except Exception as e:  # noqa: BLE001
            print("%s: no SASS (%s)" % (key, str(e)[:100]))
    name = cuda.get_current_device().name
    name = name.decode() if isinstance(name, bytes) else name
    print("\nMeasured %s on %s, e4m3, GPU time (best of %d rounds); error: relative (Frobenius) to float64 of the "
          "dequantized inputs" % (datetime.date.today(), name, args.rounds))
    print("\n| %d^3, float32 out | rel err |\n|---|---|" % S_acc)
    for k, e in errs.items():
        print("| %s | %.2e |" % (k, e))
    print("\n| size | kernel (bf16 out) | ms | TFLOP/s | / cuBLAS | err bf16 out |")
    print("|---|---|---|---|---|---|")
    for S, k, t, tf, ratio, e in rows:
        print("| %d^3 | %s | %.3f | %.0f | %.2f | %.2e |" % (S, k, t, tf, ratio, e))
    record(rows, errs, S_acc, name, args.rounds, args.out)


if __name__ == "__main__":
    main()
