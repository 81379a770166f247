"""The Hopper attention kernel on the GPU: correctness, then speed against PyTorch's SDPA in the same process.

    python -m kernels.attention.check_hopper [--builds plain,pingpong,pingpong+overlap] [--cases 24]
                                             [--dtypes float16,bfloat16] [--timeline PATH] [--no-fuzz] [--no-speed]

Each build of fa3_wgmma (BUILDS: the plain kernel, the ping-pong of its two consumers, the intra-warpgroup
overlap, both) is fuzzed and timed; every build orders its causal tiles longest first (the grid's first blocks
take the last query tiles).
1. Fuzz: random shapes (S_q, S_k not multiples of any tile, S_q != S_k, both masks, grouped heads, both
   layouts, D = 64 and 128, fp16 and bf16), Gaussian q, k, v; O and LSE poisoned with NaN before the call,
   compared element-wise with kernels/attention/reference.py in float32 (|O - ref| <= 2e-2 fp16, 4e-2 bf16
   (P is rounded to the inputs' type); |LSE - ref| <= 1e-2; rows that see no key: O = 0, LSE = -inf).
2. Speed (fp16, Gaussian, GPU time by kernels.timing.gpu_time_ms): B=4, H=16, D=128, S=4096 and B=2, S=8192,
   causal and not; B=4, H=32, D=64, S=4096; against SDPA with the cuDNN and the flash backend pinned. TFLOP/s
   counts 4 B H S^2 D, half with the causal mask. A table last: each build's TFLOP/s, the best build's ratios.
3. Timeline: the plain and the ping-pong + overlap builds with trace, B=4, H=16, D=128, S=2048, not causal, the
   first 2 blocks' phases (kernels.attention.timeline.record) written as JSON to PATH (default
   kernels/attention/timeline.json) for chapter 10. The stamps add a few instructions a phase.
"""

import argparse
import json
import os
import sys

import numpy as np
from numba import cuda

import kernels

kernels.setup()

import torch  # noqa: E402
import torch.nn.functional as TF  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from kernels.attention import timeline  # noqa: E402
from kernels.attention.fa3_wgmma import prepare  # noqa: E402
from kernels.attention.reference import reference  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402

TOL = {torch.float16: 2e-2, torch.bfloat16: 4e-2}
LSE_TOL = 1e-2
BUILDS = {"plain": {}, "pingpong": dict(pingpong=True), "overlap": dict(overlap=True),
          "pingpong+overlap": dict(pingpong=True, overlap=True)}
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _inputs(B, S_q, S_k, H, H_kv, D, dtype, layout, gen):
    def one(S, heads):
        shape = (B, S, heads, D) if layout == "BSHD" else (B, heads, S, D)
        return torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(dtype)
    return one(S_q, H), one(S_k, H_kv), one(S_k, H_kv)


def fuzz(cases=24, seed=0, build="plain", dtypes=("float16", "bfloat16")):
    """Random shapes through one build of the kernel; every failure printed; the number of failures returned.
    dtypes: the types drawn (each type, D and mask is a build of its own: a numba compile)."""
    rng = np.random.default_rng(seed)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    fails = 0
    for i in range(cases):
        D = int(rng.choice([64, 128]))
        dtype = DTYPES[dtypes[0] if i % 4 or len(dtypes) == 1 else dtypes[1]]
        causal = bool(i % 2)
        layout = "BSHD" if i % 3 else "BHSD"
        H_kv = int(rng.choice([1, 2]))
        H = H_kv * int(rng.choice([1, 2]))
        B = int(rng.integers(1, 3))
        S_q, S_k = (int(x) for x in rng.integers(1, 400, size=2))
        q, k, v = _inputs(B, S_q, S_k, H, H_kv, D, dtype, layout, gen)
        out = torch.full_like(q, float("nan"))
        lse = torch.full((B, H, S_q), float("nan"), device="cuda")
        prepare(q, k, v, out, lse, causal, None, layout, **BUILDS[build])()
        torch.cuda.synchronize()
        ro, rl = reference(q.float().cpu().numpy(), k.float().cpu().numpy(), v.float().cpu().numpy(), causal=causal,
                           layout=layout)
        o, l = out.float().cpu().numpy(), lse.cpu().numpy()
        err_o = np.nanmax(np.abs(o - ro)) if not np.isnan(o).any() else float("nan")
        both_inf = np.isneginf(l) & np.isneginf(rl)
        err_l = np.max(np.where(both_inf, 0, np.abs(np.where(both_inf, 0, l) - np.where(both_inf, 0, rl))),
                       initial=0) if not np.isnan(l).any() else float("nan")
        ok = err_o <= TOL[dtype] and err_l <= LSE_TOL
        fails += not ok
        print("%s %s case %2d: B %d S_q %4d S_k %4d H %d/%d D %3d %s %s %s: |dO| %.2e |dLSE| %.2e" % (
            "PASS" if ok else "FAIL", build, i, B, S_q, S_k, H, H_kv, D, str(dtype)[6:], "causal" if causal else "full",
            layout, err_o, err_l), flush=True)
    return fails


