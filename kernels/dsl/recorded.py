"""What nvidia-cutlass-dsl 4.8.1 printed for each snippet of examples.py (written by
`python -m kernels.dsl.record`; tests/test_dsl_boxes.py checks it against the DSL where the DSL is installed).
The boxes of the chapters show these texts, labelled as recorded, where the DSL cannot run."""

VERSION = '4.8.1'

OUTPUT = {'ch1_layouts()': 'L = (4,8):(1,4)    L(2, 3) = 14\n'
                  'LayoutLeft: (4,8):(1,4)\n'
                  'row-major:  (4,8):(8,1)\n'
                  'size 18  cosize 21  rank 2  depth 2\n'
                  'get(H, mode=[1]): (2,3):(12,1)\n'
                  'H(16) = 17   H((1, (1, 2))) = 17\n',
 'ch1_modes()': 'a                    = (2,3,5,7):(1,2,6,30)\n'
                'select(a, [1, 3])    = (3,7):(2,30)\n'
                'group_modes(a, 0, 2) = ((2,3),5,7):((1,2),6,30)\n'
                'flatten(that)        = (2,3,5,7):(1,2,6,30)\n'
                'append(3:1, 4:3)     = (3,4):(1,3)\n',
 'ch1_static_dynamic(16)': 'traced: (4,8):(1,4)    (?,8):(1,?)\nran:    (4,8):(1,4)   (16,8):(1,16)\n',
 'ch2_algebra()': 'coalesce: 12:1\n'
                  'by mode:  (2,6):(1,2)\n'
                  'composition: (5,(2,2)):(16,(80,4))\n'
                  'complement:  (3,2):(2,12)\n'
                  'right_inverse: (8,4):(4,1)\n',
 'ch2_divide()': 'logical_divide: ((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))\n'
                 'zipped_divide:  ((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))\n'
                 'tiled_divide:   ((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))\n'
                 'flat_divide:    (3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))\n',
 'ch2_products()': 'logical_product: ((2,2),(2,3)):((4,1),(2,8))\n'
                   'blocked_product: ((2,3),(5,4)):((5,10),(1,30))\n'
                   'raked_product:   ((3,2),(4,5)):((10,5),(30,1))\n'
                   'tiled_product by a tuple of layouts (C++ takes it, the DSL refuses):\n'
                   'ValueError: Operand 1 of operation "cute.tiled_product" must be a Value (is not a '
                   'Value)\n',
 'ch2_runtime(64)': 'coalesce: (192,?):(1,192)\n'
                    'right_inverse refused: error: unknown: expects an input with static shape, but got '
                    '\'!cute.layout<"(16,?):(1,16)">\'\n'
                    'composition refused: error: unknown: unable to compute the following composition: '
                    '\'!cute.layout<"(64,64):(1,64)">\' o \'!cute.layout<"(8,?):(1@0,1@1)">\'\n',
 'ch3_tensors()': 'A: tensor<ptr<f32, rmem, align<32>> o (8,24):(1,8)>\n'
                  'row 1, A[1, None]: (24):(8)\n'
                  'zipped_divide(A, (4, 8)): ((4,8),(2,3)):((1,8),(4,64))\n'
                  'local_tile(A, (4, 8), (1, 2)): (4,8):(1,8)\n'
                  'local_partition(A, thr, 13): (2,3):(4,64)\n',
 'ch3_identity()': 'identity tensor: tensor<(0,0) o (18,29):(1@0,1@1)>\n'
                   'corner tile: tensor<(16,24) o (4,8):(1@0,1@1)>\n'
                   'its column 4: [(16, 28), (17, 28), (18, 28), (19, 28)]\n'
                   'inside (18, 29): 1 1 0 0\n',
 'ch4_swizzle()': 'atom: S<3,3,3> o 0 o (8,64):(64,1)\n'
                  'row 1, columns 0, 8, 16, ...: [72, 64, 88, 80, 104, 96, 120, 112]\n'
                  'tile_to_shape(atom, (128, 64)):\n'
                  '  S<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))\n',
 'ch4_recast()': 'on halves:        S<3,3,3> o 0 o (8,64):(64,1)\n'
                 'on bytes:         S<3,4,3> o 0 o (8,128):(128,1)\n'
                 'on 128-bit words: S<3,0,3> o 0 o (8,8):(8,1)\n',
 'ch5_mma_atom()': 'warp-level F16/BF16 MMA Operation\n'
                   '  A/B data type         = Float16\n'
                   '  Accumulator data type = Float16\n'
                   '  Instruction shape MNK = (16, 8, 16)\n'
                   'MMA Atom\n'
                   '  ThrID:       32:1\n'
                   '  Shape MNK:   (16,8,16)\n'
                   '  TV Layout A: ((4,8),(2,2,2)):((32,1),(16,8,128))\n'
                   '  TV Layout B: ((4,8),(2,2)):((16,1),(8,64))\n'
                   '  TV Layout C: ((4,8),(2,2)):((32,1),(16,8))\n'
                   'm16n8k8, TV layout A: ((4,8),(2,2)):((32,1),(16,8))\n',
 'ch5_ldmatrix()': 'Copy Atom\n'
                   '  ThrID:         32:1\n'
                   '  TV Layout Src: ((16,2),8):((8,0),1)\n'
                   '  TV Layout Dst: (32,(2,2)):(2,(1,64))\n'
                   '  Value type:    f16\n'
                   'Copy Atom\n'
                   '  ThrID:         32:1\n'
                   '  TV Layout Src: ((8,4),8):((8,0),1)\n'
                   '  TV Layout Dst: ((4,8),(1,2)):((16,1),(1,8))\n'
                   '  Value type:    f16\n',
 'ch6_tiled_mma()': 'Tiled MMA\n'
                    '  Thr Layout VMNK: (32,2,2,1):(1,32,64,0)\n'
                    '  Permutation MNK: (32:1,32:1,16:1)\n'
                    'MMA Atom\n'
                    '  ThrID:           32:1\n'
                    '  Shape MNK:       (16,8,16)\n'
                    '  TV Layout A:     ((4,8),(2,2,2)):((32,1),(16,8,128))\n'
                    '  TV Layout B:     ((4,8),(2,2)):((16,1),(8,64))\n'
                    '  TV Layout C:     ((4,8),(2,2)):((32,1),(16,8))\n'
                    'size 128   tile [32, 32, 16]\n',
 'ch6_partition()': 'tCsA: ((2,2,2),4,2):((128,8,1024),32,2048)\n'
                    'tCrA: ((2,2,2),4,2):((1,2,4),8,32)\n'
                    'Tiled Copy\n'
                    '  Tiler MN:        (32:1,16:1)\n'
                    '  TV Layout tiled: ((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))\n'
                    'Copy Atom\n'
                    '  ThrID:           32:1\n'
                    '  TV Layout Src:   (32,8):(8,1)\n'
                    '  TV Layout Dst:   ((4,8),(1,2,4)):((16,1),(1,8,64))\n'
                    '  Value type:      f16\n'
                    'partition_S: ((8,1),4,2):((1,0),32,2048)\n'
                    'retile:      ((8,1),4,2):((1,0),8,32)\n',
 'ch6_tiled_copy()': '128-bit: TV layout ((16,8),4):((32,1),8), tile (8:1, 64:1)\n'
                     '32-bit: TV layout ((64,2),1):((2,1),0), tile (2:1, 64:1)\n',
 'ch9_signatures()': 'make_layout((4, 8), stride=(8, 1)) = (4,8):(8,1)\n'
                     'size(X, mode=[1])    = 12\n'
                     'size(X, mode=[1, 0]) = 3\n'
                     'coalesce(A, target_profile=(1, 1)) = (2,6):(1,2)\n'
                     'append(L, 1:0, up_to_rank=4) = (4,8,1,1):(8,1,0,0)\n'
                     'group_modes(a, 1, 3) = (2,(3,5),7):(1,(2,6),30)\n'
                     'slice_(L, (None, 3)) = (4):(8)\n'
                     'make_layout((4, 8), (8, 1)):\n'
                     'TypeError: make_layout() takes 1 positional argument but 2 positional arguments (and 1 '
                     'keyword-only argument) were given\n',
 'ch9_swizzle()': 'make_swizzle(2, 3, 3) = S<2,3,3>\n'
                  'make_composed_layout(sw, 0, rows) = S<2,3,3> o 0 o (8,32):(32,1)\n'
                  'C.inner = S<2,3,3>   C.outer = (8,32):(32,1)\n'
                  'recast_layout(8, 16, C) = S<2,4,3> o 0 o (8,64):(64,1)\n'
                  'composition(sw, rows):\n'
                  'MLIRError: Operation creation failed:\n',
 'ch9_tensor()': 'traced: tensor<ptr<f32, rmem, align<32>> o (2,3):(3,1)>\n'
                 'tensor(raw_ptr(0x...: f32, rmem, align<32>) o (2,3):(3,1), data=\n'
                 '       [[ 0.000000,  2.000000,  4.000000, ],\n'
                 '        [ 1.000000,  3.000000,  5.000000, ]])\n',
 'ch9_ops()': 'warp-level F16/BF16 MMA Operation\n'
              '  A/B data type         = Float16\n'
              '  Accumulator data type = Float32\n'
              '  Instruction shape MNK = (16, 8, 16)\n'
              'cp.async GMEM -> SMEM copy Operation\n'
              '  with cache mode = LoadCacheMode.GLOBAL\n'
              'Copy Atom\n'
              '  ThrID:         1:0\n'
              '  TV Layout Src: (1,8):(0,1)\n'
              '  TV Layout Dst: (1,8):(0,1)\n'
              '  Value type:    f16\n',
 'ch9_tiled_copy_trap()': 'make_tiled_copy_tv: ((16,8),4):((32,1),8) tile (8:1, 64:1)\n'
                          'make_tiled_copy(atom, layout_tv, tiler): ((16,8),4):((32,1),8)\n'
                          'make_tiled_copy(atom, thr, val):\n'
                          'AssertionError: tiler_mn must be a Tile, but got <class '
                          "'cutlass.cute.core._Layout'>\n",
 'ch9_partition_names()': "tv_layout_A (the atom's):       ((4,8),(2,2,2)):((32,1),(16,8,128))\n"
                          "tv_layout_A_tiled (the tile's): "
                          '((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))\n'
                          'make_fragment_A: ((2,2,2),2,2):((1,2,4),16,8)\n'
                          'retile:          ((8,1),2,2):((1,0),16,8)\n'
                          "C++'s names:\n"
                          "AttributeError: 'ThrMma' object has no attribute 'partition_fragment_A'\n",
 'ch9_static_dynamic(16, 8)': 'traced: L = (?,8):(1,?)   size = ?{div=8}   k = 8\n'
                              'ran:    L = (16,8):(1,16)  size = 128\n',
 'ch9_regrouped()': 'raked_product((2,1):(1,0), (3,4)): ((3,2),4):((2,1),6)\n'
                    'complement(4:2):\n'
                    "TypeError: complement() missing 1 required positional argument: 'cotarget'\n",
 "ch9_compile('gemm_tile')": '.target sm_80   280 lines of PTX\n'
                             '   6  bar.sync\n'
                             '   6  cp.async.cg.shared.global\n'
                             '   3  cp.async.commit_group\n'
                             '   3  cp.async.wait_group\n'
                             '   6  ldmatrix.sync.aligned.m8n8.x4.shared.b16\n'
                             '   6  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16\n'
                             '  12  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32\n'
                             '   4  st.global.v2.b32\n',
 "ch9_compile('tc_sm80')": '.target sm_80   869 lines of PTX\n'
                           '   1  bar.sync\n'
                           '  32  cp.async.cg.shared.global\n'
                           '   4  cp.async.commit_group\n'
                           '   1  cp.async.wait_group\n'
                           '   8  ldmatrix.sync.aligned.m8n8.x4.shared.b16\n'
                           '   8  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16\n'
                           '  64  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32\n'
                           '  64  st.global.v2.b32\n'}
