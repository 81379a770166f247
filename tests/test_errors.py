"""Bad input gets a clear error naming the operation and the values, never a wrong layout."""

import pytest

from cutelite import (
    Layout, Swizzle, _, composition, complement, left_inverse, upcast, downcast, print_layout,
    logical_divide, make_layout, tile_to_shape,
)


def test_shape_and_stride_not_congruent():
    with pytest.raises(ValueError, match="not congruent"):
        Layout((4, 8), (1, 4, 8))


@pytest.mark.parametrize("shape", [0, -2, (4, 0)])
def test_non_positive_extents(shape):
    with pytest.raises(ValueError, match="non-positive"):
        Layout(shape)


@pytest.mark.parametrize("shape", [4.0, "4", (4, 2.5), [4, 8], True])
def test_non_integers(shape):
    with pytest.raises(TypeError):
        Layout(shape)


def test_composition_stride_divisibility():
    with pytest.raises(ValueError, match=r"stride _9 .* shape _4 .*Stride Divisibility"):
        composition(Layout((4, 6), (1, 5)), Layout(2, 9))


def test_composition_shape_divisibility():
    with pytest.raises(ValueError, match="Shape Divisibility"):
        composition(Layout((3, 4), (1, 10)), Layout(3, 2))


def test_complement_of_non_injective_layout():
    with pytest.raises(ValueError, match="Non-injective"):
        complement(Layout((2, 2), (1, 1)))


def test_left_inverse_divisibility():
    with pytest.raises(ValueError, match="Left inverse divisibility"):
        left_inverse(Layout((2, 2), (2, 3)))


def test_upcast_and_downcast_conditions():
    with pytest.raises(ValueError, match="Divisibility condition"):
        upcast(Layout((4, 4), (3, 12)), 2)
    with pytest.raises(ValueError, match="Downcast requires adjacent elements"):
        downcast(Layout((4, 4), (2, 8)), 2)


def test_swizzle_masks_must_not_overlap():
    with pytest.raises(ValueError, match=r"abs\(SShift\) must be more than BBits"):
        Swizzle(3, 1, 2)


def test_coordinate_of_the_wrong_rank():
    """C++ does not compile these ("Mismatched Ranks"); a coordinate past the shape it computes
    (tests/test_extend.py)."""
    layout = Layout((4, 8))
    with pytest.raises(IndexError, match="does not match"):
        layout(1, 2, 3)
    with pytest.raises(IndexError, match="does not match"):
        layout(_, 1, 2)


def test_print_layout_needs_rank_2():
    with pytest.raises(ValueError, match="rank-2"):
        print_layout(Layout((2, 2, 2)))


def test_tiler_with_too_many_modes():
    with pytest.raises(ValueError, match="more modes"):
        logical_divide(Layout(8), (2, 2))
    with pytest.raises(ValueError, match="does not divide"):
        tile_to_shape(Layout((3, 3)), (8, 8))


def test_make_layout_bad_arguments():
    with pytest.raises(TypeError):
        make_layout()


# ---- the wrong kinds of issue 18: each a TypeError or ValueError naming the operation -------------------
import numpy as np  # noqa: E402

from cutelite import (  # noqa: E402
    ceil_div, coalesce, append, prepend, bank_of, flatten, inner_partition, local_partition, local_tile,
    make_mma_atom, make_tiled_mma, make_tensor, outer_partition, owner_of, prefix_product, shape_div,
    swizzle_for, tile_size, Tensor, OutOfRange,
)
from cutelite.errors import MAX_DEPTH, QUOTE  # noqa: E402
from cutelite.int_tuple import flatten as flatten_tuple  # noqa: E402
from cutelite.parse import parse_layout, parse_operand  # noqa: E402


def nested(depth, leaf=2):
    for _ in range(depth):
        leaf = (leaf,)
    return leaf


@pytest.mark.parametrize("fn", [append, prepend])
def test_append_and_prepend_take_a_layout(fn):
    with pytest.raises(TypeError, match=f"{fn.__name__}: expected a Layout, got 4"):
        fn(Layout(4), 4)
    with pytest.raises(ValueError, match="at least 0"):
        fn(Layout(4), Layout(2), -1)


