"""The Hopper attention kernel on the GPU: correctness, then speed against PyTorch's SDPA in the same process.

    python -m kernels.attention.check_hopper [--builds plain,pingpong,pingpong+overlap] [--cases 6]
                                             [--timeline PATH] [--no-speed]
    python -m kernels.attention.check_hopper --configs d64-128x128,d64-192x112,d64-128x192 [--cases 4]

Each build of fa3_wgmma (BUILDS: the plain kernel, the ping-pong of its two consumers, the intra-warpgroup
overlap, both) is fuzzed and timed; every build orders its causal tiles longest first (the grid's first blocks
take the last query tiles). Every (build, D, mask, type) is a numba compile of about a minute, so each runs in a
process of its own, all at once: they compile and fuzz together, meet on a barrier, then time one after another
(the GPU to itself), each against SDPA in its own process.
1. Fuzz: for each build, fp16 with D = 64 and 128, both masks, and bf16 (D = 64, causal) for the builds beside
   the plain one: random shapes (S_q, S_k not multiples of any tile, S_q != S_k, grouped heads, both layouts),
   Gaussian q, k, v; O and LSE poisoned with NaN before the call, compared element-wise with
   kernels/attention/reference.py in float32 (|O - ref| <= 2e-2 fp16, 4e-2 bf16 (P is rounded to the inputs'
   type); |LSE - ref| <= 1e-2; rows that see no key: O = 0, LSE = -inf).
2. Speed (fp16, Gaussian, GPU time by kernels.timing.gpu_time_ms): B=4, H=16, D=128, S=4096 and B=2, S=8192,
   causal and not; B=4, H=32, D=64, S=4096; against SDPA with the cuDNN and the flash backend pinned. TFLOP/s
   counts 4 B H S^2 D, half with the causal mask. A table last: each build's TFLOP/s, the best build's ratios.
3. Timeline: the plain and the ping-pong + overlap builds with trace, B=4, H=16, D=128, S=2048, not causal, the
   first 2 blocks' phases (kernels.attention.timeline.record) written as JSON to PATH (default
   kernels/attention/timeline.json) for chapter 10. The stamps add a few instructions a phase.
With --configs, the tile configurations of CONFIGS instead (FlashAttention-3 picks its tiles per head dim; a
name says D-BMxBN[-stages]): each for its head dim, full and causal (a build each), fuzzed in fp16, then timed
at the first shape of SHAPES for its D; no timeline. A table last: each configuration's TFLOP/s and its ratios
to cuDNN and flash. Keep a command to 6 builds (3 configurations); the library's tile of each D is among them.
"""

import argparse
import json
import multiprocessing
import os
import queue
import sys
import threading

import numpy as np

TOL = {"float16": 2e-2, "bfloat16": 4e-2}
LSE_TOL = 1e-2
BUILDS = {"plain": {}, "pingpong": dict(pingpong=True), "overlap": dict(overlap=True),
          "pingpong+overlap": dict(pingpong=True, overlap=True)}
# Candidate tiles (make's options, for one head dim), each legal and assembled by ptxas for sm_90a without
# spills (tests/test_attention_hopper_ptx.py); 128 x 128 with two stages is the library's build of today.
# Three consumers (BM = 192) have 160 registers a thread: with 128 keys a block ptxas (CUDA 13.0) spills 8
# bytes, with 112 none.
CONFIGS = {
    "d64-128x128": dict(D=64, pingpong=True, overlap=True),
    "d64-192x112": dict(D=64, BM=192, BN=112, regs=(24, 160), pingpong=True, overlap=True),
    "d64-128x192": dict(D=64, BN=192, pingpong=True, overlap=True),
    "d128-128x128": dict(D=128, pingpong=True, overlap=True),
    "d128-128x176": dict(D=128, BN=176, pingpong=True, overlap=True),
    "d128-128x128-3": dict(D=128, stages=3, pingpong=True, overlap=True),      # 224 KB of K, V and Q tiles
}
SHAPES = {128: ((4, 16, 4096), (2, 16, 8192)), 64: ((4, 32, 4096),)}      # (B, H, S) timed for each D
TIMELINE = dict(B=4, H=16, D=128, S=2048, ctas=2)
BARRIER_S = 420                  # how long a process waits for the others to compile and fuzz


