"""Launch planning for ``kernels/batch_norm.cu``: grid, block, reduction splits, workspace sizes.

Everything here is a pure function of the shape (N, C, S), the memory order and the launch profile
(a GPU's or the host emulator's, fixed per process), so workspace sizes never depend on data or
pointers. The reserve mask's layout does not depend on the profile. The same formulas are written in the
header comment of ``kernels/batch_norm.cu``; the kernels recompute the NCX tiling (``ncx_geometry``)
themselves from S, so kernel and planner must stay in step.

A data tensor is a dense buffer of logical shape (N, C, S):
  NCX (channels_last=False): element (n, c, s) at n*C*S + c*S + s
  NXC (channels_last=True):  element (n, c, s) at (n*S + s)*C + c

When S == 1 (or C == 1) both orders are the same memory; ``preferred_channels_last`` picks the
faster (and smaller-mask) kernel variant. The same choice must be used for a forward launch that
writes a reserve mask and the backward launches that read it.
"""

from __future__ import annotations

from ..plan import on_host

THREADS = 256            # threads per block of every data kernel
EPT = 16                 # NCX: elements per thread per step (nominal; two-input kernels use 8)
SEG = 4096               # NCX: longest tile = segment of one (n, c) plane
CPT = 4                  # NXC: channels per thread
RPT = 4                  # NXC: rows per thread per step (nominal)
TARGET_BLOCKS = 1056     # reductions: 132 SMs x 4 resident blocks x 2 waves (H100)
ELEM_MAX_BLOCKS = 1584   # elementwise: 132 SMs x 12 (3 or 4 resident blocks -> 4 or 3 waves)
MIN_BLOCK_ELEMS = 8192   # a reduction split handles at least this many elements per channel group
MAX_SPLIT_ELEMS = 1 << 30  # per-split, per-channel element count stays < 2**31 (int32 count)
MAX_GRID_Y = 65535
FINALIZE_WARPS = 8       # finalize kernels: one warp per channel, 8 warps per block
PER_CHANNEL_MAX_BLOCKS = 1024


# On the host CUDA emulator a block's threads run one after another on one of a few pool threads
# (at most 8), as fibers wherever the kernel may reach a barrier or a warp collective: every CUDA
# thread costs a fixed setup, and every lane of a warp collective costs a fiber switch. The host
# profile launches the same kernels with one warp per block and a few reduction blocks, so
# each thread walks long runs of memory and the block-level combines are rare; a GPU gets the
# occupancy-sized profile. Constants, not the CPU count, so the host's results are the same bits on
# every machine (a different split count or block size only changes the fixed merge order's
# rounding); phase 1 and phase 2 always agree because both read the same profile.
HOST_THREADS = 32        # one warp per block (NCX reductions: one thread; the combines take <= 32 threads or whole warps)
HOST_TARGET_BLOCKS = 4   # reductions on the host emulator (a few blocks per pool thread, few finalize rounds)
HOST_ELEM_MAX_BLOCKS = 32    # elementwise on the host: each thread walks many tiles or rows (a thread's setup is
                              # paid once: 32x256x14x14 f16 NHWC apply 0.32 -> 0.18 ms from 256 blocks)
HOST_NXC_BLOCK_ELEMS = 32768  # NXC reductions on the host: elements one block covers (its rows x its channels)

def _threads() -> int:
    return HOST_THREADS if on_host() else THREADS


def _target_blocks() -> int:
    """Reduction blocks to aim for: TARGET_BLOCKS on a GPU, HOST_TARGET_BLOCKS on the emulator."""
    return HOST_TARGET_BLOCKS if on_host() else TARGET_BLOCKS


def _elem_max_blocks() -> int:
    return HOST_ELEM_MAX_BLOCKS if on_host() else ELEM_MAX_BLOCKS


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _next_pow2(v: int) -> int:
    return 1 if v <= 1 else 1 << (int(v) - 1).bit_length()


def preferred_channels_last(N: int, C: int, S: int, channels_last: bool) -> bool:
    """The kernel variant to use: True when S == 1, False when C == 1 (same memory either way)."""
    if S == 1:
        return True
    if C == 1:
        return False
    return bool(channels_last)


def ncx_geometry(S: int) -> tuple[int, int]:
    """(seglen, segs): each (n, c) plane is cut into `segs` tiles of `seglen` (multiple of 32)."""
    s0 = _cdiv(S, SEG)
    seglen = _cdiv(_cdiv(S, s0), 32) * 32
    return seglen, _cdiv(S, seglen)


