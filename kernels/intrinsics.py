"""The intrinsics kernels call: real inline PTX on a GPU (`kernels.ptx`), pure-Python twins in the
simulator (`kernels.sim`). Which one is decided once, here, at import; the names and behaviour are the
same, so a kernel's source runs unchanged in both.

    from kernels.intrinsics import ldmatrix_x4, mma_m16n8k16_f32_f16, SMEM_ALIGN

Import this after kernels.setup() (it imports numba).
"""

from .runtime import in_simulator

if in_simulator():
    from . import sim as impl
else:
    from . import ptx as impl

__all__ = [
    "SIMULATOR", "SMEM_ALIGN",
    "mma_m8n8k4_f32_f16", "mma_m8n8k4_f16_f16",
    "mma_m16n8k8_f32_f16", "mma_m16n8k8_f16_f16", "mma_m16n8k8_f32_bf16",
    "mma_m16n8k16_f32_f16", "mma_m16n8k16_f16_f16", "mma_m16n8k16_f32_bf16",
    "ldmatrix_x1", "ldmatrix_x2", "ldmatrix_x4",
    "ldmatrix_x1_trans", "ldmatrix_x2_trans", "ldmatrix_x4_trans", "ldmatrix_x4_at", "ldmatrix_x4_trans_at",
    "cp_async_ca_4", "cp_async_ca_8", "cp_async_ca_16", "cp_async_cg_16", "cp_async_cg_16_at",
    "cp_async_commit", "cp_async_wait",
    "cp_async_cg_16_zfill",
] + ["%s_%s_v%d_%s" % (op, space, n, kind) for op in ("ld", "st") for space in ("global", "shared")
     for n in (1, 2, 4) for kind in ("f32", "b32")] + [
    "smem_addr", "pack_half2", "unpack_half2", "pack_bf16x2", "unpack_bf16x2",
    "shfl_sync", "shfl_xor_sync", "shfl_down_sync", "shfl_up_sync", "syncwarp",
]
# copy the chosen implementation's functions here (both modules define every name in __all__)
globals().update({name: getattr(impl, name) for name in __all__})


def mma_for(atom):
    """The intrinsic of an MMA atom's instruction (atom.ptx, e.g. mma.sync.aligned.m16n8k16.row.col.f32...)."""
    import re
    m = re.fullmatch(r"mma\.sync\.aligned\.(m\d+n\d+k\d+)\.row\.col\.(\w+)\.(\w+)\.\2?\w*\.\w+", atom.ptx)
    name = m and "mma_%s_%s_%s" % (m.group(1), m.group(2), m.group(3))
    if not name or name not in globals():
        raise NotImplementedError("no intrinsic for %s (%s) yet" % (atom.name, atom.ptx))
    return globals()[name]