@pytest.mark.parametrize("text", [None, 4, b"4:1"])
def test_parse_layout_takes_text(text):
    with pytest.raises(TypeError, match="parse_layout: expected text"):
        parse_layout(text)


@pytest.mark.parametrize("fn", [local_tile, inner_partition, outer_partition])
def test_partitions_take_tensors_as_in_cpp(fn):
    with pytest.raises(TypeError, match=f"{fn.__name__}: expected a Tensor, got .*only tensors"):
        fn(Layout((32, 32)), (8, 8), (1, _))


def test_local_partition_takes_a_tensor_as_in_cpp():
    with pytest.raises(TypeError, match="local_partition: expected a Tensor"):
        local_partition(Layout((32, 32)), Layout((4, 8)), 3)


@pytest.mark.parametrize("call", [
    lambda: parse_layout("(" * 330 + "1" + ")" * 330 + ":" + "(" * 330 + "1" + ")" * 330),
    lambda: parse_operand("(" * 330 + "1" + ")" * 330 + ":1"),
    lambda: Layout(nested(2000)),
    lambda: Layout(4, nested(2000)),
    lambda: composition(Layout(4), nested(2000)),
    lambda: logical_divide(Layout(4), nested(2000)),
    lambda: prefix_product(nested(2000)),
    lambda: shape_div(nested(2000), 2),
    lambda: Layout((4, 8))(nested(2000, 1)),
])
def test_nesting_past_the_depth_limit_is_a_value_error_naming_it(call):
    with pytest.raises(ValueError, match=f"more than {MAX_DEPTH} levels deep"):
        call()


def test_nesting_up_to_the_limit_works():
    deep = nested(MAX_DEPTH - 1, 4)
    lay = Layout(deep)
    assert flatten(lay).shape == (4,) and str(coalesce(lay)) == "_4:_1"
    assert prefix_product(deep) == nested(MAX_DEPTH - 1, 1)
    assert flatten_tuple(nested(2000)) == (2,)   # flatten of an IntTuple walks any depth


@pytest.mark.parametrize("call, op", [
    (lambda: shape_div(4, 0), "shape_div"), (lambda: ceil_div(4, 0), "ceil_div"),
    (lambda: upcast(Layout((4, 8)), 0), "upcast"), (lambda: downcast(Layout((4, 8)), 0), "downcast"),
    (lambda: swizzle_for(64, 0), "swizzle_for"), (lambda: swizzle_for(0, 2), "swizzle_for"),
    (lambda: swizzle_for(48, 2), "swizzle_for"), (lambda: bank_of(1.5), "bank_of"), (lambda: bank_of(-4), "bank_of"),
    (lambda: coalesce(Layout((4, 8)), "x"), "coalesce"),
    (lambda: Swizzle(10 ** 30, 0, 10 ** 30), "Swizzle"),
])
def test_nonsense_values_are_refused_naming_the_operation(call, op):
    with pytest.raises((TypeError, ValueError), match=op):
        call()


def test_tile_size_past_the_modes_is_out_of_range():
    mma = make_tiled_mma(make_mma_atom("SM80_16x8x8_F16F16F16F16_TN"), Layout((2, 2, 1)))
    assert [tile_size(mma, i) for i in range(3)] == [32, 16, 8]
    for i in (5, 3, -1):
        with pytest.raises(OutOfRange, match="tile_size: mode"):
            tile_size(mma, i)


def test_owner_of_refuses_a_quad_pair_the_warp_does_not_have():
    volta = make_mma_atom("SM70_8x8x4_F16F16F16F16_TN")
    assert owner_of(volta, "A", 1, 2, quadpair=3)[0] == owner_of(volta, "A", 1, 2)[0] + 12
    with pytest.raises(ValueError, match="owner_of: quadpair must be in 0..3"):
        owner_of(volta, "A", 1, 2, quadpair=9)
    with pytest.raises(ValueError, match="owner_of: quadpair must be in 0..0"):
        owner_of(make_mma_atom("SM80_16x8x8_F16F16F16F16_TN"), "A", 1, 2, quadpair=1)