def ncx_block(S: int) -> tuple[int, int, int]:
    """(tx, ty, 1): tx threads along a tile (power of two, 4..256), ty tiles side by side."""
    seglen, segs = ncx_geometry(S)
    if on_host():
        # One thread per tile: a block's threads run one after another, so a thread that walks its
        # tile's vectors in order reads memory once and in order. With 4 threads per tile (16-byte
        # columns, as a GPU's coalesced lanes) each thread's pass touched every cache line of the
        # tile again: f32 8x64x56x56 apply 0.50 -> 0.28 ms, backward elementwise 1.18 -> 0.54,
        # backward reduce 1.57 -> 1.07 (one emulator thread; bf16/f16 gain 5-25 %). Planes cut into
        # segments of different lengths keep whole warps along a tile (the fused forward's mask writer
        # runs warp collectives once per step, so a warp's rows must take the same steps).
        tx = 1 if segs == 1 else HOST_THREADS
        return tx, HOST_THREADS // tx, 1
    tx = min(THREADS, max(4, _next_pow2(_cdiv(min(seglen, S), EPT))))
    return tx, THREADS // tx, 1


def nxc_block(C: int) -> tuple[int, int, int]:
    """(cx, cy, 1): cx threads along C (4 channels each, power of two, 1..32), cy rows."""
    threads = _threads()
    cx = min(32, _next_pow2(_cdiv(C, CPT)))
    return cx, threads // cx, 1


def plan_reduction(N: int, C: int, S: int, channels_last: bool, *, whole_rows: bool = False):
    """Plan of the per-channel reductions ``bn_stats_partial`` / ``bn_bwd_reduce_partial``.

    Returns ``(grid, block, splits, workspace_floats)``:
      (TARGET_BLOCKS below is _target_blocks(): 1056 on a GPU, HOST_TARGET_BLOCKS = 4 on the host
      emulator)
      NCX: grid = (C, splits, 1), block = ncx_block(S) ((1, 1, 1) on the host)
           splits = min(ceil(TARGET_BLOCKS / C), ceil(N*segs / ty), ceil(N*S / MIN_BLOCK_ELEMS))
      NXC: grid = (gx, splits, 1), block = nxc_block(C), gx = ceil(C / (4*cx))
           splits = min(ceil(TARGET_BLOCKS / gx), ceil(N*S / (4*cy)),
                        ceil(N*S*min(C, 4*cx) / MIN_BLOCK_ELEMS)),
           on the host then splits = max(splits, min(ceil(N*S*min(C, 4*cx) / HOST_NXC_BLOCK_ELEMS),
                                                     ceil(N*S / (4*cy))))
      NXC with ``whole_rows`` (bn_stats_partial's plan) on the host when C > 4: grid = (1, splits, 1),
           block = (1, 1, 1), splits = min(ceil(N*S*C / HOST_NXC_BLOCK_ELEMS), ceil(N*S / 4)): each
           split's one thread walks its rows across every channel (kernels/batch_norm.cu nxc_stats_rows)
      then splits = max(splits, 1, ceil(N*S / MAX_SPLIT_ELEMS)), capped at 65535.
    The finalize kernels get `splits` as an argument; the partial kernels read it from gridDim.y.
    workspace_floats = 3*splits*C + C  (slots of the compute type: f32, or f64 for DOUBLE data — the
    caller allocates slots * 4 or * 8 bytes):
      stats:    [0, s*C) mean of split s (shifted), [s*C, 2*s*C) M2, [2*s*C, 3*s*C) count (int32),
                [3*s*C, 3*s*C + C) the shift K[c]
      backward: [0, s*C) sum dy, [s*C, 2*s*C) sum dy*(x - mean)
    Nothing needs zeroing: every slot is written before it is read.
    """
    N, C, S = int(N), int(C), int(S)
    M = N * S
    if not channels_last:
        # the host: one thread per block walks its split of the channel's planes, so the block combine
        # is one thread's (32x256x14x14 f16 statistics 0.94 -> 0.50 ms, backward reduce 0.91 -> 0.47:
        # one-warp blocks spent most of it on 32 fibers per channel for 196-element planes)
        block = (1, 1, 1) if on_host() else ncx_block(S)
        _, segs = ncx_geometry(S)
        splits = min(_cdiv(_target_blocks(), C), _cdiv(N * segs, block[1]), _cdiv(M, MIN_BLOCK_ELEMS))
        gx = C
    elif whole_rows and on_host() and C > CPT:
        # bn_stats_partial's host plan: one thread per split walks whole rows (nxc_stats_rows), its
        # per-channel state in its workspace slots; a split covers HOST_NXC_BLOCK_ELEMS elements
        block, gx = (1, 1, 1), 1
        splits = min(_cdiv(M * C, HOST_NXC_BLOCK_ELEMS), _cdiv(M, RPT))
    else:
        block = nxc_block(C)
        cx, cy, _ = block
        gx = _cdiv(C, CPT * cx)
        splits = min(_cdiv(_target_blocks(), gx), _cdiv(M, RPT * cy), _cdiv(M * min(C, CPT * cx), MIN_BLOCK_ELEMS))
        if on_host():
            # the block's threads run one after another, each walking every row of the block's range
            # (its 4 channels of each): the range must stay in the CPU's L2 for the next thread
            splits = max(splits, min(_cdiv(M * min(C, CPT * cx), HOST_NXC_BLOCK_ELEMS), _cdiv(M, RPT * cy)))
    splits = min(MAX_GRID_Y, max(splits, 1, _cdiv(M, MAX_SPLIT_ELEMS)))
    return (gx, splits, 1), block, splits, 3 * splits * C + C


