#!/usr/bin/env python3
"""Differential oracle for cutelite: compile real C++ CuTe, record what it prints.

Generates random but typical inputs for CuTe's layout algebra, writes C++ that prints every
result between markers, compiles it with g++ against the headers of the nvidia-cutlass wheel,
runs it, and writes one JSON fixture per operation to tests/oracle/cases/<op>.json.

Inputs that C++ rejects at compile time (a static_assert) become error cases: the compile's
"required from here" lines name the line of the generated file, so the failing cases are
recorded with the assertion's message, removed, and the rest is compiled again.

Usage (see README.md):  python tests/oracle/generate.py [--jobs 2] [--only op,op]

Headers:   $CUTLASS_WHEEL (a nvidia_cutlass-4.2.0.0 wheel), else one found in, or downloaded
           with `pip download` into, tests/oracle/build/.
CUDA:      the CUDA toolkit headers (cuda_runtime.h, cuda_fp16.h, cuda/std/...), which cutlass's
           numeric headers include: $CUDA_HOME/include, else next to `nvcc` on PATH.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "build")
CASES = os.path.join(HERE, "cases")
CUTLASS_VERSION = "4.2.0.0"
SEED = 20250917
CHUNK = 120            # cases per translation unit

# ----------------------------------------------------------------------------------------------
# Int-tuples.  A static integer is a Python int; a dynamic one (a plain C++ `int`) is a D.
# Tuples are Python tuples.  Underscore (in slicing coordinates) is the string "_".


class D(int):
    """A dynamic integer: C++ `int`, printed without the leading underscore."""


def is_tuple(x):
    return isinstance(x, tuple)


def flat(x):
    return [y for e in x for y in flat(e)] if is_tuple(x) else [x]


def prod(x):
    p = 1
    for v in flat(x):
        p *= int(v)
    return p


def unflatten(values, like):
    it = iter(values)

    def go(t):
        return tuple(go(e) for e in t) if is_tuple(t) else next(it)
    return go(like)


def with_dyn(x, idxs):
    """x with the leaves at flat positions idxs made dynamic."""
    vals = flat(x)
    vals = [D(v) if (i in idxs and v != "_") else v for i, v in enumerate(vals)]
    return unflatten(vals, x)


def dyn_idx(x):
    return [i for i, v in enumerate(flat(x)) if isinstance(v, D)]


def to_json(x):
    if is_tuple(x):
        return [to_json(e) for e in x]
    return x if x == "_" else int(x)


def cpp(x, maker="make_shape"):
    if is_tuple(x):
        return "%s(%s)" % (maker, ", ".join(cpp(e, maker) for e in x))
    if x == "_":
        return "_"
    if isinstance(x, D):
        return "int(%d)" % int(x)
    return "Int<%d>{}" % int(x)


class L:
    """A layout input: shape and stride (stride None: make_layout(shape) or another maker)."""

    def __init__(self, shape, stride):
        self.shape, self.stride = shape, stride

    def cpp(self):
        return "make_layout(%s, %s)" % (cpp(self.shape), cpp(self.stride, "make_stride"))

    def json(self):
        return {"shape": to_json(self.shape), "stride": to_json(self.stride),
                "dyn": {"shape": dyn_idx(self.shape), "stride": dyn_idx(self.stride)}}

    def size(self):
        return prod(self.shape)

    def cosize(self):
        return sum((int(s) - 1) * abs(int(d)) for s, d in zip(flat(self.shape), flat(self.stride))) + 1

    def is_dynamic(self):
        return bool(dyn_idx(self.shape) or dyn_idx(self.stride))


def shape_json(s):
    return {"shape": to_json(s), "dyn": {"shape": dyn_idx(s)}}


def tuple_json(t):
    return {"value": to_json(t), "dyn": dyn_idx(t)}


def tiler_json(t):
    """A tiler: a Layout, or a list whose entries are Layouts, static ints, or dynamic ints ({"value", "dyn"})."""
    if isinstance(t, L):
        return t.json()
    return [e.json() if isinstance(e, L) else tuple_json(e) if isinstance(e, D) else int(e) for e in t]


def tiler_cpp(t):
    if isinstance(t, L):
        return t.cpp()
    return "make_tile(%s)" % ", ".join(e.cpp() if isinstance(e, L) else cpp(e) for e in t)


# ----------------------------------------------------------------------------------------------
# Random typical inputs.

LEAF = [1, 2, 2, 2, 3, 4, 4, 4, 4, 5, 6, 8, 8, 8, 16, 16, 32, 12, 7]
STRIDE = [0, 1, 1, 2, 3, 4, 4, 6, 8, 8, 12, 16, 16, 32, 64, 5, 24]


def rand_shape(rng, max_size=128, max_depth=2, max_rank=4, int_prob=0.12, min_size=1):
    for _ in range(1000):
        if rng.random() < int_prob:
            s = rng.choice(LEAF)
        else:
            s = _rand_tuple(rng, max_depth, rng.choice([r for r in [1, 2, 2, 2, 3, 3, 4] if r <= max_rank]), max_rank)
        if min_size <= prod(s) <= max_size:
            return s
    return (2, 2)


def _rand_tuple(rng, depth, rank, max_rank):
    rank = min(rank, max_rank)
    modes = []
    for _ in range(rank):
        if depth > 1 and rng.random() < 0.28:
            modes.append(_rand_tuple(rng, depth - 1, rng.choice([1, 2, 2, 3]), 3))
        else:
            modes.append(rng.choice(LEAF))
    return tuple(modes)


def compact(shape, order=None, start=1, gaps=False, rng=None):
    """Compact strides for the leaves of shape, visiting leaves in `order` (default: left)."""
    leaves = flat(shape)
    order = order if order is not None else list(range(len(leaves)))
    strides = [0] * len(leaves)
    cur = start
    for i in order:
        strides[i] = cur
        cur *= int(leaves[i])
        if gaps and rng.random() < 0.35:
            cur *= rng.choice([2, 2, 3, 4])
            if rng.random() < 0.3:
                cur += rng.choice([1, 2, 4])
    return unflatten(strides, shape)


def rand_stride(rng, shape, kind=None):
    leaves = flat(shape)
    n = len(leaves)
    kind = kind or rng.choice(["left", "right", "perm", "perm", "gaps", "gaps", "random", "zeros", "zeros"])
    if kind == "left":
        st = compact(shape)
    elif kind == "right":
        st = compact(shape, list(reversed(range(n))))
    elif kind == "perm":
        order = list(range(n))
        rng.shuffle(order)
        st = compact(shape, order)
    elif kind == "gaps":
        order = list(range(n))
        if rng.random() < 0.5:
            rng.shuffle(order)
        st = compact(shape, order, start=rng.choice([1, 1, 1, 2]), gaps=True, rng=rng)
    elif kind == "zeros":
        order = list(range(n))
        rng.shuffle(order)
        vals = flat(compact(shape, order))
        for i in range(n):
            if rng.random() < 0.35:
                vals[i] = 0
        st = unflatten(vals, shape)
    else:  # random
        st = unflatten([rng.choice(STRIDE) for _ in range(n)], shape)
    # size-1 leaves carry arbitrary strides now and then
    vals = flat(st)
    for i, s in enumerate(leaves):
        if int(s) == 1 and rng.random() < 0.5:
            vals[i] = rng.choice([0, 1, 2, 4, 16])
    return unflatten(vals, shape)


def rand_layout(rng, max_size=128, kind=None, **kw):
    s = rand_shape(rng, max_size, **kw)
    return L(s, rand_stride(rng, s, kind))


def make_dynamic(rng, lay, p=0.4, stride_too=True):
    ns = len(flat(lay.shape))
    si = {i for i in range(ns) if rng.random() < p}
    di = {i for i in range(ns) if stride_too and rng.random() < p}
    if not si and not di:
        si = {rng.randrange(ns)}
    return L(with_dyn(lay.shape, si), with_dyn(lay.stride, di))


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def rand_tile_for(rng, n, max_depth=1):
    """A layout of size dividing n (usually), image inside [0, n)."""
    d = rng.choice(divisors(n)) if rng.random() < 0.9 else rng.choice([2, 3, 4, 8])
    kind = rng.random()
    if kind < 0.45 or d == 1:
        return L(d, 1) if rng.random() < 0.7 else L((d,), (1,))
    if kind < 0.7:  # strided
        st = rng.choice([1, 2, 4]) if rng.random() < 0.7 else rng.choice([3, 8])
        return L(d, st)
    # two-mode tile, e.g. (2,4):(1,8) or (4,2):(2,1)
    a = rng.choice([x for x in divisors(d)])
    b = d // a
    if rng.random() < 0.5:
        return L((a, b), (1, a * rng.choice([1, 1, 2, 4])))
    return L((a, b), (b, 1))


def rand_tuple_tiler(rng, a, allow_int=True):
    """A by-mode tiler for the top-level modes of layout a (at most rank(a) entries)."""
    modes = list(a.shape) if is_tuple(a.shape) else [a.shape]
    k = len(modes) if rng.random() < 0.7 else rng.randint(1, len(modes))
    out = []
    for m in modes[:k]:
        n = prod(m)
        if allow_int and rng.random() < 0.45:
            out.append(rng.choice(divisors(n)) if rng.random() < 0.9 else rng.choice([2, 3, 4]))
        else:
            out.append(rand_tile_for(rng, n))
    return out


def gemm_layouts(rng):
    """GEMM-like tiles: (M,K) / (N,K) / (M,N) matrices in row/col major, with tile shapes."""
    M, N, K = rng.choice([16, 32, 64, 128]), rng.choice([8, 16, 32, 64]), rng.choice([8, 16, 32])
    m, n = rng.choice([x for x in [8, 16, 32] if x <= M]), rng.choice([x for x in [4, 8, 16] if x <= N])
    major = rng.choice(["left", "right"])
    a = L((m, n), (1, m) if major == "left" else (n, 1))
    return a, M, N, K


# ----------------------------------------------------------------------------------------------
# Cases.  Each case renders a C++ body; its outputs are printed as "@key value" lines.

class Case:
    def __init__(self, op, args, body):
        self.op, self.args, self.body = op, args, body
        self.tag = ""

    def key(self):
        return self.op + json.dumps(self.args, sort_keys=True)


def lay_in(name, lay):
    return "auto %s = %s; ox_P(\"in_%s\", %s);" % (name, lay.cpp(), name, name)


def res(expr, pl=False, props=True):
    """Print a layout result: text, offsets, size/cosize/rank/depth, and print_layout."""
    return "auto r = %s; ox_R<%s>(r, %s);" % (expr, "true" if props else "false", "true" if pl else "false")


def C_layout_op(op, fn, lay, pl=False, extra_args=None):
    args = {"layout": lay.json()}
    args.update(extra_args or {})
    return Case(op, args, lay_in("a", lay) + " " + res(fn("a"), pl))


def gen_make_layout(rng):
    out = []
    for i in range(420):
        if i % 7 == 0:
            a, *_ = gemm_layouts(rng)
        else:
            a = rand_layout(rng, max_size=rng.choice([16, 64, 128, 256]), max_depth=rng.choice([1, 2, 3]))
        if i % 6 == 5:
            a = make_dynamic(rng, a)
        out.append(C_layout_op("make_layout", lambda n: n, a, pl=(rng.random() < 0.2)))
    for i in range(160):
        s = rand_shape(rng, 128, max_depth=rng.choice([1, 2, 3]))
        if i % 5 == 4:
            s = with_dyn(s, {j for j in range(len(flat(s))) if rng.random() < 0.5} or {0})
        out.append(Case("make_layout_left", {"shape": shape_json(s)}, res("make_layout(%s)" % cpp(s))))
    for i in range(160):
        s = rand_shape(rng, 128, max_depth=rng.choice([1, 2, 3]))
        if i % 5 == 4:
            s = with_dyn(s, {j for j in range(len(flat(s))) if rng.random() < 0.5} or {0})
        out.append(Case("make_layout_right", {"shape": shape_json(s)},
                        res("make_layout(%s, LayoutRight{})" % cpp(s))))
    for i in range(120):
        s = rand_shape(rng, 128, max_depth=rng.choice([1, 1, 2]), int_prob=0)
        order = list(range(len(flat(s))))
        rng.shuffle(order)
        if rng.random() < 0.2:  # ties are allowed
            order = [rng.randrange(len(order)) for _ in order]
        o = unflatten(order, s)
        out.append(Case("make_ordered_layout", {"shape": shape_json(s), "order": tuple_json(o)},
                        res("make_ordered_layout(%s, %s)" % (cpp(s), cpp(o, "make_step")))))
    return out


def gen_coalesce(rng):
    out = []
    for i in range(360):
        a = rand_layout(rng, max_size=rng.choice([32, 128, 256]), max_depth=rng.choice([1, 2, 3]))
        if i % 8 == 7:
            a = make_dynamic(rng, a)
        out.append(C_layout_op("coalesce", lambda n: "coalesce(%s)" % n, a))
    for i in range(200):
        a = rand_layout(rng, max_size=128, max_depth=rng.choice([2, 3]), int_prob=0)
        modes = list(a.shape)
        k = len(modes) if rng.random() < 0.8 else rng.randint(1, len(modes))
        prof = tuple((tuple(1 for _ in m) if is_tuple(m) and rng.random() < 0.4 else 1) for m in modes[:k])
        if i % 8 == 7:
            a = make_dynamic(rng, a)
        out.append(C_layout_op("coalesce_profile", lambda n: "coalesce(%s, %s)" % (n, cpp(prof, "make_tile")),
                               a, extra_args={"profile": tuple_json(prof)}))
    return out


def gen_filter(rng):
    out = []
    for i in range(260):
        a = rand_layout(rng, max_size=128, kind=rng.choice(["zeros", "zeros", "random", "gaps", None]),
                        max_depth=rng.choice([1, 2, 3]))
        if i % 8 == 7:
            a = make_dynamic(rng, a)
        out.append(C_layout_op("filter", lambda n: "filter(%s)" % n, a))
    return out


def rand_b_for(rng, a_size, exceed=0.12):
    """A layout B to compose after A: its image mostly inside [0, size(A))."""
    for _ in range(200):
        b = rand_layout(rng, max_size=max(1, min(a_size, 128)), max_depth=2, max_rank=3,
                        kind=rng.choice(["left", "perm", "gaps", "gaps", "random", "zeros", "right"]))
        if b.cosize() <= a_size or rng.random() < exceed:
            return b
    return L(a_size, 1)


def gen_composition(rng):
    out = []
    for i in range(620):
        if i % 9 == 0:
            a, *_ = gemm_layouts(rng)
        else:
            a = rand_layout(rng, max_size=rng.choice([16, 64, 128, 256]), max_depth=rng.choice([1, 2, 3]))
        b = rand_b_for(rng, a.size())
        if i % 10 == 9:
            a = make_dynamic(rng, a, p=0.3)
            if rng.random() < 0.5:
                b = make_dynamic(rng, b, p=0.3)
        out.append(Case("composition", {"a": a.json(), "b": b.json()},
                        lay_in("a", a) + " " + lay_in("b", b) + " " + res("composition(a, b)")))
    for i in range(300):
        a = rand_layout(rng, max_size=rng.choice([64, 128, 256]), max_depth=rng.choice([1, 2]), int_prob=0)
        t = rand_tuple_tiler(rng, a)
        if i % 10 == 9:
            a = make_dynamic(rng, a, p=0.3)
        out.append(Case("composition_tiler", {"a": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("composition(a, %s)" % tiler_cpp(t))))
    return out


def rand_injective(rng, max_size=64):
    a = rand_layout(rng, max_size=max_size, kind=rng.choice(["left", "right", "perm", "gaps", "gaps", "gaps"]),
                    max_depth=rng.choice([1, 2]))
    return a


def gen_complement(rng):
    out = []
    for i in range(300):
        a = rand_injective(rng) if rng.random() < 0.85 else rand_layout(rng, 32)
        if i % 10 == 9:
            a = rand_injective(rng)
            a = make_dynamic(rng, a, p=0.35) if rng.random() < 0.5 else L(D(rng.choice(LEAF)), D(rng.choice([1, 2, 4])))
        out.append(C_layout_op("complement", lambda n: "complement(%s)" % n, a))
    for i in range(300):
        a = rand_injective(rng, 32) if rng.random() < 0.85 else rand_layout(rng, 32)
        r = rng.random()
        if r < 0.55:
            cot = a.cosize() * rng.choice([1, 1, 2, 3, 4]) + (rng.choice([0, 0, 1, 3]) if rng.random() < 0.3 else 0)
        elif r < 0.8:
            cot = rng.choice([1, 2, 8, 16, 24, 64, 128, 256])
        else:  # a shape as cotarget, as logical_divide passes one
            cot = rand_shape(rng, 256, max_depth=1, max_rank=3, int_prob=0, min_size=4)
        if i % 10 == 9:
            if rng.random() < 0.5:
                a = L(D(rng.choice(LEAF)), rng.choice([1, D(2), 4]))
            cot = D(a.cosize() * 2) if not is_tuple(cot) else with_dyn(cot, {0})
        out.append(C_layout_op("complement_cotarget", lambda n: "complement(%s, %s)" % (n, cpp(cot)), a,
                               extra_args={"cotarget": tuple_json(cot)}))
    return out


def gen_inverse(rng):
    out = []
    for op in ["right_inverse", "left_inverse"]:
        for i in range(260):
            r = rng.random()
            if r < 0.6:
                a = rand_layout(rng, 128, kind=rng.choice(["left", "right", "perm", "perm"]), max_depth=rng.choice([1, 2]))
            elif r < 0.8:
                a = rand_layout(rng, 64, kind="zeros")
            else:
                a = rand_layout(rng, 64, kind=rng.choice(["gaps", "random"]))
            if i % 10 == 9:
                a = make_dynamic(rng, a, p=0.3)
            out.append(C_layout_op(op, lambda n: "%s(%s)" % (op, n), a))
    return out


DIVIDES = ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"]
PRODUCTS = ["logical_product", "zipped_product", "tiled_product", "flat_product"]


def gen_divide(rng):
    out = []
    for op in DIVIDES:
        for i in range(260):
            if i % 2 == 0:  # by Layout
                a = rand_layout(rng, max_size=rng.choice([32, 64, 128, 256]), max_depth=rng.choice([1, 2]))
                t = rand_tile_for(rng, a.size()) if rng.random() < 0.6 else rand_b_for(rng, a.size())
                kind = "layout"
            else:  # by tuple tiler (including GEMM-like tiles of a matrix)
                if i % 5 == 1:
                    _, M, N, K = gemm_layouts(rng)
                    a = L((M, K), (1, M) if rng.random() < 0.5 else (K, 1))
                    t = [rng.choice([8, 16, 32]), rng.choice([4, 8])]
                    if rng.random() < 0.3:
                        t = [L(t[0], 1), L(t[1], 1)]
                else:
                    a = rand_layout(rng, max_size=rng.choice([64, 128, 256]), max_depth=rng.choice([1, 2]), int_prob=0)
                    t = rand_tuple_tiler(rng, a)
                kind = "tuple"
            if i % 10 in (8, 9):
                a = make_dynamic(rng, a, p=0.3)
            case = Case(op, {"layout": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("%s(a, %s)" % (op, tiler_cpp(t))))
            case.tag = kind
            out.append(case)
    return out


def gen_product(rng):
    out = []
    for op in PRODUCTS + ["blocked_product", "raked_product"]:
        for i in range(230):
            a = rand_layout(rng, max_size=rng.choice([8, 16, 16, 32]), max_depth=rng.choice([1, 2]),
                            kind=rng.choice(["left", "right", "perm", "gaps", "zeros", None]))
            if op in PRODUCTS and i % 2 == 1:
                modes = list(a.shape) if is_tuple(a.shape) else [a.shape]
                k = len(modes) if rng.random() < 0.7 else rng.randint(1, len(modes))
                t = [rng.choice([1, 2, 3, 4]) if rng.random() < 0.5 else
                     rand_layout(rng, 8, max_depth=1, max_rank=2, kind=rng.choice(["left", "right", "gaps"]))
                     for _ in range(k)]
                kind = "tuple"
            else:
                t = rand_layout(rng, max_size=max(1, 256 // a.size()) if a.size() <= 32 else 8, max_depth=rng.choice([1, 2]),
                                max_rank=3, kind=rng.choice(["left", "right", "perm", "gaps", "zeros"]))
                kind = "layout"
            if i % 10 in (8, 9):
                a = make_dynamic(rng, a, p=0.3)
            pl = op in ("blocked_product", "raked_product") and rng.random() < 0.25
            case = Case(op, {"layout": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("%s(a, %s)" % (op, tiler_cpp(t)), pl=pl))
            case.tag = kind
            out.append(case)
    return out


def gen_common(rng):
    out = []
    for op in ["max_common_vector", "max_common_layout"]:
        for i in range(200):
            s = rand_shape(rng, 128, max_depth=rng.choice([1, 2]))
            a = L(s, rand_stride(rng, s, rng.choice(["left", "left", "right", "perm", "gaps"])))
            if rng.random() < 0.3:
                b = L(s, a.stride)
            else:
                b = L(s, rand_stride(rng, s, rng.choice(["left", "left", "right", "perm", "gaps"])))
            if i % 10 == 9:
                a = make_dynamic(rng, a, p=0.3)
            body = lay_in("a", a) + " " + lay_in("b", b) + " "
            if op == "max_common_vector":
                body += "auto r = max_common_vector(a, b); ox_V(r);"
            else:
                body += res("max_common_layout(a, b)")
            out.append(Case(op, {"a": a.json(), "b": b.json()}, body))
    return out


def gen_tile_to_shape(rng):
    out = []
    for i in range(200):
        a = rand_layout(rng, 16, max_depth=rng.choice([1, 1, 2]), max_rank=3, int_prob=0.1,
                        kind=rng.choice(["left", "right", "perm", "gaps"]))
        ra = len(a.shape) if is_tuple(a.shape) else 1
        r = max(ra, rng.choice([1, 2, 2, 3]))
        blk = [prod(m) for m in (a.shape if is_tuple(a.shape) else (a.shape,))] + [1] * (r - ra)
        trg = tuple(b * rng.choice([1, 2, 2, 3, 4]) for b in blk)
        if rng.random() < 0.1:
            trg = tuple(t + 1 for t in trg)  # not divisible
        if rng.random() < 0.1 and ra > 1:
            trg = trg[:1]  # rank too small
        order = rng.choice([None, None, "right", "step"])
        if order == "step":
            o = list(range(len(trg)))
            rng.shuffle(o)
            order = tuple(o)
        ocpp = "" if order is None else (", LayoutRight{}" if order == "right" else ", " + cpp(order, "make_step"))
        if i % 10 == 9:
            trg = with_dyn(trg, {0})
        args = {"block": a.json(), "shape": shape_json(trg),
                "order": None if order is None else ("right" if order == "right" else tuple_json(order))}
        out.append(Case("tile_to_shape", args,
                        lay_in("a", a) + " " + res("tile_to_shape(a, %s%s)" % (cpp(trg), ocpp))))
    return out


def gen_cast(rng):
    out = []
    for op in ["upcast", "downcast"]:
        for i in range(200):
            a = rand_layout(rng, 128, kind=rng.choice(["left", "right", "perm", "gaps", "zeros", "random"]),
                            max_depth=rng.choice([1, 2]))
            n = rng.choice([2, 2, 4, 4, 8, 16])
            if i % 10 == 9:
                a = make_dynamic(rng, a, p=0.3)
            out.append(C_layout_op(op, lambda x: "%s<%d>(%s)" % (op, n, x), a, extra_args={"n": n}))
    return out


def rand_coord(rng, shape, underscore_p=0.5, dyn_p=0.8):
    """A coordinate congruent (or coarser) to shape, entries int or "_"."""
    def go(s, top):
        if is_tuple(s) and rng.random() < (0.7 if top else 0.5):
            return tuple(go(e, False) for e in s)
        if rng.random() < underscore_p:
            return "_"
        v = rng.randrange(prod(s))
        return D(v) if rng.random() < dyn_p else v
    return go(shape, True)


def gen_slice(rng):
    out = []
    for i in range(300):
        a = rand_layout(rng, 128, max_depth=rng.choice([1, 2]), int_prob=0.0)
        c = rand_coord(rng, a.shape)
        if "_" not in flat(c):
            continue
        if i % 10 == 9:
            a = make_dynamic(rng, a, p=0.3)
        out.append(Case("slice", {"layout": a.json(), "coord": tuple_json(c)},
                        lay_in("a", a) + " auto so = slice_and_offset(%s, a); auto r = get<0>(so); ox_R<true>(r, false); "
                        "ox_P(\"offset\", get<1>(so)); ox_I(\"offset_value\", get<1>(so));" % cpp(c, "make_coord")))
    for i in range(220):
        a = rand_layout(rng, 128, max_depth=rng.choice([1, 2]), int_prob=0.1)
        c = rand_coord(rng, a.shape, underscore_p=0.0, dyn_p=0.6)
        if i % 10 == 9:
            a = make_dynamic(rng, a, p=0.3)
        out.append(Case("crd2idx", {"layout": a.json(), "coord": tuple_json(c)},
                        lay_in("a", a) + " auto r = crd2idx(%s, a.shape(), a.stride()); ox_P(\"text\", r); ox_I(\"value\", r);"
                        % cpp(c, "make_coord")))
    for i in range(220):
        s = rand_shape(rng, 128, max_depth=rng.choice([1, 2]))
        idx = rng.randrange(prod(s))
        idx = D(idx) if rng.random() < 0.6 else idx
        if i % 10 == 9:
            s = with_dyn(s, {0})
        out.append(Case("idx2crd", {"shape": shape_json(s), "index": tuple_json(idx)},
                        "auto r = idx2crd(%s, %s); ox_P(\"text\", r);" % (cpp(idx), cpp(s))))
    return out


SWIZZLES = [(1, 4, 3), (2, 4, 3), (3, 4, 3), (2, 3, 3), (3, 3, 3), (1, 3, 3), (2, 2, 3), (3, 2, 3),
            (2, 0, 4), (3, 0, 3), (1, 1, 1), (2, 1, 2), (1, 2, 4), (3, 4, 4), (2, 4, 2), (0, 4, 3),
            (1, 0, 1), (2, 3, 2), (3, 3, 4), (2, 2, 2), (1, 4, -3), (2, 3, -2), (3, 3, -3)]


def gen_swizzle(rng):
    out = []
    for i, (b, m, s) in enumerate(SWIZZLES * 3):
        n = min(1 << (b + m + abs(s)), 512)
        out.append(Case("swizzle", {"swizzle": [b, m, s], "n": n},
                        "Swizzle<%d,%d,%d> sw; ox_P(\"text\", sw); ox_O(\"offsets\", sw, %d);" % (b, m, s, n)))
    for i in range(300):
        b, m, s = rng.choice(SWIZZLES)
        r = rng.random()
        if r < 0.5:  # the classic smem tile: rows x cols, row- or col-major, covering the swizzle span
            rows = rng.choice([4, 8, 8, 16])
            cols = rng.choice([8, 16, 32, 64])
            a = L((rows, cols), (cols, 1)) if rng.random() < 0.6 else L((rows, cols), (1, rows))
        else:
            a = rand_layout(rng, rng.choice([64, 256, 512]), kind=rng.choice(["left", "right", "perm", "gaps"]),
                            max_depth=rng.choice([1, 2]))
        if i % 10 == 9:
            a = make_dynamic(rng, a, p=0.3)
        rank2 = is_tuple(a.shape) and len(a.shape) == 2
        pl = rank2 and a.size() <= 256 and rng.random() < 0.5
        out.append(Case("swizzle_layout", {"swizzle": [b, m, s], "layout": a.json()},
                        lay_in("a", a) + " auto r = composition(Swizzle<%d,%d,%d>{}, a); ox_R<false>(r, %s);"
                        % (b, m, s, "true" if pl else "false")))
    return out


def gen_print_layout(rng):
    out = []
    for i in range(240):
        s0 = rand_shape(rng, 16, max_depth=rng.choice([1, 1, 2]), max_rank=2, int_prob=0)
        s1 = rand_shape(rng, 16, max_depth=rng.choice([1, 1, 2]), max_rank=2, int_prob=0)
        s0 = s0 if len(s0) > 1 else s0[0]
        s1 = s1 if len(s1) > 1 else s1[0]
        s = (s0, s1)
        a = L(s, rand_stride(rng, s))
        if i % 10 == 9:
            a = make_dynamic(rng, a, p=0.3)
        out.append(Case("print_layout", {"layout": a.json()}, lay_in("a", a) + " ox_PL(a);"))
    return out


def gen_errors(rng):
    """Inputs chosen to trip each static_assert (random cases trip some too)."""
    out = []
    comp_bad = [
        # candidates: C++'s weak test accepts some of these (they become ordinary cases)
        (L((4, 3), (3, 1)), L(2, 2)),
        (L((4, 6), (1, 4)), L(3, 2)),
        (L((4, 6), (1, 4)), L((3, 2), (2, 8))),
        (L((8, 8), (8, 1)), L(4, 3)),
        (L((6, 4), (1, 6)), L(4, 1)),
        (L((3, 4), (1, 3)), L(2, 2)),
        (L((2, 3, 4), (1, 2, 6)), L(6, 2)),
        (L((4, 4), (4, 1)), L((2, 4), (3, 1))),
        (L((5, 6), (1, 5)), L(3, 4)),
        (L((12, 8), (1, 12)), L(8, 3)),
        (L((4, 6), (1, 8)), L(3, 5)),
        (L((4, 8), (8, 1)), L(2, 6)),
        (L((4, 8), (1, 16)), L(6, 1)),
        (L((8, 8), (1, 16)), L((12,), (1,))),
        (L((4, 4), (1, 8)), L(3, 2)),
        (L((2, 3), (1, 4)), L((3, 2), (1, 3))),
    ]
    for a, b in comp_bad:
        out.append(Case("composition", {"a": a.json(), "b": b.json()},
                        lay_in("a", a) + " " + lay_in("b", b) + " " + res("composition(a, b)")))
    for a in [L((2, 2), (1, 1)), L((4, 2), (1, 2)), L((2, 4), (2, 1)), L((3, 3), (1, 2)), L((4, 4), (1, 2)),
              L((2, 2, 2), (1, 4, 2 * 2 + 2))]:
        out.append(C_layout_op("complement", lambda n: "complement(%s)" % n, a))
    for a in [L((2, 3), (1, 4)), L((2, 2), (2, 3)), L((3, 2), (2, 3)), L((2, 4), (4, 6)), L((4, 2), (1, 6))]:
        out.append(C_layout_op("left_inverse", lambda n: "left_inverse(%s)" % n, a))
    for a, n in [(L((4, 3), (1, 3)), 2), (L((8, 6), (1, 12)), 8), (L(6, 3), 4), (L((4, 4), (1, 6)), 4)]:
        out.append(C_layout_op("upcast", lambda x: "upcast<%d>(%s)" % (n, x), a, extra_args={"n": n}))
    for a, n in [(L((4, 3), (2, 8)), 2), (L((4, 3), (3, 12)), 2), (L(8, 0), 4)]:
        out.append(C_layout_op("downcast", lambda x: "downcast<%d>(%s)" % (n, x), a, extra_args={"n": n}))
    for b, m, s in [(3, 3, 2), (2, 4, 1), (3, 0, -2), (4, 2, 3)]:
        out.append(Case("swizzle", {"swizzle": [b, m, s], "n": 16},
                        "Swizzle<%d,%d,%d> sw; ox_P(\"text\", sw); ox_O(\"offsets\", sw, 16);" % (b, m, s)))
    return out


def gen_notes(rng):
    """Examples from the project's notes on where C++ semantics are easy to get wrong."""
    out = []
    for a, b in [(L((8, 1), (1, 1)), L((4, 1), (64, 64))), (L((4, 3), (3, 1)), L((2, 2), (1, 4))),
                 (L(12, 1), L((3, 4), (4, 1))), (L((D(8), 4), (1, D(8))), L((4, 2), (2, 1))),
                 (L((6, 4), (1, 6)), L((2, 8), (1, 2)))]:
        out.append(Case("composition", {"a": a.json(), "b": b.json()},
                        lay_in("a", a) + " " + lay_in("b", b) + " " + res("composition(a, b)")))
    for a, t in [(L((8, 4, 2), (1, 8, 32)), [4]), (L((8, 4, 2), (1, 8, 32)), [4, 2])]:
        out.append(Case("composition_tiler", {"a": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("composition(a, %s)" % tiler_cpp(t))))
    for op, a, t in [("tiled_product", L(16, 1), L((6,), (3,))), ("tiled_divide", L((16, 6), (1, 16)), L((4,), (2,))),
                     ("logical_divide", L((8, 4, 2), (1, 8, 32)), [4]), ("zipped_divide", L((D(12), 8), (1, D(12))), [4, 4])]:
        out.append(Case(op, {"layout": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("%s(a, %s)" % (op, tiler_cpp(t)))))
        out[-1].tag = "layout" if isinstance(t, L) else "tuple"
    for op, a in [("right_inverse", L((4, 4), (0, 1))), ("left_inverse", L(12, 0)), ("right_inverse", L((D(4), 4), (1, D(4)))),
                  ("left_inverse", L((4, 1, 3), (3, 0, 1))), ("complement", L(12, 0)), ("complement", L((4, 1), (2, 0)))]:
        out.append(C_layout_op(op, lambda n: "%s(%s)" % (op, n), a))
    for s in [(12, 1), (1, 12), ((1, 4), 1), (D(12), 1), (1, D(1))]:
        out.append(Case("make_layout_left", {"shape": shape_json(s)}, res("make_layout(%s)" % cpp(s))))
    return out


def gen_like(rng):
    """make_layout_like and make_fragment_like: stride orders with ties, zeros, size-1 modes, negative and
    dynamic strides, dynamic shapes (make_fragment_like's column-major fallback)."""
    out = []
    for op in ["make_layout_like", "make_fragment_like"]:
        for i in range(300):
            a = rand_layout(rng, max_size=rng.choice([16, 64, 256]), max_depth=rng.choice([1, 2, 3]),
                            int_prob=0.08 if op == "make_fragment_like" else 0.12,
                            kind=rng.choice(["left", "right", "perm", "gaps", "zeros", "zeros", "random"]))
            if rng.random() < 0.15:  # negative strides
                a = L(a.shape, unflatten([-v if rng.random() < 0.5 else v for v in flat(a.stride)], a.stride))
            r = i % 10
            if r in (6, 7):
                a = make_dynamic(rng, a, p=0.35)
            elif r == 8:  # dynamic strides only (a static shape keeps make_fragment_like's ordered branch)
                a = L(a.shape, with_dyn(a.stride, {j for j in range(len(flat(a.stride))) if rng.random() < 0.5}))
            elif r == 9:  # dynamic shapes only
                a = L(with_dyn(a.shape, {j for j in range(len(flat(a.shape))) if rng.random() < 0.5} or {0}), a.stride)
            out.append(C_layout_op(op, lambda n: "%s(%s)" % (op, n), a, pl=(rng.random() < 0.1)))
    return out


def dynamize(rng, lay, how=None):
    """lay with some integers dynamic: all of them, the shape's, the stride's, or a random few."""
    how = how or rng.choice(["all", "shape", "stride", "some", "some"])
    ns = len(flat(lay.shape))
    pick = {"all": lambda: set(range(ns)), "shape": set, "stride": set,
            "some": lambda: {i for i in range(ns) if rng.random() < 0.4}}
    si = set(range(ns)) if how in ("all", "shape") else pick[how]()
    di = set(range(ns)) if how in ("all", "stride") else (pick[how]() if how == "some" else set())
    if not si and not di:
        si = {rng.randrange(ns)}
    return L(with_dyn(lay.shape, si), with_dyn(lay.stride, di))


def maybe_dyn_tiler(rng, t):
    """A tiler (Layout or list) with its layouts or ints made dynamic now and then."""
    if isinstance(t, L):
        return dynamize(rng, t) if rng.random() < 0.5 else t
    return [(dynamize(rng, e) if isinstance(e, L) else D(e)) if rng.random() < 0.5 else e for e in t]


def gen_dynamic(rng):
    """Dynamic integers (C++ `int`) in every operation: layouts, tilers, orders, targets and cotargets."""
    out = []

    def unary(op, expr, a, **extra):
        out.append(C_layout_op(op, lambda n: expr % n, a, extra_args=extra or None))

    def rand_dyn(max_size=128, **kw):
        return dynamize(rng, rand_layout(rng, max_size=max_size, max_depth=rng.choice([1, 2, 2, 3]), **kw))

    for i in range(150):
        unary("make_layout", "%s", rand_dyn())
        s = rand_shape(rng, 128, max_depth=rng.choice([1, 2, 3]))
        s = with_dyn(s, {j for j in range(len(flat(s))) if rng.random() < 0.6} or {0})
        maker = rng.choice(["make_layout_left", "make_layout_right"])
        out.append(Case(maker, {"shape": shape_json(s)},
                        res("make_layout(%s%s)" % (cpp(s), ", LayoutRight{}" if maker == "make_layout_right" else ""))))
        s = rand_shape(rng, 128, max_depth=rng.choice([1, 1, 2]), int_prob=0)
        order = [rng.randrange(len(flat(s)) + 1) if rng.random() < 0.3 else k for k in range(len(flat(s)))]
        rng.shuffle(order)
        order = [D(o) if rng.random() < 0.4 else o for o in order]
        if rng.random() < 0.5:
            s = with_dyn(s, {j for j in range(len(flat(s))) if rng.random() < 0.5})
        o = unflatten(order, s)
        out.append(Case("make_ordered_layout", {"shape": shape_json(s), "order": tuple_json(o)},
                        res("make_ordered_layout(%s, %s)" % (cpp(s), cpp(o, "make_step")))))
    for i in range(200):
        unary("coalesce", "coalesce(%s)", rand_dyn(kind=rng.choice(["left", "right", "perm", "gaps", "zeros", None])))
        unary("filter", "filter(%s)", rand_dyn(kind=rng.choice(["zeros", "zeros", "random", "gaps", None])))
    for i in range(120):
        a = rand_layout(rng, max_size=128, max_depth=rng.choice([2, 3]), int_prob=0)
        prof = tuple((tuple(1 for _ in m) if is_tuple(m) and rng.random() < 0.4 else 1)
                     for m in list(a.shape)[:rng.randint(1, len(a.shape))])
        unary("coalesce_profile", "coalesce(%%s, %s)" % cpp(prof, "make_tile"), dynamize(rng, a),
              profile=tuple_json(prof))
    for i in range(250):
        a = rand_layout(rng, max_size=rng.choice([16, 64, 128, 256]), max_depth=rng.choice([1, 2, 3]))
        b = rand_b_for(rng, a.size())
        r = rng.random()
        a, b = (dynamize(rng, a), b) if r < 0.4 else (a, dynamize(rng, b)) if r < 0.6 else (dynamize(rng, a), dynamize(rng, b))
        out.append(Case("composition", {"a": a.json(), "b": b.json()},
                        lay_in("a", a) + " " + lay_in("b", b) + " " + res("composition(a, b)")))
    for i in range(200):
        a = rand_layout(rng, max_size=rng.choice([64, 128, 256]), max_depth=rng.choice([1, 2]), int_prob=0)
        t = rand_tuple_tiler(rng, a)
        if rng.random() < 0.7:
            a = dynamize(rng, a)
        t = maybe_dyn_tiler(rng, t)
        out.append(Case("composition_tiler", {"a": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("composition(a, %s)" % tiler_cpp(t))))
    for i in range(200):
        a = rand_injective(rng) if rng.random() < 0.85 else rand_layout(rng, 32)
        unary("complement", "complement(%s)", dynamize(rng, a))
        a = rand_injective(rng, 32)
        cot = a.cosize() * rng.choice([1, 2, 3, 4]) if rng.random() < 0.7 else \
            rand_shape(rng, 256, max_depth=1, max_rank=3, int_prob=0, min_size=4)
        if rng.random() < 0.7:
            a = dynamize(rng, a)
        if rng.random() < 0.6:
            cot = D(cot) if not is_tuple(cot) else with_dyn(cot, {j for j in range(len(cot)) if rng.random() < 0.5})
        unary("complement_cotarget", "complement(%%s, %s)" % cpp(cot), a, cotarget=tuple_json(cot))
    for op in ["right_inverse", "left_inverse"]:
        for i in range(150):
            a = rand_layout(rng, 128, kind=rng.choice(["left", "right", "perm", "perm", "zeros", "gaps"]),
                            max_depth=rng.choice([1, 2]))
            unary(op, op + "(%s)", dynamize(rng, a))
    for op in DIVIDES:
        for i in range(150):
            if i % 2 == 0:
                a = rand_layout(rng, max_size=rng.choice([32, 64, 128, 256]), max_depth=rng.choice([1, 2]))
                t = rand_tile_for(rng, a.size()) if rng.random() < 0.6 else rand_b_for(rng, a.size())
                kind = "layout"
            else:
                a = rand_layout(rng, max_size=rng.choice([64, 128, 256]), max_depth=rng.choice([1, 2]), int_prob=0)
                t = rand_tuple_tiler(rng, a)
                kind = "tuple"
            if rng.random() < 0.75:
                a = dynamize(rng, a)
            t = maybe_dyn_tiler(rng, t)
            case = Case(op, {"layout": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("%s(a, %s)" % (op, tiler_cpp(t))))
            case.tag = kind
            out.append(case)
    for op in PRODUCTS + ["blocked_product", "raked_product"]:
        for i in range(120):
            a = rand_layout(rng, max_size=rng.choice([8, 16, 32]), max_depth=rng.choice([1, 2]),
                            kind=rng.choice(["left", "right", "perm", "gaps", "zeros", None]))
            if op in PRODUCTS and i % 2 == 1:
                modes = list(a.shape) if is_tuple(a.shape) else [a.shape]
                t = [rng.choice([1, 2, 3, 4]) if rng.random() < 0.5 else
                     rand_layout(rng, 8, max_depth=1, max_rank=2, kind=rng.choice(["left", "right", "gaps"]))
                     for _ in range(rng.randint(1, len(modes)))]
                kind = "tuple"
            else:
                t = rand_layout(rng, max_size=max(1, 256 // a.size()) if a.size() <= 32 else 8,
                                max_depth=rng.choice([1, 2]), max_rank=3,
                                kind=rng.choice(["left", "right", "perm", "gaps", "zeros"]))
                kind = "layout"
            if rng.random() < 0.75:
                a = dynamize(rng, a)
            t = maybe_dyn_tiler(rng, t)
            case = Case(op, {"layout": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("%s(a, %s)" % (op, tiler_cpp(t))))
            case.tag = kind
            out.append(case)
    for op in ["max_common_vector", "max_common_layout"]:
        for i in range(120):
            s = rand_shape(rng, 128, max_depth=rng.choice([1, 2]))
            a = L(s, rand_stride(rng, s, rng.choice(["left", "left", "right", "perm", "gaps"])))
            b = L(s, a.stride if rng.random() < 0.4 else rand_stride(rng, s, rng.choice(["left", "right", "perm"])))
            r = rng.random()
            a, b = (dynamize(rng, a), b) if r < 0.4 else (a, dynamize(rng, b)) if r < 0.6 else (dynamize(rng, a), dynamize(rng, b))
            body = lay_in("a", a) + " " + lay_in("b", b) + " "
            body += "auto r = max_common_vector(a, b); ox_V(r);" if op == "max_common_vector" else res("max_common_layout(a, b)")
            out.append(Case(op, {"a": a.json(), "b": b.json()}, body))
    for i in range(200):
        a = rand_layout(rng, 16, max_depth=rng.choice([1, 1, 2]), max_rank=3, int_prob=0.1,
                        kind=rng.choice(["left", "right", "perm", "gaps"]))
        ra = len(a.shape) if is_tuple(a.shape) else 1
        r = max(ra, rng.choice([1, 2, 2, 3]))
        blk = [prod(m) for m in (a.shape if is_tuple(a.shape) else (a.shape,))] + [1] * (r - ra)
        trg = tuple(b * rng.choice([1, 2, 2, 3, 4]) for b in blk)
        order = rng.choice([None, "right", "step"])
        if order == "step":
            o = list(range(len(trg)))
            rng.shuffle(o)
            order = tuple(D(x) if rng.random() < 0.3 else x for x in o)
        ocpp = "" if order is None else (", LayoutRight{}" if order == "right" else ", " + cpp(order, "make_step"))
        if rng.random() < 0.6:
            a = dynamize(rng, a)
        if rng.random() < 0.6:
            trg = with_dyn(trg, {j for j in range(len(trg)) if rng.random() < 0.5})
        args = {"block": a.json(), "shape": shape_json(trg),
                "order": None if order is None else ("right" if order == "right" else tuple_json(order))}
        out.append(Case("tile_to_shape", args, lay_in("a", a) + " " + res("tile_to_shape(a, %s%s)" % (cpp(trg), ocpp))))
    for op in ["upcast", "downcast"]:
        for i in range(120):
            a = rand_layout(rng, 128, kind=rng.choice(["left", "right", "perm", "gaps", "zeros", "random"]),
                            max_depth=rng.choice([1, 2]))
            n = rng.choice([2, 2, 4, 4, 8, 16])
            unary(op, "%s<%d>(%%s)" % (op, n), dynamize(rng, a), n=n)
    for i in range(150):
        a = dynamize(rng, rand_layout(rng, 128, max_depth=rng.choice([1, 2]), int_prob=0.0))
        c = rand_coord(rng, a.shape)
        if "_" in flat(c):
            out.append(Case("slice", {"layout": a.json(), "coord": tuple_json(c)},
                            lay_in("a", a) + " auto so = slice_and_offset(%s, a); auto r = get<0>(so); ox_R<true>(r, false); "
                            "ox_P(\"offset\", get<1>(so)); ox_I(\"offset_value\", get<1>(so));" % cpp(c, "make_coord")))
        a = dynamize(rng, rand_layout(rng, 128, max_depth=rng.choice([1, 2]), int_prob=0.1))
        c = rand_coord(rng, a.shape, underscore_p=0.0, dyn_p=0.6)
        out.append(Case("crd2idx", {"layout": a.json(), "coord": tuple_json(c)},
                        lay_in("a", a) + " auto r = crd2idx(%s, a.shape(), a.stride()); ox_P(\"text\", r); ox_I(\"value\", r);"
                        % cpp(c, "make_coord")))
        s = rand_shape(rng, 128, max_depth=rng.choice([1, 2]))
        s = with_dyn(s, {j for j in range(len(flat(s))) if rng.random() < 0.5} or {0})
        idx = rng.randrange(prod(s))
        idx = D(idx) if rng.random() < 0.6 else idx
        out.append(Case("idx2crd", {"shape": shape_json(s), "index": tuple_json(idx)},
                        "auto r = idx2crd(%s, %s); ox_P(\"text\", r);" % (cpp(idx), cpp(s))))
    for i in range(100):
        b, m, sh = rng.choice(SWIZZLES)
        a = dynamize(rng, rand_layout(rng, rng.choice([64, 256, 512]), kind=rng.choice(["left", "right", "perm", "gaps"]),
                                      max_depth=rng.choice([1, 2])))
        out.append(Case("swizzle_layout", {"swizzle": [b, m, sh], "layout": a.json()},
                        lay_in("a", a) + " auto r = composition(Swizzle<%d,%d,%d>{}, a); ox_R<false>(r, false);" % (b, m, sh)))
    for i in range(100):
        s0 = rand_shape(rng, 16, max_depth=rng.choice([1, 1, 2]), max_rank=2, int_prob=0)
        s1 = rand_shape(rng, 16, max_depth=rng.choice([1, 1, 2]), max_rank=2, int_prob=0)
        sh = (s0 if len(s0) > 1 else s0[0], s1 if len(s1) > 1 else s1[0])
        a = dynamize(rng, L(sh, rand_stride(rng, sh)))
        out.append(Case("print_layout", {"layout": a.json()}, lay_in("a", a) + " ox_PL(a);"))
    return out


def odd_dynamic(rng, lay):
    """dynamize, then now and then a dynamic 1 for a shape, a dynamic 0 or a negative value for a stride:
    the values C++ cannot recognise as special when they are not static."""
    lay = dynamize(rng, lay)
    shp, std = flat(lay.shape), flat(lay.stride)
    for i in range(len(shp)):
        r = rng.random()
        if r < 0.15:
            shp[i] = D(1)
        elif r < 0.3:
            std[i] = D(0)
        elif r < 0.4:
            std[i] = type(std[i])(-int(std[i]))
    return L(unflatten(shp, lay.shape), unflatten(std, lay.stride))


def gen_dynamic_edges(rng):
    """Dynamic 1s, dynamic 0 strides and negative strides in the algebra, with dynamic tilers."""
    out = []
    for i in range(150):
        for op in ["coalesce", "filter", "right_inverse", "left_inverse", "complement", "make_layout_like",
                   "make_fragment_like"]:
            a = odd_dynamic(rng, rand_layout(rng, 64, max_depth=rng.choice([1, 2, 3]),
                                             kind=rng.choice(["left", "perm", "gaps", "zeros", None])))
            out.append(C_layout_op(op, lambda n: "%s(%s)" % (op, n), a))
        a = rand_layout(rng, max_size=rng.choice([16, 64, 128]), max_depth=rng.choice([1, 2, 3]))
        b = odd_dynamic(rng, rand_b_for(rng, a.size()))
        a = odd_dynamic(rng, a) if rng.random() < 0.6 else a
        out.append(Case("composition", {"a": a.json(), "b": b.json()},
                        lay_in("a", a) + " " + lay_in("b", b) + " " + res("composition(a, b)")))
        for op in DIVIDES + PRODUCTS:
            small = op in PRODUCTS
            a = rand_layout(rng, max_size=16 if small else 128, max_depth=rng.choice([1, 2]), int_prob=0)
            if small and rng.random() < 0.5:
                t = [rng.choice([1, 2, 3]) if rng.random() < 0.4 else rand_layout(rng, 8, max_depth=1, max_rank=2)
                     for _ in range(rng.randint(1, len(a.shape)))]
            elif small:
                t = rand_layout(rng, 8, max_depth=rng.choice([1, 2]), max_rank=2)
            else:
                t = rand_tuple_tiler(rng, a) if rng.random() < 0.6 else rand_tile_for(rng, a.size())
            a = odd_dynamic(rng, a) if rng.random() < 0.8 else a
            t = maybe_dyn_tiler(rng, t)
            case = Case(op, {"layout": a.json(), "tiler": tiler_json(t)},
                        lay_in("a", a) + " " + res("%s(a, %s)" % (op, tiler_cpp(t))))
            case.tag = "layout" if isinstance(t, L) else "tuple"
            out.append(case)
    return out


GENERATORS = [gen_make_layout, gen_coalesce, gen_filter, gen_composition, gen_complement, gen_inverse,
              gen_divide, gen_product, gen_common, gen_tile_to_shape, gen_cast, gen_slice, gen_swizzle,
              gen_print_layout, gen_errors, gen_notes, gen_like, gen_dynamic,
              gen_dynamic_edges]


# ----------------------------------------------------------------------------------------------
# C++: one function per case, a table of them, and main() running from a given index.

PRELUDE = r"""
#include <cute/tensor.hpp>
#include <cute/swizzle_layout.hpp>
#include <cstdio>
#include <cstdlib>
using namespace cute;
template <class X> void ox_P(const char* k, X const& x) { printf("\n@%s ", k); print(x); }
template <class X> void ox_I(const char* k, X const& x) { printf("\n@%s %d", k, int(x)); }
template <class X> void ox_V(X const& x) { ox_P("text", x); ox_I("value", x); }
template <class F> void ox_O(const char* k, F const& f, int n) {
  printf("\n@%s", k); for (int i = 0; i < n; ++i) printf(" %d", int(f(i))); }
template <class X> void ox_PL(X const& x) { printf("\n@print_layout\n"); print_layout(x); printf("@end_print_layout"); }
template <bool PROPS, class X> void ox_R(X const& r, bool pl) {
  ox_P("text", r);
  ox_O("offsets", r, int(size(r)));
  if constexpr (PROPS) {
    ox_I("size", size(r)); ox_I("cosize", cosize(r)); ox_I("rank", rank(r)); ox_I("depth", depth(r));
  }
  if constexpr (decltype(rank(r))::value == 2) { if (pl) ox_PL(r); }
}
"""


def render(cases):
    lines = PRELUDE.split("\n")
    spans = []
    for i, c in enumerate(cases):
        start = len(lines) + 1
        lines += ["static void c%d() {" % i, "  " + c.body, "}"]
        spans.append((start, start + 2))
    lines.append("typedef void (*fn_t)();")
    lines.append("static fn_t fns[] = {%s};" % ", ".join("c%d" % i for i in range(len(cases))))
    lines.append(r"""int main(int argc, char** argv) {
  int n = sizeof(fns) / sizeof(fns[0]);
  for (int i = argc > 1 ? atoi(argv[1]) : 0; i < n; ++i) {
    printf("\n@@BEGIN %d", i); fns[i](); printf("\n@@END %d\n", i); fflush(stdout);
  }
  return 0;
}""")
    return "\n".join(lines) + "\n", spans


def compile_chunk(cases, incs, tag):
    """Compile (dropping cases that fail to compile, recording them) and run one chunk.

    Returns {index: ("error", message) | ("ok", fields) | ("drop", why)}."""
    results = {}
    live = list(range(len(cases)))
    gen = os.path.join(BUILD, "gen")
    os.makedirs(gen, exist_ok=True)
    for attempt in range(12):
        src, spans = render([cases[i] for i in live])
        h = hashlib.sha1((src + " ".join(incs)).encode()).hexdigest()[:16]
        cpp_path = os.path.join(gen, "%s_%s.cpp" % (tag, h))
        exe = cpp_path[:-4]
        cache = cpp_path[:-4] + ".json"
        if os.path.exists(cache):
            with open(cache) as f:
                cached = json.load(f)
            if cached.get("ok"):
                for k, v in cached["results"].items():
                    results[live[int(k)]] = tuple(v)
                return results
            failed = {int(k): v for k, v in cached["failed"].items()}
        else:
            with open(cpp_path, "w") as f:
                f.write(src)
            cmd = ["nice", "-n", "10", "g++", "-std=c++17", "-O0", "-w", "-fmax-errors=0"]
            cmd += ["-I" + i for i in incs] + [cpp_path, "-o", exe]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode == 0:
                out = run_exe(exe, len(live))
                with open(cache, "w") as f:
                    json.dump({"ok": True, "results": {str(k): v for k, v in out.items()}}, f)
                for k, v in out.items():
                    results[live[k]] = v
                os.remove(exe)
                return results
            failed = parse_errors(p.stderr, spans, cpp_path)
            if not failed:
                sys.stderr.write(p.stderr[-4000:])
                raise RuntimeError("compile failed with no attributable case: " + cpp_path)
            with open(cache, "w") as f:
                json.dump({"ok": False, "failed": {str(k): v for k, v in failed.items()}}, f)
        for k, (kind, msg) in failed.items():
            results[live[k]] = (kind, msg)
        live = [i for k, i in enumerate(live) if k not in failed]
        if not live:
            return results
    raise RuntimeError("too many compile rounds for chunk " + tag)


SA = re.compile(r"error: static assertion failed(?:: (.*))?$")


def parse_errors(stderr, spans, fname):
    """Map compile errors to cases: {case: ("error", static_assert message) | ("drop", other error)}."""
    def case_of(line):
        for k, (a, b) in enumerate(spans):
            if a <= line <= b:
                return k
        return None
    failed = {}
    here = None
    for ln in stderr.splitlines():
        m = re.match(re.escape(fname) + r":(\d+):\d+:\s+required from here", ln)
        if m:
            here = case_of(int(m.group(1)))
            continue
        m = re.match(re.escape(fname) + r":(\d+):\d+: error: (.*)", ln)
        if m:
            k = case_of(int(m.group(1)))
            if k is not None and k not in failed:
                failed[k] = ("drop", m.group(2))
            here = None
            continue
        if "error:" in ln:
            m = SA.search(ln)
            if here is not None:
                if m:
                    if failed.get(here, ("",))[0] != "error":
                        failed[here] = ("error", (m.group(1) or "").strip())
                elif here not in failed:
                    failed[here] = ("drop", ln.split("error:", 1)[1].strip())
            here = None
    return failed


def run_exe(exe, n):
    """Run the binary; a case that crashes is dropped and the run resumes after it."""
    out = {}
    start = 0
    while start < n:
        p = subprocess.run([exe, str(start)], capture_output=True, text=True, timeout=600)
        nxt = start
        for block in p.stdout.split("\n@@BEGIN ")[1:]:
            idx_s, _, body = block.partition("\n")
            idx = int(idx_s)
            end = "\n@@END %d\n" % idx
            if end in "\n" + body:
                out[idx] = ("ok", parse_fields(("\n" + body)[:("\n" + body).index(end)]))
            else:
                out[idx] = ("drop", "runtime crash (rc=%d)" % p.returncode)
            nxt = idx + 1
        if nxt == start:  # crashed before printing anything
            out[start] = ("drop", "runtime crash (rc=%d)" % p.returncode)
            nxt = start + 1
        if p.returncode == 0:
            break
        start = nxt
    return out


def parse_fields(body):
    fields = {}
    pl = re.search(r"\n?@print_layout\n(.*)@end_print_layout", body, re.S)
    if pl:
        fields["print_layout"] = pl.group(1)
        body = body[:pl.start()] + body[pl.end():]
    for ln in body.split("\n"):
        if not ln.startswith("@"):
            continue
        key, _, val = ln[1:].partition(" ")
        if key == "offsets":
            fields[key] = [int(v) for v in val.split()]
        elif key in ("size", "cosize", "rank", "depth", "value", "offset_value"):
            fields[key] = int(val)
        else:
            fields[key] = val
    return fields


# ----------------------------------------------------------------------------------------------
# Toolchain discovery.

def find_cutlass_include():
    whl = os.environ.get("CUTLASS_WHEEL")
    if not whl:
        found = sorted(glob.glob(os.path.join(BUILD, "nvidia_cutlass-%s-*.whl" % CUTLASS_VERSION)))
        if found:
            whl = found[0]
        else:
            subprocess.check_call([sys.executable, "-m", "pip", "download", "--no-deps", "-d", BUILD,
                                   "nvidia-cutlass==" + CUTLASS_VERSION])
            whl = sorted(glob.glob(os.path.join(BUILD, "nvidia_cutlass-%s-*.whl" % CUTLASS_VERSION)))[0]
    inc = os.path.join(BUILD, "cutlass_library", "source", "include")
    stamp = os.path.join(BUILD, "headers.stamp")
    if not (os.path.exists(stamp) and open(stamp).read() == os.path.basename(whl)):
        with zipfile.ZipFile(whl) as z:
            z.extractall(BUILD, [n for n in z.namelist() if n.startswith("cutlass_library/source/include/")])
        with open(stamp, "w") as f:
            f.write(os.path.basename(whl))
    return inc


def find_cuda_include():
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        inc = os.path.join(home, "include")
        dirs = [inc] + ([os.path.join(inc, "cccl")] if os.path.isdir(os.path.join(inc, "cccl")) else [])
    elif shutil.which("nvcc"):  # ask nvcc where its headers are
        p = subprocess.run(["nvcc", "--dryrun", "-E", "-x", "cu", os.devnull], capture_output=True, text=True)
        dirs = re.findall(r'-I"?([^"\s]+)"?', p.stderr) + re.findall(r'-isystem" "([^"]+)"', p.stderr)
    else:
        dirs = []
    if not any(os.path.exists(os.path.join(d, "cuda_runtime.h")) for d in dirs):
        sys.exit("CUDA headers not found: set CUDA_HOME to a CUDA toolkit (only its headers are used)")
    return dirs


# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated generator names (e.g. gen_swizzle)")
    args = ap.parse_args()
    incs = [find_cutlass_include()] + find_cuda_include()

    cases = []
    for g in GENERATORS:
        if args.only and g.__name__ not in args.only.split(","):
            continue
        rng = random.Random("%d/%s" % (SEED, g.__name__))
        cases += g(rng)
    # no duplicates: C++ would report a failing duplicate only once
    seen, uniq = set(), []
    for c in cases:
        if c.key() not in seen:
            seen.add(c.key())
            uniq.append(c)
    cases = uniq
    print("%d cases" % len(cases), file=sys.stderr)

    chunks = [cases[i:i + CHUNK] for i in range(0, len(cases), CHUNK)]
    results = [None] * len(chunks)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = {ex.submit(compile_chunk, ch, incs, "c%03d" % k): k for k, ch in enumerate(chunks)}
        for fut in concurrent.futures.as_completed(futs):
            k = futs[fut]
            results[k] = fut.result()
            print("chunk %d/%d done" % (k + 1, len(chunks)), file=sys.stderr)

    by_op, dropped = {}, []
    counters = {}
    for ch, res_ in zip(chunks, results):
        for i, c in enumerate(ch):
            kind, val = res_[i]
            if kind == "drop":
                dropped.append((c.op, c.args, val))
                continue
            dyn = _has_dyn(c.args)
            prefix = ("err" if kind == "error" else "dyn" if dyn else "static") + ("-" + c.tag if c.tag else "")
            n = counters.get((c.op, prefix), 0)
            counters[(c.op, prefix)] = n + 1
            rec = {"id": "%s-%04d" % (prefix, n), "args": c.args}
            if kind == "error":
                rec["error"] = val
            else:
                rec["expect"] = val
            by_op.setdefault(c.op, []).append(rec)

    os.makedirs(CASES, exist_ok=True)
    for op, recs in sorted(by_op.items()):
        path = os.path.join(CASES, op + ".json")
        with open(path, "w") as f:
            f.write("[\n" + ",\n".join(json.dumps(r, separators=(",", ":")) for r in recs) + "\n]\n")
    summary = {op: len(r) for op, r in sorted(by_op.items())}
    print(json.dumps(summary, indent=1), file=sys.stderr)
    print("total %d cases, %d dropped (C++ rejected without a static_assert, or crashed)"
          % (sum(summary.values()), len(dropped)), file=sys.stderr)
    with open(os.path.join(BUILD, "dropped.json"), "w") as f:
        json.dump(dropped, f, indent=1)


def _has_dyn(x):
    """True when some input of a case has a dynamic integer ("dyn" lists a position)."""
    if isinstance(x, dict):
        return any((k == "dyn" and (v if isinstance(v, list) else any(v.values()))) or _has_dyn(v)
                   for k, v in x.items())
    if isinstance(x, list):
        return any(_has_dyn(e) for e in x)
    return False


if __name__ == "__main__":
    main()