def test_a_tensor_never_wraps_through_negative_indexing():
    data = np.arange(8.0)
    t = Tensor(data, Layout(4, -1))            # offset 0 with stride -1 reaches -1, -2, -3
    assert t(0) == 0.0
    with pytest.raises(OutOfRange, match="reaches element -1"):
        t(1)
    with pytest.raises(OutOfRange):
        t[2] = 1.0
    with pytest.raises(OutOfRange):
        t.to_numpy()
    assert Tensor(data, Layout(4, -1), 3).to_numpy().tolist() == [3.0, 2.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="make_tensor"):
        make_tensor(data, Layout(4, -1))


@pytest.mark.parametrize("text", ["(" + "1," * 50000 + "x", "9" * 5000, "_" + "9" * 5000, "(" * 5000])
def test_parser_messages_quote_at_most_about_200_characters(text):
    for fn in (parse_layout, parse_operand):
        with pytest.raises(ValueError) as e:
            fn(text)
        assert len(str(e.value)) < 2 * QUOTE + 200, (fn.__name__, len(str(e.value)))


@pytest.mark.parametrize("text", ["(\u0664,8):(1,4)", "(4,8):(1,\u0664)", "\u0664", "(\uff14,8)", "(4,8):(\u0661,4)"])
def test_parser_refuses_digits_other_than_ascii(text):
    for fn in (parse_layout, parse_operand):
        with pytest.raises(ValueError, match=fn.__name__):
            fn(text)


def test_swizzle_masks_past_32_bits_are_refused():
    assert Swizzle(3, 4, 25)(1) == 1
    with pytest.raises(ValueError, match="32-bit"):
        Swizzle(3, 4, 26)


# ---- issue 28: the Hopper helpers validate every field; both sides of each bound ------------------------
from cutelite import make_gmma_desc, multicast_mask, tile_to_smem  # noqa: E402
from cutelite import pipeline as P  # noqa: E402
from cutelite import gmma as cl_gmma  # noqa: E402
from cutelite.gmma import GmmaDescriptor, Layout_K_INTER_Atom, Layout_K_SW32_Atom  # noqa: E402

SW32_TILE = tile_to_smem(Layout_K_SW32_Atom("half_t"), (64, 16))   # one k-block, 32-byte swizzle


def test_gmma_descriptor_fields_fit_their_bits():
    """cute/arch/mma_sm90_desc.hpp: start address, LBO and SBO 14 bits, base offset 3 bits (49-51), layout type 2
    bits (62-63); PTX reads the base offset for the swizzled modes only."""
    top = GmmaDescriptor(2 ** 14 - 1, 2 ** 14 - 1, 2 ** 14 - 1, 7, 3)
    assert top.desc == (2 ** 14 - 1) | (2 ** 14 - 1) << 16 | (2 ** 14 - 1) << 32 | 7 << 49 | 3 << 62
    for field, bits in (("start_address", 14), ("leading_byte_offset", 14), ("stride_byte_offset", 14),
                        ("base_offset", 3), ("layout_type", 2)):
        for bad in (1 << bits, -1, 1.0):
            args = dict(start_address=0, leading_byte_offset=1, stride_byte_offset=64, base_offset=0, layout_type=1)
            args[field] = bad
            with pytest.raises(ValueError, match=f"GmmaDescriptor: {field} .* does not fit the .* {bits}-bit"):
                GmmaDescriptor(**args)
    with pytest.raises(ValueError, match="GmmaDescriptor: base_offset 1 with no swizzle"):
        GmmaDescriptor(0, 1, 8, 1, 0)


