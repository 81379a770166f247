"""Check cutelite.bank_conflicts against the GPU's own counters (Nsight Compute).

    python benchmarks/bank_conflicts/verify.py --predict      # predictions only (no GPU needed)
    python benchmarks/bank_conflicts/verify.py OUTDIR         # build, profile with ncu, compare

Each case is one warp-wide shared-memory instruction with 32 byte addresses computed from a cutelite
layout. One CUDA C++ kernel (inline PTX, so the instruction width is exact: LDS, LDS.64, LDS.128, STS*,
LDSM.x1/x2/x4) is launched once per case with ONE warp and no other shared-memory access, so the
counters of that launch belong to that single instruction. ncu profiles every launch; we compare
  wavefronts (predicted)  vs  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,ldsm}.sum
  conflicts = wavefronts - phases  vs  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st,ldsm}.sum
"""

import csv
import io
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from cutelite import Layout, Swizzle, composition  # noqa: E402
from cutelite.bank_conflicts import byte_addresses, wavefronts, ldmatrix_wavefronts  # noqa: E402

KINDS = {"ld32": 0, "ld64": 1, "ld128": 2, "st32": 3, "st64": 4, "st128": 5, "ldsm1": 6, "ldsm2": 7, "ldsm4": 8}

CUDA_SRC = r"""
#include <cstdio>
#include <vector>
__global__ void probe(int kind, const unsigned* offs, unsigned* out) {
  __shared__ __align__(1024) unsigned char smem[16384];
  unsigned a = (unsigned)__cvta_generic_to_shared(smem) + offs[threadIdx.x];
  unsigned r0 = 0, r1 = 0, r2 = 0, r3 = 0, v = threadIdx.x;
  switch (kind) {
  case 0: asm volatile("ld.shared.b32 %0, [%1];" : "=r"(r0) : "r"(a)); break;
  case 1: asm volatile("ld.shared.v2.b32 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(a)); break;
  case 2: asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a)); break;
  case 3: asm volatile("st.shared.b32 [%0], %1;" :: "r"(a), "r"(v) : "memory"); break;
  case 4: asm volatile("st.shared.v2.b32 [%0], {%1,%2};" :: "r"(a), "r"(v), "r"(v) : "memory"); break;
  case 5: asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};" :: "r"(a), "r"(v), "r"(v), "r"(v), "r"(v) : "memory"); break;
  case 6: asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(a)); break;
  case 7: asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(a)); break;
  case 8: asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a)); break;
  }
  out[threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "r");
  unsigned *d_offs, *d_out; cudaMalloc(&d_offs, 32 * 4); cudaMalloc(&d_out, 32 * 4);
  int kind, n = 0; unsigned h[32];
  while (fscanf(f, "%d", &kind) == 1) {
    for (int i = 0; i < 32; ++i) fscanf(f, "%u", &h[i]);
    cudaMemcpy(d_offs, h, sizeof h, cudaMemcpyHostToDevice);
    probe<<<1, 32>>>(kind, d_offs, d_out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("case %d: %s\n", n, cudaGetErrorString(e)); return 1; }
    ++n;
  }
  printf("ran %d cases\n", n);
  return 0;
}
"""


def row_major(rows, cols, pad=0):
    return Layout((rows, cols), (cols + pad, 1))