def _sdpa(backend):
    def run(q, k, v, causal):
        with sdpa_kernel([backend]):
            return TF.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                   is_causal=causal)
    return run


def speed(builds=("plain",)):
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(1)
    for B, H, D, S in ((4, 16, 128, 4096), (2, 16, 128, 8192), (4, 32, 64, 4096)):
        for causal in (False, True):
            q, k, v = _inputs(B, S, S, H, H, D, torch.float16, "BSHD", gen)
            flops = 4 * B * H * S * S * D / (2 if causal else 1)
            out = torch.empty_like(q)
            lse = torch.empty((B, H, S), device="cuda")
            tf = {}
            for build in builds:
                go = prepare(q, k, v, out, lse, causal, **BUILDS[build])
                tf[build] = flops / gpu_time_ms(go) / 1e9
            for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
                try:
                    fn = _sdpa(backend)
                    tf[name] = flops / gpu_time_ms(lambda: fn(q, k, v, causal)) / 1e9
                except RuntimeError as e:
                    print("%s refused: %s" % (name, str(e)[:100]))
                    tf[name] = float("nan")
            rows.append((B, H, D, S, "causal" if causal else "full", tf))
            print(rows[-1], flush=True)
    print("\n| B | H | D | S | mask | %s | cuDNN | flash | best / cuDNN | best / flash |" % " | ".join(builds))
    print("|---|---|---|---|---|%s---|---|---|---|" % ("---|" * len(builds)))
    for B, H, D, S, mask, tf in rows:
        best = max(tf[b] for b in builds)
        print("| %d | %d | %d | %d | %s | %s | %.0f | %.0f | %.2f | %.2f |" % (
            B, H, D, S, mask, " | ".join("%.0f" % tf[b] for b in builds), tf["cudnn"], tf["flash"],
            best / tf["cudnn"], best / tf["flash"]))


def record_timeline(path, builds=("plain", "pingpong+overlap"), ctas=2):
    """The first `ctas` blocks' recorded phases of each build (B=4, H=16, D=128, S=2048, fp16, not causal) as
    JSON: {"device", "shape", "builds": {build: [records]}} (kernels.attention.timeline.record)."""
    B, H, D, S = 4, 16, 128, 2048
    gen = torch.Generator(device="cuda").manual_seed(2)
    q, k, v = _inputs(B, S, S, H, H, D, torch.float16, "BSHD", gen)
    out = torch.empty_like(q)
    lse = torch.empty((B, H, S), device="cuda")
    data = {"device": torch.cuda.get_device_name(), "shape": dict(B=B, H=H, D=D, S=S, causal=False, dtype="float16"),
            "builds": {}}
    for build in builds:
        zeros = np.zeros((ctas * 3, 2 * timeline.slots_for(S // 128)), np.uint64)
        stamps = cuda.to_device(zeros)
        go = prepare(q, k, v, out, lse, False, stamps=stamps, **BUILDS[build])
        go()                                      # the first launch: warm
        stamps.copy_to_device(zeros)
        go()
        torch.cuda.synchronize()
        recs = timeline.record(stamps.copy_to_host(), 3)
        data["builds"][build] = recs
        last = max(r["end_ns"] for r in recs)
        print("timeline %s: %d records, the first %d blocks done in %.1f us" % (build, len(recs), ctas, last / 1e3))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=0)
    print("timeline written to", path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builds", default="plain,pingpong,pingpong+overlap",
                    help="builds to fuzz and time, of: " + ", ".join(BUILDS))
    ap.add_argument("--cases", type=int, default=24, help="fuzz cases a build")
    ap.add_argument("--dtypes", default="float16,bfloat16", help="the fuzz's types (a compile each with D and mask)")
    ap.add_argument("--timeline", default=os.path.join(os.path.dirname(__file__), "timeline.json"),
                    help="where the recorded timeline goes ('' for none)")
    ap.add_argument("--no-fuzz", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    a = ap.parse_args(argv)
    builds = a.builds.split(",")
    for b in builds:
        if b not in BUILDS:
            ap.error("--builds: %r is none of %s" % (b, ", ".join(BUILDS)))
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    fails = 0
    if not a.no_fuzz:
        for b in builds:
            fails += fuzz(a.cases, build=b, dtypes=tuple(a.dtypes.split(",")))
        print("fuzz: %s (%d failures)" % ("PASS" if not fails else "FAIL", fails), flush=True)
    if a.timeline:
        record_timeline(a.timeline)
    if not a.no_speed:
        speed(builds)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