def test_make_gmma_desc_base_offset_stays_in_bits_49_to_51():
    d = make_gmma_desc("K", SW32_TILE, base_offset=7)
    assert (d.desc >> 49) & 0b111 == 7 and (d.desc >> 52) & 0x3FF == 0 and str(d).count("base_offset:  0x7") == 1
    for bad in (8, 9, -1, True):
        with pytest.raises(ValueError, match="make_gmma_desc: base_offset .* must be an int in 0..7"):
            make_gmma_desc("K", SW32_TILE, base_offset=bad)
    plain = tile_to_smem(Layout_K_INTER_Atom("half_t"), (64, 16)).layout_b     # no swizzle: INTERLEAVE
    assert make_gmma_desc("K", plain, element_bits=16, base_offset=0).layout_type == 0
    with pytest.raises(ValueError, match="make_gmma_desc: base_offset 1 for a tile without a swizzle"):
        make_gmma_desc("K", plain, element_bits=16, base_offset=1)


@pytest.mark.parametrize("bits", [-16, 0, 24, 256, 2.0])
def test_make_gmma_desc_element_bits_divide_16_bytes(bits):
    with pytest.raises(ValueError, match="make_gmma_desc: element_bits must be a power of two from 1 to 128"):
        make_gmma_desc("K", Layout((64, 16), (16, 1)), element_bits=bits)


def test_make_gmma_desc_element_bits_must_match_the_layout():
    assert make_gmma_desc("K", SW32_TILE, element_bits=16) == make_gmma_desc("K", SW32_TILE)
    with pytest.raises(ValueError, match="make_gmma_desc: element_bits 32 differs from the 16-bit elements"):
        make_gmma_desc("K", SW32_TILE, element_bits=32)


def test_launch_register_cap_is_at_most_255():
    """CUDA C++ Programming Guide, technical specifications: at most 255 registers a thread; registers are
    allotted per warp, 8 a thread at a time, from the SM's 65536."""
    assert [P.launch_register_cap(t) for t in (32, 128, 256, 384, 512, 1024)] == [255, 255, 255, 168, 128, 64]
    assert P.launch_register_cap(330) == 184      # 11 warps: 65536 / 352 = 186.2; 65536 / 330 would give 192
    for bad in (0, 1025):
        with pytest.raises(ValueError, match="launch_register_cap: threads must be from 1 to 1024"):
            P.launch_register_cap(bad)
    with pytest.raises(ValueError, match="launch_register_cap: a register file of 4096 leaves 32 warps fewer"):
        P.launch_register_cap(1024, 4096)
    assert P.setmaxnreg_room([], 1) == 256        # a 255-register thread holds 256: setmaxnreg's top still fits
    # PTX setmaxnreg: a multiple of 8 from 24 to 256, both ends taken
    assert P.setmaxnreg_plan([("one", 1, 256)])["total"] == 128 * 256
    assert P.setmaxnreg_plan([("low", 1, 24), ("high", 1, 256)])["total"] == 128 * (24 + 256)
    for bad in (16, 264, 252):
        with pytest.raises(ValueError, match="setmaxnreg takes a multiple of 8 from 24 to 256"):
            P.setmaxnreg_plan([("one", 1, bad)])


def test_tma_box_extents_are_1_to_256_in_1_to_5_dimensions():
    """PTX cp.async.bulk.tensor .1d-.5d; C++ make_tma_copy_desc asserts smem_box_shape[i] in 1..256."""
    assert P.tma_box_bytes((256,), 8) == 256 and P.tma_box_bytes((1, 1, 1, 1, 256), 64) == 2048
    for box in ((257,), (0, 8), (-4, 8), (128, 512)):
        with pytest.raises(ValueError, match="tma_box_bytes: box extent must be from 1 to 256"):
            P.tma_box_bytes(box, 16)
    for box in ((), (2,) * 6):
        with pytest.raises(ValueError, match="tma_box_bytes: a box has 1 to 5 dimensions"):
            P.tma_box_bytes(box, 16)
    for bits in (4, 128, 12):
        with pytest.raises(ValueError, match="tma_box_bytes: element_bits must be 8, 16, 32 or 64"):
            P.tma_box_bytes((8, 8), bits)
    with pytest.raises(TypeError, match="tma_box_bytes: a box is a tuple"):
        P.tma_box_bytes(128, 16)


