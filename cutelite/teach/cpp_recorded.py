"""What compiled C++ CuTe printed for the cases chapters 6 and 8 check against, kept in the package so that
a reader who only pip-installed it (no tests/ folder) checks against the same text.

CPP_GMMA is copied from tests/fixtures/gmma_cpp.txt (made by tests/fixtures/gen_gmma.sh, C++ CuTe compiled as
host code; tests/test_pipeline.py asserts that every entry still equals the fixture's block). CPP_LDSM_COPY is
the first line of each case of tests/fixtures/ldsm_copy_cpp.txt (gen_ldsm_copy.sh): whether g++ compiles
copy(tiled_copy, tXsA, tXrA) for chapter 6's ldmatrix TiledCopy of A on a (128, 32) half tile with that
stride (tests/test_copy_vectorize.py asserts it). Keys are the fixture's block names.
"""

__all__ = ["CPP_GMMA", "CPP_LDSM_COPY", "cpp_desc_fields"]

CPP_LDSM_COPY = {
    "SM75_U16x8_LDSM_T (1,128)": "compiles",
    "SM75_U16x8_LDSM_T (1,136)": "compiles",
    "SM75_U16x8_LDSM_T (1,129)": "compiles",
    "SM75_U16x8_LDSM_T (32,1)": "error: static assertion failed: Copy_Traits: src failed to vectorize into "
                                "registers. Layout is incompatible with this CopyOp.",
    "SM75_U16x8_LDSM_T (40,1)": "error: static assertion failed: Copy_Traits: src failed to vectorize into "
                                "registers. Layout is incompatible with this CopyOp.",
    "SM75_U16x8_LDSM_T (33,1)": "error: static assertion failed: Divisibility condition",
    "SM75_U32x4_LDSM_N (1,128)": "error: static assertion failed: Copy_Traits: src failed to vectorize into "
                                 "registers. Layout is incompatible with this CopyOp.",
    "SM75_U32x4_LDSM_N (1,136)": "error: static assertion failed: Copy_Traits: src failed to vectorize into "
                                 "registers. Layout is incompatible with this CopyOp.",
    "SM75_U32x4_LDSM_N (1,129)": "error: static assertion failed: Divisibility condition",
    "SM75_U32x4_LDSM_N (32,1)": "compiles",
    "SM75_U32x4_LDSM_N (40,1)": "compiles",
    "SM75_U32x4_LDSM_N (33,1)": "compiles",
}

CPP_GMMA = {
    "layout GMMA::Layout_K_SW128_Atom<half_t>":
        "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)\n",
    "tile tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>,(128,64))":
        "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))\n",
    "desc K SW128 half_t (128,64) tile (128,16) block 1":
        "offset 32\n"
        "GmmaDescriptor: 0x4000004000010000\n"
        "  start_addr :  0x0000\n"
        "  leading_off:  0x0001 (1)\n"
        "  stride_off :  0x0040 (64)\n"
        "  base_offset:  0x0\n"
        "  layout_type:  0x1 (B128)\n",
    "desc K SW64 half_t (64,64) tile (64,16) block 0":
        "offset 0\n"
        "GmmaDescriptor: 0x8000002000010000\n"
        "  start_addr :  0x0000\n"
        "  leading_off:  0x0001 (1)\n"
        "  stride_off :  0x0020 (32)\n"
        "  base_offset:  0x0\n"
        "  layout_type:  0x2 (B64)\n",
    "desc MN SW128 half_t (64,64) tile (64,16) block 0":
        "offset 0\n"
        "GmmaDescriptor: 0x4000004000000000\n"
        "  start_addr :  0x0000\n"
        "  leading_off:  0x0000 (0)\n"
        "  stride_off :  0x0040 (64)\n"
        "  base_offset:  0x0\n"
        "  layout_type:  0x1 (B128)\n",
}


def cpp_desc_fields(key):
    """(byte offset of the tile, descriptor as an int, leading_off, stride_off, layout_type) of a recorded
    descriptor block, read from C++'s printed text."""
    if not (isinstance(key, str) and key.startswith("desc ") and key in CPP_GMMA):
        raise ValueError(f"cpp_desc_fields: no recorded descriptor {key!r}; recorded: "
                         + ", ".join(k for k in CPP_GMMA if k.startswith("desc ")))
    lines = CPP_GMMA[key].splitlines()
    field = {ln.split(":")[0].strip(): ln.split(":")[1].split()[0] for ln in lines[2:]}
    return (int(lines[0].split()[1]), int(lines[1].split(":")[1], 16), int(field["leading_off"], 16),
            int(field["stride_off"], 16), int(field["layout_type"], 16))
