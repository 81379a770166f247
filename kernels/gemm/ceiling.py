"""The ceiling of warp-level mma.sync: a register-only loop of independent mma chains, no memory.

A GEMM built on mma.sync cannot beat this; the tiled kernels' ratios are quoted against it.
"""

import numpy as np
from numba import cuda

from ..instructions import mma_m16n8k8_f32_f16, mma_m16n8k16_f32_f16

CHAINS = 4             # independent accumulator chains per warp (enough to hide the mma latency)


def make_kernel(shape="m16n8k16"):
    """k(out, iters): every warp runs iters x CHAINS mma of `shape`; out[thread] keeps them alive.
    flops = 2 * 16 * 8 * K * CHAINS * iters * warps."""
    if shape == "m16n8k16":
        @cuda.jit
        def mma_ceiling(out, iters):
            t = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
            x = np.uint32(t * 2654435761) & np.uint32(0x3BFF3BFF)   # small finite f16 pairs
            a = (x, x ^ np.uint32(1), x ^ np.uint32(2), x ^ np.uint32(3))
            b = (x ^ np.uint32(4), x ^ np.uint32(5))
            z = np.float32(0.0)
            c0 = (z, z, z, z)
            c1, c2, c3 = c0, c0, c0
            for _ in range(iters):
                c0 = mma_m16n8k16_f32_f16(a, b, c0)
                c1 = mma_m16n8k16_f32_f16(a, b, c1)
                c2 = mma_m16n8k16_f32_f16(a, b, c2)
                c3 = mma_m16n8k16_f32_f16(a, b, c3)
            out[t] = c0[0] + c1[1] + c2[2] + c3[3]
        mma_ceiling.k = 16
    else:
        @cuda.jit
        def mma_ceiling(out, iters):
            t = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
            x = np.uint32(t * 2654435761) & np.uint32(0x3BFF3BFF)
            a = (x, x ^ np.uint32(1))
            b = (x ^ np.uint32(4),)
            z = np.float32(0.0)
            c0 = (z, z, z, z)
            c1, c2, c3 = c0, c0, c0
            for _ in range(iters):
                c0 = mma_m16n8k8_f32_f16(a, b, c0)
                c1 = mma_m16n8k8_f32_f16(a, b, c1)
                c2 = mma_m16n8k8_f32_f16(a, b, c2)
                c3 = mma_m16n8k8_f32_f16(a, b, c3)
            out[t] = c0[0] + c1[1] + c2[2] + c3[3]
        mma_ceiling.k = 8
    return mma_ceiling


def flops(kernel, blocks, threads, iters):
    return 2.0 * 16 * 8 * kernel.k * CHAINS * iters * blocks * (threads // 32)