def test_expect_tx_bytes_fits_an_mbarrier():
    """A negative box no longer sums to 0; the total is at most 2^20 - 1, an mbarrier's tx-count."""
    with pytest.raises(ValueError, match="tma_box_bytes: box extent must be from 1 to 256, got -4"):
        P.expect_tx_bytes([(-4, 8), (4, 8)], 16)
    assert P.expect_tx_bytes([(256, 256, 15), (255, 256), (255,)], 8) == 2 ** 20 - 1
    with pytest.raises(ValueError, match="expect_tx_bytes: 1048576 bytes is more than an mbarrier's tx-count"):
        P.expect_tx_bytes([(256, 256, 16)], 8)
    with pytest.raises(TypeError, match="expect_tx_bytes: boxes must be a non-empty list"):
        P.expect_tx_bytes([], 16)


def test_mbarrier_counts_stay_within_2_to_the_20():
    assert P.MBarrier("b", 2 ** 20 - 1).count == 2 ** 20 - 1
    with pytest.raises(ValueError, match="MBarrier b: count must be from 1 to 1048575, got 1048576"):
        P.MBarrier("b", 2 ** 20)
    bar = P.MBarrier("b", 2)
    bar.arrive(expect_tx=2 ** 20 - 1)
    with pytest.raises(ValueError, match="b: arrive: expect_tx must be from 0 to 1048575, got -1"):
        bar.arrive(expect_tx=-1)
    with pytest.raises(RuntimeError, match="b: tx-count 1048576 in phase 0 leaves PTX's range"):
        bar.arrive(expect_tx=1)
    early = P.MBarrier("c", 1)
    early.complete_tx(2 ** 20 - 1)                 # bytes may land before they are announced
    with pytest.raises(RuntimeError, match="c: tx-count -1048576"):
        early.complete_tx(1)
    for bad in (2, -1, True):
        with pytest.raises(ValueError, match="try_wait: parity must be 0 or 1"):
            P.MBarrier("d", 1).try_wait(bad)


def test_warpgroups_and_clusters_within_a_block():
    assert P.setmaxnreg_room([("producer", 1, 24)], 7) == 64     # (1024 x 64 - 128 x 24) / 896 = 69.7, down to 64
    for roles, wgs in (([], 9), ([("producer", 1, 40)], 8)):
        with pytest.raises(ValueError, match="setmaxnreg_room: .*(from 1 to 8|at most 8 warpgroups), got 9"):
            P.setmaxnreg_room(roles, wgs)
    with pytest.raises(ValueError, match="setmaxnreg_plan: warpgroups of c must be from 1 to 8, got 9"):
        P.setmaxnreg_plan([("c", 9, 24)])
    with pytest.raises(TypeError, match="setmaxnreg_plan: roles must be a non-empty list"):
        P.setmaxnreg_room([("producer", 1)], 2)
    assert P.empty_arrivals(8, 4, (4, 4)) == 7 * 8 * 4
    for args, what in (((9,), "consumers must be from 1 to 8"), ((2, 5), "warps_per_consumer must be from 1 to 4"),
                       ((2, 4, (4, 5)), "a cluster has at most 16 CTAs; 4 x 5 has 20"),
                       ((2, 4, (32, 1)), "cluster_shape must be from 1 to 16, got 32")):
        with pytest.raises(ValueError, match=f"empty_arrivals: {what}"):
            P.empty_arrivals(*args)
    assert multicast_mask(Layout((16, 1)), (3, 0), 0) == 0xFFFF
    with pytest.raises(ValueError, match="multicast_mask: the cluster .* has 32 CTAs"):
        multicast_mask(Layout((32, 1)), (0, 0), 1)


