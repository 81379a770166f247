"""What an atom's instruction looks like in registers, derived from its traits: the one place that ties
cutelite's MMA and copy atoms to the intrinsics of kernels.instructions (ptx.py on a GPU, sim.py in the
simulator both build theirs from here).

  * mma_registers(atom): per operand A, B, C the number of 32-bit registers a lane passes (values of its TV
    layout times the element width, two 16-bit values a register) and the inline-asm constraint letter;
  * LDSM_PTX: the PTX of each ldmatrix copy op and the registers it fills.
Adding an MMA atom with inputs of INPUTS to cutelite gives it an intrinsic here with no other change.
"""

from cutelite import size
from cutelite.numeric import BFloat16, Float16, Float32, numeric

from ..capability import mma_need

__all__ = ["INPUTS", "ACCUMULATORS", "mma_registers", "mma_name", "mma_need", "LDSM_PTX", "ldmatrix_name",
           "supported"]

# the element types of the mma.sync intrinsics: A and B, and C (= D)
INPUTS, ACCUMULATORS = (Float16, BFloat16), (Float16, Float32)

# ldmatrix copy op -> (PTX without operands, registers per lane)
LDSM_PTX = {
    "SM75_U32x1_LDSM_N": ("ldmatrix.sync.aligned.m8n8.x1.shared.b16", 1),
    "SM75_U32x2_LDSM_N": ("ldmatrix.sync.aligned.m8n8.x2.shared.b16", 2),
    "SM75_U32x4_LDSM_N": ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 4),
    "SM75_U16x2_LDSM_T": ("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16", 1),
    "SM75_U16x4_LDSM_T": ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", 2),
    "SM75_U16x8_LDSM_T": ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 4),
}


def supported(atom):
    """Whether the atom has an intrinsic here: a warp-wide mma.sync (32 lanes, or Volta's quad-pairs) with
    A and B of one of INPUTS and C and D of one of ACCUMULATORS."""
    d, a, b, c = atom.types
    return (atom.ptx.startswith("mma.sync.aligned.") and size(atom.ThrID) in (8, 32) and a == b
            and a in [t.name for t in INPUTS] and c == d and c in [t.name for t in ACCUMULATORS])


def mma_registers(atom):
    """{"A": (registers, constraint), "B": ..., "C": ...}: what one lane passes to the atom's instruction.

    Post: registers * 32 == size(LayoutX_TV, 1) * bits of X's type; constraint "f" for f32 values, "r"
          for registers of packed narrower values.
    """
    if not supported(atom):
        raise NotImplementedError("kernels.instructions: no intrinsic for %s (%s); supported: warp-wide "
                                  "mma.sync with %s inputs" % (atom.name, atom.ptx, "/".join(t.ptx for t in INPUTS)))
    out = {}
    for op, t in (("A", atom.types[1]), ("B", atom.types[2]), ("C", atom.types[3])):
        bits = size(getattr(atom, "Layout%s_TV" % op), 1) * numeric(t).bits
        out[op] = (bits // 32, "f" if t == Float32.name else "r")
    return out


def mma_name(atom):
    """The intrinsic's name, from the atom's PTX: mma_<shape>_<accumulator>_<input>, with the operand
    orders added when they are not row.col (mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32 ->
    mma_m8n8k4_col_row_f32_f16)."""
    parts = atom.ptx.split(".")                       # mma sync aligned <shape> <a> <b> <d> <a type> ...
    order = "" if parts[4:6] == ["row", "col"] else "_%s_%s" % tuple(parts[4:6])
    return "mma_%s%s_%s_%s" % (parts[3], order, parts[6], parts[7])


def ldmatrix_name(op):
    """ldmatrix_x<matrices>[_trans] of an ldmatrix copy op."""
    return "ldmatrix_x%d%s" % (LDSM_PTX[op][1], "_trans" if ".trans" in LDSM_PTX[op][0] else "")
