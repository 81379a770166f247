"""cutelite.dsl's Hopper surface against NVIDIA's CuTe DSL (nvidia-cutlass-dsl 4.8.1): warpgroup MMA atoms
(16-bit and 8-bit float inputs) and TiledMMAs, GMMA shared-memory layout atoms, TMA atoms, TMA tensors and
tma_partition, built in both and compared as the DSL prints them (the smem part of tma_partition as its
layout: the DSL prints a pointer).

The DSL builds its warpgroup ops only for sm_90a (CUTE_DSL_ARCH), so its side runs in a child process:
`python tests/test_dsl_hopper.py` prints its texts as JSON. Skipped where the DSL does not import."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

# (ab dtype, acc dtype, N, A source, A major, B major) of the warpgroup MMAs compared
MMAS = [("Float16", "Float32", 128, "SMEM", "K", "K"), ("BFloat16", "Float32", 64, "SMEM", "MN", "K"),
        ("Float16", "Float16", 256, "RMEM", "K", "MN"), ("Float16", "Float32", 8, "SMEM", "K", "MN")]
# (A dtype, B dtype, acc dtype, N, A source) of the 8-bit float warpgroup MMAs compared (both operands K-major)
F8_MMAS = [("Float8E4M3FN", "Float8E4M3FN", "Float32", 128, "SMEM"),
           ("Float8E4M3FN", "Float8E5M2", "Float16", 64, "RMEM"), ("Float8E5M2", "Float8E4M3FN", "Float32", 256, "SMEM")]
KINDS = ["K_INTER", "K_SW32", "K_SW64", "K_SW128", "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128"]
# (K-major (M, K) global tensor, smem tile, its layout atom) of the TMA loads compared
TMAS = [((512, 256), (128, 64), "K_SW128"), ((256, 128), (64, 32), "K_SW64"), ((128, 64), (64, 64), "K_INTER")]
# Texts that differ, and why (the same function: chapter 9's "regrouped" kind)
WHY = "C's value mode is (2,2,N/8) in C++ and cutelite; for N = 8 the DSL drops the mode of extent 1: (2,2)"
KNOWN = {"atom Float16 Float32 8 SMEM K MN": WHY, "tiled (2,1,1) Float16 Float32 8 SMEM K MN": WHY}


def build(cute, nvgpu, make_gmem, make_smem, smem_text):
    """Every object of the comparison, as {name: the DSL's text} (pretty_str for cutelite.dsl)."""
    wg, cp = nvgpu.warpgroup, nvgpu.cpasync
    out = {}
    for ab, acc, n, src, ma, mb in MMAS:
        op = wg.MmaF16BF16Op(getattr(cute, ab), getattr(cute, acc), (64, n, 16), getattr(wg.OperandSource, src),
                             getattr(nvgpu.OperandMajorMode, ma), getattr(nvgpu.OperandMajorMode, mb))
        out[f"atom {ab} {acc} {n} {src} {ma} {mb}"] = cute.pretty_str(cute.make_mma_atom(op))
        out[f"tiled (2,1,1) {ab} {acc} {n} {src} {ma} {mb}"] = cute.pretty_str(cute.make_tiled_mma(op, (2, 1, 1)))
    for a, b, acc, n, src in F8_MMAS:
        op = wg.MmaF8Op(getattr(cute, a), getattr(cute, b), getattr(cute, acc), (64, n, 32),
                        getattr(wg.OperandSource, src), nvgpu.OperandMajorMode.K, nvgpu.OperandMajorMode.K)
        out[f"atom {a} {b} {acc} {n} {src}"] = cute.pretty_str(cute.make_mma_atom(op))
        out[f"tiled (2,1,1) {a} {b} {acc} {n} {src}"] = cute.pretty_str(cute.make_tiled_mma(op, (2, 1, 1)))
    for kind in KINDS:
        for t in ("Float16", "Float32", "Float8E4M3FN"):
            atom = wg.make_smem_layout_atom(getattr(wg.SmemLayoutAtomKind, kind), getattr(cute, t))
            out[f"layout atom {kind} {t}"] = cute.pretty_str(atom)
            out[f"tiled layout {kind} {t}"] = cute.pretty_str(cute.tile_to_shape(atom, (128, 128), (0, 1)))
    for shape, tile, kind in TMAS:
        smem = cute.tile_to_shape(wg.make_smem_layout_atom(getattr(wg.SmemLayoutAtomKind, kind), cute.Float16),
                                  tile, (0, 1))
        atom, tma = cp.make_tiled_tma_atom(cp.CopyBulkTensorTileG2SOp(), make_gmem(shape), smem, tile)
        key = f"tma {shape} {tile} {kind}"
        out[key + " atom"], out[key + " tensor"] = cute.pretty_str(atom), cute.pretty_str(tma)
        gA = cute.local_tile(tma, tile, (0, None))
        sA, gpart = cp.tma_partition(atom, 0, cute.make_layout(1), cute.group_modes(make_smem(smem), 0, 2),
                                     cute.group_modes(gA, 0, 2))
        out[key + " gmem part"] = cute.pretty_str(gpart)
        out[key + " smem part"] = smem_text(sA)
    return out


def _dsl_texts():
    """Run in the child: the DSL's side, traced for sm_90a."""
    from kernels.dsl import trace
    import cutlass
    import cutlass.cute as cute

    def gmem(shape):
        return cute.make_tensor(cute.make_ptr(cutlass.Float16, 0, cute.AddressSpace.gmem, assumed_align=16),
                                cute.make_layout(shape, stride=(shape[1], 1)))

    def smem(layout):
        return cute.make_tensor(cute.make_ptr(cutlass.Float16, 0, cute.AddressSpace.smem, assumed_align=1024), layout)

    class Names:       # the element types where cutelite.dsl has them: on the module
        Float16, BFloat16, Float32 = cutlass.Float16, cutlass.BFloat16, cutlass.Float32
        Float8E4M3FN, Float8E5M2 = cutlass.Float8E4M3FN, cutlass.Float8E5M2
        pretty_str, make_mma_atom, make_tiled_mma = cute.pretty_str, cute.make_mma_atom, cute.make_tiled_mma
        tile_to_shape, local_tile, make_layout, group_modes = (cute.tile_to_shape, cute.local_tile, cute.make_layout,
                                                               cute.group_modes)

    def smem_text(t):       # the layout, without the pointer the DSL prints before it
        text = cute.pretty_str(t)
        return text[text.index("> o ") + 4:-1]

    return trace(lambda: build(Names, cute.nvgpu, gmem, smem, smem_text))


@pytest.fixture(scope="module")
def dsl_texts():
    from kernels.dsl import missing
    if missing():
        pytest.skip(missing())
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, __file__], env=env, cwd=root, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_the_hopper_surface_prints_what_the_dsl_prints(dsl_texts):
    import cutelite.dsl as cute

    def gmem(shape):
        return cute.make_tensor(np.zeros(shape[0] * shape[1], np.float16), cute.make_layout(shape, stride=(shape[1], 1)))

    def smem(layout):
        return cute.make_tensor(np.zeros(cute.cosize(layout), np.float16), layout)

    def smem_text(t):       # the swizzle, which cutelite keeps in the tensor, before the layout
        sw = t.swizzle
        return (f"{cute.pretty_str(sw)} o 0 o " if sw is not None and sw.bits else "") + cute.pretty_str(t.layout)

    ours = build(cute, cute.nvgpu, gmem, smem, smem_text)
    assert ours.keys() == dsl_texts.keys()
    differ = {k: (ours[k], dsl_texts[k]) for k in ours if ours[k] != dsl_texts[k]}
    assert differ.keys() == KNOWN.keys(), differ
    for ours_text, theirs in differ.values():
        assert ours_text.replace("(2,2,1)):", "(2,2)):").replace("(64,8,512))", "(64,8))") == theirs


if __name__ == "__main__":
    import kernels
    kernels.setup(verbose=False)
    print(json.dumps(_dsl_texts()))
