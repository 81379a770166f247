"""Benchmark: cutelite vs NVIDIA's pycute on the same layout-algebra workload.

The workload is what a GEMM tutorial does over and over: tile layouts of a 128x128x32 CTA tile,
thread-value layouts of mma atoms, and their compositions, divides, products and complements.
Run:  python benchmarks/algebra_vs_pycute.py   (needs pycute, from the nvidia-cutlass package)
Prints a table of microseconds per call and the ratio pycute / cutelite (> 1: cutelite is faster).
"""

import platform
import timeit

import cutelite as cl
import pycute as pc

# (name, operation, operands as (shape, stride) pairs or ints)
WORKLOAD = [
    ("composition", "composition", [((128, 32), (32, 1)), ((8, 4), (4, 1))]),
    ("composition", "composition", [((4, 8), (32, 1)), ((2, 2, 2), (16, 1, 8))]),
    ("composition", "composition", [(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))), ((16, 8), (1, 16))]),
    ("logical_divide", "logical_divide", [((128, 128), (1, 128)), ((32,), (1,))]),
    ("logical_divide", "logical_divide", [((128, 32), (32, 1)), ((16, 4), (1, 16))]),
    ("zipped_divide", "zipped_divide", [((256, 256), (1, 256)), ((128,), (1,))]),
    ("logical_product", "logical_product", [((2, 2), (1, 2)), ((4, 8), (8, 1))]),
    ("logical_product", "logical_product", [((8, 8), (8, 1)), ((4, 2), (1, 4))]),
    ("complement", "complement", [((4, 8), (1, 16)), 1024]),
    ("coalesce", "coalesce", [(((2, 4), (2, 8)), ((1, 2), (8, 16)))]),
]


def build(lib, arg):
    if isinstance(arg, int):
        return arg
    return lib.Layout(*arg)


def time_one(lib, op, args, number):
    fn = getattr(lib, op)
    operands = [build(lib, a) for a in args]
    best = min(timeit.repeat(lambda: fn(*operands), number=number, repeat=5))
    return best / number * 1e6


def main(number=2000):
    rows = []
    for name, op, args in WORKLOAD:
        ours = time_one(cl, op, args, number)
        theirs = time_one(pc, op, args, number)
        rows.append((name, ours, theirs, theirs / ours))
    print(f"python {platform.python_version()} on {platform.machine()}, best of 5 x {number} calls")
    print(f"{'operation':<16} {'cutelite us':>12} {'pycute us':>10} {'pycute/cutelite':>16}")
    for name, ours, theirs, ratio in rows:
        print(f"{name:<16} {ours:>12.2f} {theirs:>10.2f} {ratio:>16.2f}")
    total_ours = sum(r[1] for r in rows)
    total_theirs = sum(r[2] for r in rows)
    print(f"{'whole workload':<16} {total_ours:>12.2f} {total_theirs:>10.2f} {total_theirs / total_ours:>16.2f}")


if __name__ == "__main__":
    main()