def test_simulate_pipeline_accepts_only_what_finishes_quickly():
    """simulate_pipeline(4096, 2, 7) took 87 s inside its old limits; now ktiles x consumers <= 2048."""
    assert P.simulate_pipeline(292, 2, 7).errors == []           # 2044 consumer k-tiles: the largest accepted
    for ktiles, consumers in ((293, 7), (4096, 7), (2049, 1)):
        with pytest.raises(ValueError, match="simulate_pipeline: ktiles"):
            P.simulate_pipeline(ktiles, 2, consumers)
    with pytest.raises(ValueError, match="simulate_pipeline: arrivals_per_release must be from 0 to 128"):
        P.simulate_pipeline(4, 2, 1, arrivals_per_release=129)


def test_epilogue_steps_are_checked():
    for op, err in (((1, 2), TypeError), (P.EpilogueOp("jump", 0), ValueError),
                    (P.EpilogueOp("bar_sync", 0, 5), TypeError), (P.EpilogueOp("st_shared", -1, 0), ValueError),
                    (P.EpilogueOp("wait_read", 0, -1), ValueError), (P.EpilogueOp("fence", 1024), ValueError)):
        with pytest.raises(err, match="SharedMemoryProxies.step"):
            P.check_epilogue([op])
    with pytest.raises(TypeError, match="check_epilogue: ops must be a list"):
        P.check_epilogue(3)


def test_gmma_desc_blocks_tile_divides_the_layout():
    smem = tile_to_smem(Layout_K_SW32_Atom("half_t"), (64, 32))
    assert len(cl_gmma.gmma_desc_blocks("K", smem, (64, 16))) == 2
    for tile in ((1024, 16), (64, 48), (48, 16)):
        with pytest.raises(ValueError, match=r"gmma_desc_blocks: tile .* does not divide the layout's shape \(64, 32"):
            cl_gmma.gmma_desc_blocks("K", smem, tile)
    with pytest.raises(ValueError, match="gmma_desc_blocks: tile must be"):
        cl_gmma.gmma_desc_blocks("K", smem, 16)


# ---- issue 28: the DSL facade refuses what NVIDIA's CuTe DSL refuses (tests/test_dsl_refusals.py compares the
# two input by input where the DSL installs; these stand without it) -------------------------------------
import cutelite.dsl as cute  # noqa: E402

DL = cute.make_layout((4, 8), stride=(8, 1))


@pytest.mark.parametrize("call, op", [
    (lambda: cute.zipped_divide(DL, 4), "zipped_divide"), (lambda: cute.logical_divide(DL, None), "logical_divide"),
    (lambda: cute.composition(DL, None), "composition"), (lambda: cute.complement(DL, 0), "complement"),
    (lambda: cute.size(DL, mode=[-1]), "size"), (lambda: cute.recast_layout(0, 16, DL), "recast_layout"),
    (lambda: cute.recast_layout(16, 0, DL), "recast_layout"),                  # the DSL dies of SIGFPE
    (lambda: cute.local_tile(cute.make_rmem_tensor(DL, cute.Float32), 4, 1), "local_tile"),
    (lambda: cute.local_partition(cute.make_rmem_tensor(DL, cute.Float32), cute.make_layout(8), 3), "local_partition"),
    (lambda: cute.make_composed_layout(4, 0, DL), "make_composed_layout"),
    (lambda: cute.make_tiled_mma(cute.nvgpu.MmaUniversalOp(cute.Float32), (2, 2)), "make_tiled_mma"),
])
def test_the_facade_refuses_what_the_dsl_refuses(call, op):
    with pytest.raises((TypeError, ValueError), match=op):
        call()


def test_the_facade_computes_what_the_dsl_computes():
    assert cute.crd2idx(None, DL) == 0 and cute.crd2idx((None, 2), DL) == 2          # None counts as 0 here
    assert cute.make_rmem_tensor(DL, cute.BFloat16).engine.itemsize == 2              # bf16 as its 16 bits
    # C++ recast_layout: 16/24 = 2/3, downcast<3>(upcast<2>((4,8):(1,4))) = downcast<3>((2,8):(1,2))
    assert str(cute.recast_layout(16, 24, cute.make_layout((4, 8), stride=(1, 4)))) == "(_6,_8):(_1,_6)"