def cases():
    """(name, kind, byte addresses, predicted report) for every case."""
    out = []

    def add(name, kind, layout, access, elem_bytes=4, vector=1):
        addrs, width = byte_addresses(layout, access, elem_bytes, vector)
        addrs = [0 if a is None else a for a in addrs]
        if kind.startswith("ldsm"):
            n = int(kind[-1]) * 8
            rep = ldmatrix_wavefronts(addrs[:n])
            addrs = addrs[:n] + [addrs[0]] * (32 - n)
        else:
            assert width == {"32": 4, "64": 8, "128": 16}[re.sub(r"\D", "", kind)]
            rep = wavefronts(addrs, width, store=kind.startswith("st"))
        out.append((name, kind, addrs, rep))

    t, tp, ts = row_major(32, 32), row_major(32, 32, 1), composition(Swizzle(5, 0, 5), row_major(32, 32))
    row = [(0, i) for i in range(32)]
    col = [(i, 0) for i in range(32)]
    for op in ("ld", "st"):
        add(f"32x32 f32 row-major, row {op}", op + "32", t, row)
        add(f"32x32 f32 row-major, column {op}", op + "32", t, col)
        add(f"32x32 f32 padded to 33, column {op}", op + "32", tp, col)
        add(f"32x32 f32 Sw<5,0,5>, column {op}", op + "32", ts, col)
    add("32x32 f32 row-major, stride-2 ld (2-way)", "ld32", t, [(0, 2 * i) if i < 16 else (1, 2 * i - 32) for i in range(32)])
    add("32x32 f32, all lanes one word (broadcast)", "ld32", t, [(0, 0)] * 32)
    # 64-bit: lane i reads 2 floats
    add("32x32 f32, row ld64 (float2)", "ld64", t, [(i // 16, 2 * (i % 16)) for i in range(32)], vector=2)
    add("32x32 f32 row-major, column ld64", "ld64", t, col, vector=2)
    add("32x32 f32 padded to 34, column ld64", "ld64", row_major(32, 32, 2), col, vector=2)
    add("32x32 f32 Sw<4,1,4>, column ld64", "ld64", composition(Swizzle(4, 1, 4), t), col, vector=2)
    add("32x32 f32 row-major, column st64", "st64", t, col, vector=2)
    # 128-bit: lane i reads 4 floats
    add("32x32 f32, row ld128 (float4)", "ld128", t, [(i // 8, 4 * (i % 8)) for i in range(32)], vector=4)
    add("32x32 f32 row-major, column ld128", "ld128", t, col, vector=4)
    add("32x32 f32 padded to 36, column ld128", "ld128", row_major(32, 32, 4), col, vector=4)
    add("32x32 f32 Sw<3,2,3>, column ld128", "ld128", composition(Swizzle(3, 2, 3), t), col, vector=4)
    add("32x32 f32 Sw<2,2,3>, column ld128 (2-way)", "ld128", composition(Swizzle(2, 2, 3), t), col, vector=4)
    add("32x32 f32, all lanes one float4 (broadcast)", "ld128", t, [(0, 0)] * 32, vector=4)
    add("32x32 f32 row-major, column st128", "st128", t, col, vector=4)
    add("32x32 f32 Sw<3,2,3>, column st128", "st128", composition(Swizzle(3, 2, 3), t), col, vector=4)
    # ldmatrix on fp16 tiles: matrix j = rows 0..7, 16-byte chunk j (8x64 halves: 128-byte rows)
    h8, h8s = row_major(8, 64), composition(Swizzle(3, 3, 3), row_major(8, 64))
    chunks = [(i % 8, 8 * (i // 8)) for i in range(32)]
    for name, L in (("8x64 f16 row-major", h8), ("8x64 f16 Sw<3,3,3>", h8s)):
        add(f"{name}, ldmatrix.x1", "ldsm1", L, chunks, 2, 8)
        add(f"{name}, ldmatrix.x2", "ldsm2", L, chunks, 2, 8)
        add(f"{name}, ldmatrix.x4", "ldsm4", L, chunks, 2, 8)
    # 64x64 halves: x4 loads the 16x16 block at (16, 16): lanes 0-15 rows 16..31 col 16, 16-31 col 24
    blk = [(16 + i % 16, 16 + 8 * (i // 16)) for i in range(32)]
    add("64x64 f16 row-major, ldmatrix.x4 16x16 block", "ldsm4", row_major(64, 64), blk, 2, 8)
    add("64x64 f16 Sw<3,3,3>, ldmatrix.x4 16x16 block", "ldsm4", composition(Swizzle(3, 3, 3), row_major(64, 64)), blk, 2, 8)
    add("64x64 f16 Sw<2,3,3>, ldmatrix.x4 16x16 block", "ldsm4", composition(Swizzle(2, 3, 3), row_major(64, 64)), blk, 2, 8)
    # raw byte addresses: where quarter-warps (128-bit) or half-warps (64-bit) repeat or share words
    def raw(name, kind, addrs):
        width = {"ld64": 8, "st64": 8, "ld128": 16, "st128": 16}.get(kind, 4)
        out.append((name, kind, addrs, wavefronts(addrs, width, store=kind.startswith("st"))))
    raw("raw: 4 quarter-warps read the same 128 B", "ld128", [16 * (i % 8) for i in range(32)])
    raw("raw: quarter q reads one chunk 16q (all lanes)", "ld128", [16 * (i // 8) for i in range(32)])
    raw("raw: quarters read chunk 0, +128 B, 0, +128 B", "ld128", [128 * (i // 8 % 2) for i in range(32)])
    raw("raw: 2 half-warps read the same 256 B", "ld128", [16 * (i % 16) for i in range(32)])
    raw("raw: lane pairs share a chunk (256 B)", "ld128", [16 * (i // 2) for i in range(32)])
    raw("raw: 4 quarter-warps write the same 128 B", "st128", [16 * (i % 8) for i in range(32)])
    raw("raw: all lanes write one float4", "st128", [0] * 32)
    raw("raw: all lanes read one float2", "ld64", [0] * 32)
    raw("raw: 4 groups of 8 lanes read the same 64 B", "ld64", [8 * (i % 8) for i in range(32)])
    raw("raw: half h reads one 8 B word pair 8h", "ld64", [8 * (i // 16) for i in range(32)])
    raw("raw: 2 half-warps read the same 128 B", "ld64", [8 * (i % 16) for i in range(32)])
    raw("raw: lanes 0-15 word 0, 16-31 word 32 (2-way)", "ld32", [128 * (i // 16) for i in range(32)])
    return out


def metric_names(kind):
    op = {"ld": "op_ld", "st": "op_st", "ldsm": "op_ld"}[re.sub(r"\d", "", kind)]  # ncu counts LDSM as op_ld
    return (f"l1tex__data_pipe_lsu_wavefronts_mem_shared_{op}.sum",
            f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_{op}.sum")


def counters(ncu_text):
    """{launch ID: {metric name: value}} of ncu's --csv output (ncu_h100.csv is one)."""
    rows = [ln for ln in ncu_text.splitlines() if ln.startswith('"')]
    values = {}
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        values.setdefault(int(r["ID"]), {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    return values


def make_table(cs, ncu_text):
    """The markdown table of predicted vs measured, from ncu's --csv output for the launches of `cs`."""
    values = counters(ncu_text)
    lines = ["| case | instr | predicted wavefronts | measured wavefronts | predicted conflicts | measured conflicts | all-op wavefronts / conflicts | instr. executed | match |",
             "|---|---|---|---|---|---|---|---|---|"]
    ok = 0
    for i, (name, kind, addrs, rep) in enumerate(cs):
        v = values.get(i, {})
        wf_m, cf_m = (v.get(m) for m in metric_names(kind))
        allop = (v.get("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"), v.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"))
        inst = {"ld": "smsp__inst_executed_op_shared_ld.sum", "st": "smsp__inst_executed_op_shared_st.sum",
                "ldsm": "smsp__inst_executed_op_ldsm.sum"}[re.sub(r"\d", "", kind)]
        match = wf_m == rep.wavefronts and cf_m == rep.conflicts
        ok += match
        f = lambda x: "n/a" if x is None else str(int(x))  # noqa: E731
        lines.append(f"| {name} | {kind} | {rep.wavefronts} | {f(wf_m)} | {rep.conflicts} | {f(cf_m)} | "
                     f"{f(allop[0])} / {f(allop[1])} | {f(v.get(inst))} | {'yes' if match else 'NO'} |")
    lines.append(f"\n{ok} of {len(cs)} cases match exactly.")
    return "\n".join(lines)


def main(outdir):
    cs = cases()
    os.makedirs(outdir, exist_ok=True)
    src, exe, cfile = (os.path.join(outdir, n) for n in ("probe.cu", "probe", "cases.txt"))
    open(src, "w").write(CUDA_SRC)
    with open(cfile, "w") as f:
        for _, kind, addrs, _ in cs:
            f.write(f"{KINDS[kind]} " + " ".join(map(str, addrs)) + "\n")
    subprocess.run(["nvcc", "-O2", "-arch=sm_90", "-o", exe, src], check=True)
    sass = subprocess.run(["cuobjdump", "-sass", exe], capture_output=True, text=True).stdout
    print("shared-memory instructions in the SASS:",
          sorted(set(re.findall(r"\b(LDS[.\w]*|STS[.\w]*|LDSM[.\w]*)", sass))))
    query = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True).stdout
    wanted = ["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
              "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
              "smsp__inst_executed_op_ldsm.sum"]
    for k in ("ld", "st", "ldsm"):
        wanted += metric_names(k)
    have = [m for m in wanted if m.rsplit(".", 1)[0] in query] if query else wanted
    print("metrics not on this GPU:", [m for m in wanted if m not in have])
    cmd = ["ncu", "--clock-control", "none", "--csv", "--print-units", "base", "--metrics", ",".join(have), exe, cfile]
    print("command:", " ".join(cmd[:-2]), "./probe cases.txt")
    run = subprocess.run(cmd, capture_output=True, text=True)
    open(os.path.join(outdir, "ncu.csv"), "w").write(run.stdout + "\n" + run.stderr)
    table = make_table(cs, run.stdout)
    open(os.path.join(outdir, "table.md"), "w").write(table + "\n")
    print(table)
    if run.returncode:
        print(run.stderr[-3000:])


if __name__ == "__main__":
    if sys.argv[1:] == ["--predict"]:
        for name, kind, addrs, rep in cases():
            print(f"{name:50s} {kind:6s} wavefronts {rep.wavefronts:3d} conflicts {rep.conflicts:3d}")
    elif sys.argv[1:2] == ["--table"]:  # rebuild the table from a saved ncu.csv
        print(make_table(cases(), open(sys.argv[2]).read()))
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "out")
