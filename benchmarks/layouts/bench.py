"""Time chapter 1's copy kernels and chapter 4's shared-memory transposes on one GPU, in one process.

The kernels are the chapters' own (the same layouts, the same code, kernels.layout_codegen for the index
arithmetic, kernels.timing.gpu_time_ms for the clock), so the numbers recorded in RESULTS.md beside this
file are what those chapters' timing cells print on this GPU. Usage, from the repository root on a GPU:

    python benchmarks/layouts/bench.py            # prints the two tables as Markdown
"""

import sys

import numpy as np

import kernels

info = kernels.setup()
from numba import cuda, float32  # noqa: E402  (after kernels.setup, which picks GPU or simulator)

from cutelite import Layout, Swizzle, composition, size  # noqa: E402
from kernels.layout_codegen import layout_fn  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402

N = 4096                                       # both chapters use a 4096 x 4096 float matrix on a GPU


def make_copy(src_layout, dst_layout):
    """Chapter 1: thread i copies a[src_layout(i)] to b[dst_layout(i)]."""
    n = size(src_layout)
    src, dst = layout_fn(src_layout), layout_fn(dst_layout)

    @cuda.jit
    def copy(a, b):
        i = cuda.grid(1)
        if i < n:
            b[dst(i)] = a[src(i)]
    return copy


TILE, ROWS = 32, 8
SMEM = TILE * (TILE + 1)


def make_transpose(smem_layout):
    """Chapter 4: a 32 x 8 block moves a 32 x 32 tile through shared memory laid out by `smem_layout`."""
    at = layout_fn(smem_layout, by_mode=True)

    @cuda.jit
    def transpose(src, dst):
        s = cuda.shared.array(SMEM, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        bx, by = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
        for j in range(0, TILE, ROWS):
            s[at(ty + j, tx)] = src[by + ty + j, bx + tx]
        cuda.syncthreads()
        for j in range(0, TILE, ROWS):
            dst[bx + ty + j, by + tx] = s[at(tx, ty + j)]
    return transpose


def main():
    if info.simulator:
        sys.exit("bench.py times kernels: run it on a GPU")
    moved = 2 * 4 * N * N                      # bytes read + written
    print(f"device: {info.name}, {N} x {N} float32, kernels.timing.gpu_time_ms (median)\n")

    a = np.arange(N * N, dtype=np.float32)
    d_a, d_b = cuda.to_device(a), cuda.device_array_like(a)
    copies = {
        "copy (both contiguous)": (Layout((N, N), (1, N)), Layout((N, N), (1, N))),
        "transpose, contiguous reads": (Layout((N, N), (1, N)), Layout((N, N), (N, 1))),
        "transpose, contiguous writes": (Layout((N, N), (N, 1)), Layout((N, N), (1, N))),
    }
    threads = 256
    print("| chapter 1 kernel | time (ms) | bandwidth (GB/s) |\n|---|---|---|")
    for name, (s, d) in copies.items():
        k = make_copy(s, d)
        ms = gpu_time_ms(lambda: k[(N * N + threads - 1) // threads, threads](d_a, d_b))
        print(f"| {name} | {ms:.3f} | {moved / ms / 1e6:.0f} |")

    tile = Layout((32, 32), (32, 1))
    smem = {"naive": tile, "padded": Layout((32, 32), (33, 1)), "swizzled": composition(Swizzle(5, 0, 5), tile)}
    m = cuda.to_device(np.random.default_rng(4).standard_normal((N, N)).astype(np.float32))
    out = cuda.device_array((N, N), np.float32)
    print("\n| chapter 4 shared tile | time (ms) | bandwidth (GB/s) |\n|---|---|---|")
    for name, lay in smem.items():
        k = make_transpose(lay)
        ms = gpu_time_ms(lambda: k[(N // TILE, N // TILE), (TILE, ROWS)](m, out))
        assert np.array_equal(out.copy_to_host(), m.copy_to_host().T), name
        print(f"| {name} `{lay}` | {ms:.3f} | {moved / ms / 1e6:.0f} |")


if __name__ == "__main__":
    main()