def plan_elementwise(N: int, C: int, S: int, channels_last: bool, *, fused: bool):
    """Plan of ``bn_apply`` / ``bn_bwd_elemt``: ``(grid, block)`` (grid-stride inside).

      NCX: block = ncx_block(S), grid = (min(ceil(N*C*segs / ty), ELEM_MAX_BLOCKS), 1, 1); the host's
           fused forward: block = (1, 32, 1), one thread per tile (it writes the tile's mask words); with
           tx = 1 each thread row takes a contiguous range of tiles (kernels/batch_norm.cu row_tiles)
      NXC: block = nxc_block(C), grid = (gx, min(ceil(N*S / (4*cy)), max(1, ceil(ELEM_MAX_BLOCKS / gx))), 1)
      NXC on the host: block = (1, 32, 1), grid = (1, min(ceil(N*S / 32), HOST_ELEM_MAX_BLOCKS), 1);
      each thread walks consecutive whole rows (the kernels' whole-rows path, taken when
      4 * cx * gx < C; the fused forward's, which writes each row's mask words itself with no warp
      collective, when 4 * cx * gx == 4 < C; with C <= 4 the fused forward keeps the GPU layout).
    """
    N, C, S = int(N), int(C), int(S)
    if not channels_last:
        # the host's fused forward: one thread per tile, writing the tile's mask words itself
        block = (1, HOST_THREADS, 1) if on_host() and fused else ncx_block(S)
        _, segs = ncx_geometry(S)
        return (min(_cdiv(N * C * segs, block[1]), _elem_max_blocks()), 1, 1), block
    if on_host() and (not fused or C > CPT):
        return (1, min(_cdiv(N * S, HOST_THREADS), _elem_max_blocks(), MAX_GRID_Y), 1), (1, HOST_THREADS, 1)
    block = nxc_block(C)
    cx, cy, _ = block
    gx = _cdiv(C, CPT * cx)
    gy = min(_cdiv(N * S, RPT * cy), max(1, _cdiv(_elem_max_blocks(), gx)), MAX_GRID_Y)
    return (gx, gy, 1), block


def plan_finalize(C: int):
    """``bn_stats_finalize`` / ``bn_bwd_reduce_finalize``: block (G, W, 1) = W channels of G lanes.
    A GPU gives each channel a warp (G = 32, W = 8); the host one thread (G = 1, W = 32: with the host's
    few splits a warp per channel would be 31 idle lanes and a fiber switch per shuffle)."""
    if on_host():
        return (_cdiv(int(C), HOST_THREADS), 1, 1), (1, HOST_THREADS, 1)
    return (_cdiv(int(C), FINALIZE_WARPS), 1, 1), (32, FINALIZE_WARPS, 1)


def plan_per_channel(C: int):
    """``bn_prep`` / ``bn_prep_elemt_bwd`` / ``bn_gather_stats``: grid-stride over channels (one warp per
    block on the host: bn_prep_elemt_bwd's block-wide sum of the counts ran 256 fibers, 0.11 ms)."""
    t = _threads()
    return (max(1, min(_cdiv(int(C), t), PER_CHANNEL_MAX_BLOCKS)), 1, 1), (t, 1, 1)


def reserve_mask_words(N: int, C: int, S: int, channels_last: bool) -> int:
    """uint32 words of the fused-forward reserve bit mask.

    NCX: each (n, c) plane gets ceil(S/32) words; bit of (n, c, s) = word (n*C + c)*ceil(S/32) + s//32,
         bit s % 32.
    NXC: each row (n, s) gets ceil(C/32) words; bit of (n, c, s) = word (n*S + s)*ceil(C/32) + c//32,
         bit c % 32.
    Bit set = the activation passed the gradient (identity: always; relu: v > 0; clipped relu:
    0 < v < ceiling, v = BN(x) [+ z]). Padding bits are written as 0.
    """
    N, C, S = int(N), int(C), int(S)
    if channels_last:
        return N * S * _cdiv(C, 32)
    return N * C * _cdiv(S, 32)


def reserve_mask_bytes(N: int, C: int, S: int, channels_last: bool) -> int:
    return 4 * reserve_mask_words(N, C, S, channels_last)
