"""The PTX ISA's "matrix fragments" figures written as integer formulas: an oracle, independent of CuTe's
layouts, for the tests (the kernels' instructions take their fragments from cutelite's atoms).

Each function maps (lane, i) to a (row, column) of the operand, where i counts the lane's 16-bit (or,
for f32 accumulators, 32-bit) elements in register order: halves are packed two to a b32 register, the
element with the lower index in the low 16 bits. Notation: g = lane // 4 (the "group"), t = lane % 4
(the thread in the group).

tests/test_kernels_pure.py checks every MMA atom with an intrinsic, and every ldmatrix copy atom, against
these formulas; tests/test_seed_printouts.py checks printed fragment tables with them.
"""


# ---- mma.m16n8k16 (f16 / bf16 inputs): A 16x16 (row), B 16x8 (col), C/D 16x8 -------------------------
def a_m16n8k16(lane, i):
    """A element i (0..7; register i // 2) -> (m, k). Registers: (m=g, k=2t..) (m=g+8, k=2t..)
    (m=g, k=2t+8..) (m=g+8, k=2t+8..)."""
    return (lane >> 2) + 8 * ((i >> 1) & 1), 2 * (lane & 3) + (i & 1) + 8 * (i >> 2)


def b_m16n8k16(lane, i):
    """B element i (0..3) -> (k, n): n = g, k = 2t + (i % 2) + 8 * (i // 2)."""
    return 2 * (lane & 3) + (i & 1) + 8 * (i >> 1), lane >> 2


def c_m16n8(lane, i):
    """C/D element i (0..3) of any m16n8kK -> (m, n): m = g + 8 * (i // 2), n = 2t + i % 2.
    With f32 accumulators element i is register i; with f16 accumulators register i // 2 holds a pair."""
    return (lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)


# ---- mma.m16n8k8 (f16 / bf16 inputs): A 16x8 (row), B 8x8 (col), C/D 16x8 ----------------------------
def a_m16n8k8(lane, i):
    """A element i (0..3) -> (m, k): m = g + 8 * (i // 2), k = 2t + i % 2."""
    return (lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)


def b_m16n8k8(lane, i):
    """B element i (0..1) -> (k, n): k = 2t + i, n = g."""
    return 2 * (lane & 3) + i, lane >> 2


# ---- mma.m8n8k4 (Volta's shape): four independent 8x8x4 products, one per quad-pair ------------------
def quadpair(lane):
    """Which of the 4 independent products lane takes part in: lanes 4q..4q+3 and 16+4q..16+4q+3."""
    return (lane >> 2) & 3


def a_m8n8k4(lane, i):
    """A (row-major, 8x4) element i (0..3) -> (m, k) within the lane's quad-pair: a whole row."""
    return (lane & 3) + 4 * (lane >> 4), i


def b_m8n8k4(lane, i):
    """B (col-major, 4x8) element i (0..3) -> (k, n): a whole column."""
    return i, (lane & 3) + 4 * (lane >> 4)


def c_m8n8k4_f32(lane, i):
    """f32 C/D element i (0..7) -> (m, n): rows (lane&1) + (i&2) (+4 for lanes 16..31),
    columns (i&4) + (lane&2) + (i&1)."""
    return (lane & 1) + (i & 2) + 4 * (lane >> 4), (i & 4) + (lane & 2) + (i & 1)


def c_m8n8k4_f16(lane, i):
    """f16 C/D element i (0..7, four registers) -> (m, n): a whole row."""
    return (lane & 3) + 4 * (lane >> 4), i


# ---- ldmatrix.m8n8: up to four 8x8 matrices of 16-bit elements ----------------------------------------
def ldmatrix_row_of(lane):
    """Lane l supplies the address of row l % 8 of matrix l // 8 (x1 uses lanes 0-7, x2 lanes 0-15)."""
    return lane >> 3, lane & 7


def ldmatrix_elem(lane, h, trans=False):
    """Half h (0..1) of the register a lane receives for each matrix -> (row, col) of that 8x8 matrix,
    rows being the addressed rows. Without .trans: (g, 2t + h); with .trans: (2t + h, g)."""
    if trans:
        return 2 * (lane & 3) + h, lane >> 2
    return lane >> 2, 2 * (lane & 3) + h


# name -> (A map, number of A halves, B map, number of B halves, C map, number of C elements, M, N, K)
MMA_SHAPES = {
    "m16n8k16": (a_m16n8k16, 8, b_m16n8k16, 4, c_m16n8, 4, 16, 8, 16),
    "m16n8k8": (a_m16n8k8, 4, b_m16n8k8, 2, c_m16n8, 4, 16, 8, 8),
}