def _inputs(torch, B, S_q, S_k, H, H_kv, D, dtype, layout, gen):
    def one(S, heads):
        shape = (B, S, heads, D) if layout == "BSHD" else (B, heads, S, D)
        return torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(dtype)
    return one(S_q, H), one(S_k, H_kv), one(S_k, H_kv)


def options(name):
    """make's options of a build (BUILDS) or of a tile configuration (CONFIGS, less its head dim)."""
    if name in BUILDS:
        return BUILDS[name]
    return {k: v for k, v in CONFIGS[name].items() if k != "D"}


def fuzz(build, D, causal, dtype, cases, seed):
    """Random shapes through one configuration; every case printed; the number of failures returned."""
    import torch
    from kernels.attention.fa3_wgmma import prepare
    from kernels.attention.reference import reference
    rng = np.random.default_rng(seed)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    tdtype = getattr(torch, dtype)
    fails = 0
    for i in range(cases):
        layout = "BSHD" if i % 3 else "BHSD"
        H_kv = int(rng.choice([1, 2]))
        H = H_kv * int(rng.choice([1, 2]))
        B = int(rng.integers(1, 3))
        S_q, S_k = (int(x) for x in rng.integers(1, 400, size=2))
        q, k, v = _inputs(torch, B, S_q, S_k, H, H_kv, D, tdtype, layout, gen)
        out = torch.full_like(q, float("nan"))
        lse = torch.full((B, H, S_q), float("nan"), device="cuda")
        prepare(q, k, v, out, lse, causal, None, layout, **options(build))()
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
        print("%s %s case %d: B %d S_q %4d S_k %4d H %d/%d D %3d %s %s %s: |dO| %.2e |dLSE| %.2e" % (
            "PASS" if ok else "FAIL", build, i, B, S_q, S_k, H, H_kv, D, dtype, "causal" if causal else "full",
            layout, err_o, err_l), flush=True)
    return fails


def _sdpa(backend):
    import torch.nn.functional as TF
    from torch.nn.attention import sdpa_kernel

    def run(q, k, v, causal):
        with sdpa_kernel([backend]):
            return TF.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                   is_causal=causal)
    return run


def speed(build, D, causal, shapes):
    """[(B, H, D, S, mask, {build, "cudnn", "flash": TFLOP/s})] of one configuration at the first `shapes` of
    SHAPES[D], SDPA in this process."""
    import torch
    from torch.nn.attention import SDPBackend
    from kernels.attention.fa3_wgmma import prepare
    from kernels.timing import gpu_time_ms
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(1)
    for B, H, S in SHAPES[D][:shapes]:
        q, k, v = _inputs(torch, B, S, S, H, H, D, torch.float16, "BSHD", gen)
        flops = 4 * B * H * S * S * D / (2 if causal else 1)
        out = torch.empty_like(q)
        lse = torch.empty((B, H, S), device="cuda")
        tf = {build: flops / gpu_time_ms(prepare(q, k, v, out, lse, causal, **options(build))) / 1e9}
        for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
            try:
                fn = _sdpa(backend)
                tf[name] = flops / gpu_time_ms(lambda: fn(q, k, v, causal)) / 1e9
            except RuntimeError as e:
                print("%s refused: %s" % (name, str(e)[:100]))
                tf[name] = float("nan")
        rows.append((B, H, D, S, "causal" if causal else "full", tf))
        print("timed", build, rows[-1], flush=True)
    return rows


def record_timeline(build):
    """The recorded phases of TIMELINE's first blocks under one build (kernels.attention.timeline.record)."""
    import torch
    from numba import cuda
    from kernels.attention import timeline
    from kernels.attention.fa3_wgmma import prepare
    B, H, D, S, ctas = (TIMELINE[x] for x in ("B", "H", "D", "S", "ctas"))
    gen = torch.Generator(device="cuda").manual_seed(2)
    q, k, v = _inputs(torch, B, S, S, H, H, D, torch.float16, "BSHD", gen)
    out = torch.empty_like(q)
    lse = torch.empty((B, H, S), device="cuda")
    zeros = np.zeros((ctas * 3, 2 * timeline.slots_for(S // 128)), np.uint64)
    stamps = cuda.to_device(zeros)
    go = prepare(q, k, v, out, lse, False, stamps=stamps, **BUILDS[build])
    go()                                      # the first launch: warm
    torch.cuda.synchronize()
    stamps.copy_to_device(zeros)
    go()
    torch.cuda.synchronize()
    recs = timeline.record(stamps.copy_to_host(), 3)
    print("timeline %s: %d records, the first %d blocks done in %.1f us" % (
        build, len(recs), ctas, max(r["end_ns"] for r in recs) / 1e3), flush=True)
    return recs


def _job(task, barrier, lock, results):
    """One process: build and fuzz a configuration (or warm a traced build), wait for every process, then time it
    (or record the timeline) while holding the GPU alone."""
    import kernels
    kernels.setup(verbose=False)
    import torch
    out = dict(task=task, fails=0, rows=[], records=None, device=torch.cuda.get_device_name())
    try:
        if task["kind"] == "check":
            out["fails"] = fuzz(task["build"], task["D"], task["causal"], task["dtype"], task["cases"], task["seed"])
        else:
            record_timeline(task["build"])            # compiles; the records that count come in turn
    except Exception as e:                            # reported, and the others go on
        print("ERROR %s: %s: %s" % (task, type(e).__name__, str(e)[:400]), flush=True)
        out["fails"] = max(out["fails"], 1)
    try:
        barrier.wait(timeout=BARRIER_S)
    except threading.BrokenBarrierError:              # a process died or is stuck: time anyway, and say so
        print("WARNING %s: not every process reached the barrier; timings may overlap others' work" % task,
              flush=True)
    with lock:
        try:
            if task["kind"] == "check" and task["speed"]:
                out["rows"] = speed(task["build"], task["D"], task["causal"], task["shapes"])
            elif task["kind"] == "timeline":
                out["records"] = record_timeline(task["build"])
        except Exception as e:
            print("ERROR timing %s: %s: %s" % (task, type(e).__name__, str(e)[:400]), flush=True)
            out["fails"] = max(out["fails"], 1)
    results.put(out)


def tasks(builds, cases, timed, timeline_builds, configs=()):
    out = []
    for b in builds:
        for D in (128, 64):
            for causal in (False, True):
                out.append(dict(kind="check", build=b, D=D, causal=causal, dtype="float16", cases=cases,
                                seed=len(out), speed=timed, shapes=len(SHAPES[D])))
        if b != "plain":
            out.append(dict(kind="check", build=b, D=64, causal=True, dtype="bfloat16", cases=cases, seed=len(out),
                            speed=False, shapes=0))
    for c in configs:
        for causal in (False, True):
            out.append(dict(kind="check", build=c, D=CONFIGS[c]["D"], causal=causal, dtype="float16", cases=cases,
                            seed=len(out), speed=timed, shapes=1))
    return out + [dict(kind="timeline", build=b) for b in timeline_builds]


def table(rows, builds):
    """The speed table (markdown): a row per shape and mask, each build's TFLOP/s, SDPA's, the best build's ratios."""
    merged = {}
    for B, H, D, S, mask, tf in rows:
        merged.setdefault((B, H, D, S, mask), {}).update(tf)      # SDPA: the last process's measurement
    lines = ["| B | H | D | S | mask | %s | cuDNN | flash | best / cuDNN | best / flash |" % " | ".join(builds),
             "|---|---|---|---|---|%s---|---|---|---|" % ("---|" * len(builds))]
    order = [(B, H, D, S, m) for D in (128, 64) for B, H, S in SHAPES[D] for m in ("full", "causal")]
    for key in [k for k in order if k in merged]:
        tf = merged[key]
        best = max(tf.get(b, float("nan")) for b in builds)
        lines.append("| %d | %d | %d | %d | %s | %s | %.0f | %.0f | %.2f | %.2f |" % (
            key + (" | ".join("%.0f" % tf.get(b, float("nan")) for b in builds), tf["cudnn"], tf["flash"],
                   best / tf["cudnn"], best / tf["flash"])))
    return "\n".join(lines)


def config_table(rows):
    """The speed table of tile configurations (markdown): a row per configuration and mask."""
    lines = ["| config | BM x BN, stages | B | H | D | S | mask | TFLOP/s | cuDNN | flash | / cuDNN | / flash |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for B, H, D, S, mask, tf in rows:
        name = next(k for k in tf if k in CONFIGS)
        c = dict(dict(BM=128, BN=128, stages=2), **CONFIGS[name])
        lines.append("| %s | %d x %d, %d | %d | %d | %d | %d | %s | %.0f | %.0f | %.0f | %.2f | %.2f |" % (
            name, c["BM"], c["BN"], c["stages"], B, H, D, S, mask, tf[name], tf["cudnn"], tf["flash"],
            tf[name] / tf["cudnn"], tf[name] / tf["flash"]))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builds", default="plain,pingpong,pingpong+overlap",
                    help="builds to fuzz and time, of: " + ", ".join(BUILDS))
    ap.add_argument("--cases", type=int, default=6, help="fuzz cases a configuration")
    ap.add_argument("--timeline", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "timeline.json"),
                    help="where the recorded timeline goes ('' for none)")
    ap.add_argument("--configs", default="",
                    help="tile configurations to fuzz and time instead of the builds (no timeline), of: "
                    + ", ".join(CONFIGS))
    ap.add_argument("--no-speed", action="store_true")
    a = ap.parse_args(argv)
    configs = [c for c in a.configs.split(",") if c]
    for c in configs:
        if c not in CONFIGS:
            ap.error("--configs: %r is none of %s" % (c, ", ".join(CONFIGS)))
    builds = [] if configs else a.builds.split(",")
    for b in builds:
        if b not in BUILDS:
            ap.error("--builds: %r is none of %s" % (b, ", ".join(BUILDS)))
    if configs:
        a.timeline = ""
    work = tasks(builds, a.cases, not a.no_speed, ("plain", "pingpong+overlap") if a.timeline else (), configs)
    ctx = multiprocessing.get_context("spawn")
    barrier, lock, results = ctx.Barrier(len(work)), ctx.Lock(), ctx.Queue()
    procs = [ctx.Process(target=_job, args=(t, barrier, lock, results)) for t in work]
    print("%d processes: %s" % (len(work), ", ".join("%s%s" % (t["build"], "" if t["kind"] == "check" else " trace")
                                                      for t in work)), flush=True)
    for p in procs:
        p.start()
    done = []
    try:
        for _ in procs:
            done.append(results.get(timeout=BARRIER_S + 180))
    except queue.Empty:
        print("FAIL: %d of %d processes never reported" % (len(procs) - len(done), len(procs)), flush=True)
    for p in procs:
        p.join(timeout=10)
    fails = sum(d["fails"] for d in done) + len(procs) - len(done)
    if done:
        print("device:", done[0]["device"])
    print("fuzz: %s (%d failures)" % ("PASS" if not fails else "FAIL", fails), flush=True)
    if a.timeline:
        data = {"device": done[0]["device"] if done else None, "shape": dict(TIMELINE, causal=False, dtype="float16"),
                "builds": {d["task"]["build"]: d["records"] for d in done
                           if d["task"]["kind"] == "timeline" and d["records"]}}
        with open(a.timeline, "w") as f:
            json.dump(data, f, indent=0)
        print("timeline written to", a.timeline)
    if not a.no_speed:
        print()
        rows = [r for d in done for r in d["rows"]]
        print(config_table(sorted(rows, key=lambda r: (-r[2], r[4] != "full"))) if configs else table(rows, builds))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
