// batch_norm.cu — BatchNorm-family kernels: aclnnBatchNorm / BatchNormBackward / BatchNormStats /
// BatchNormGatherStatsWithCounts / BatchNormElemt / BatchNormReduceBackward /
// BatchNormElemtBackward, cuDNN BN and BN-Ex (add + activation + reserve mask), oneDNN
// BatchNormTrainingBackward (variance input). Host-side planning: aclnn_py/ops/_bn_plan.py.
//
// ================================================================================================
// DATA CONTRACT
// ================================================================================================
// A data tensor (x, y, z, dy, dx, dz) is a dense buffer of logical shape (N, C, S), S = product of
// the spatial dims (1 for 2-D input), in the order chosen by the template bool CL:
//   NCX (CL=false): element (n,c,s) at n*C*S + c*S + s
//   NXC (CL=true):  element (n,c,s) at (n*S + s)*C + c
// All data tensors of one launch share that order. T (data) in {float, __half, __nv_bfloat16, double};
// P (per-channel user tensors) in {float, T}; Q (counts / counter) as listed per kernel.
// COMPUTE TYPE A = acc_t<T> (= acc_t<P>): float for float / __half / __nv_bfloat16, double for double.
// Every "A" below (workspace slots, per-channel coefficient arrays, eps / momentum / ceiling) is that
// type; T = double goes with P = double only (the host enforces it), so a launch sequence never mixes
// f32 and f64 slots. Arithmetic is A; statistics combine in f64 (so, for T = double, everything is f64).
// Sizes are long long (np.int64); eps / momentum / ceiling are A (np.float32, np.float64 for double);
// flags int (np.int32); pointers 8 bytes, 0 = null.
// S == 1 or C == 1: both orders are the same memory; use _bn_plan.preferred_channels_last
// (faster, smaller mask) — and the same choice for a forward that writes a mask and the backward
// that reads it.
//
// Alignment: data pointers need only element alignment (and workspace / per-channel A arrays
// sizeof(A) bytes, mask 4 bytes). Vector path (16-byte loads and stores) when, for every data pointer
// of the launch,
//   NCX: pointer % 16 == 0 and S % (16/sizeof(T)) == 0
//   NXC: pointer % (4*sizeof(T)) == 0 and C % 4 == 0
// (double: the same tiling with V = 2 elements per "vector"; the accesses are element loads / stores.)
// otherwise the same kernel takes its scalar path (decided once per launch on the device).
// Exact in-place (same pointer) works for the elementwise kernels (y = x or z; dx = dy or x;
// dz = dy): every element is read, then written, by one thread and never read again. Partial
// overlaps are not supported. Nothing needs zeroing beforehand.
// Every data kernel must be launched with a block of the plan (256 threads on a GPU; on the host
// emulator one warp, or one thread for the NCX reductions: the block combines take whole warps or
// a block of at most 32 threads): the NCX mask writer relies on the plan's tx (power of two >= 4,
// and >= 32 when a plane has several segments, so a warp never spans tiles of different lengths;
// the host's tx = 1 plans write a tile's mask words from its one thread).
//
// ================================================================================================
// KERNELS (name expressions: first line; grid/block from _bn_plan)
// ================================================================================================
// (1a) bn_stats_partial<T, CL>(const T* x, A* ws, ll N, ll C, ll S)
//        grid/block = plan_reduction(N, C, S, CL); splits = gridDim.y (any value >= 1 works,
//        splits that get no rows write count 0 and are ignored).
//        Per (split, channel): Welford mean / M2 / count of x - K[c], K[c] = the channel's first
//        element x(0, c, 0) (shifted data: values near the mean, so A keeps the variance even
//        when |mean| >> std). Per thread: a chunk of up to 16 values is reduced two-pass with the
//        compensated correction and Chan-merged into the thread's state; threads merge in a fixed
//        tree (warp shuffles / shared memory), never with atomics.
// (1b) bn_stats_finalize<P>(const A* ws, ll splits, ll C, A eps, A momentum,
//        const P* weight?, const P* bias?, P* save_mean?, P* save_invstd?, P* running_mean?,
//        P* running_var?, A* mean_f?, A* scale_f?, A* shift_f?)
//        grid/block = plan_finalize(C) (G lanes per channel: a warp on a GPU, one thread on the
//        host emulator). Combines the splits in f64 in a
//        fixed order: mean = K + mean', var = M2/n (biased), invstd = 1/sqrt(var + eps)
//        (0 when var == 0 and eps == 0, as PyTorch's InvStd). running_mean = (1-m)*rm + m*mean;
//        running_var = (1-m)*rv + m*var*n/(n-1) (unbiased; n == 1 gives 0*inf = NaN, the
//        arithmetic of PyTorch's kernel). Apply coefficients: mean_f = mean,
//        scale_f = invstd*w, shift_f = b (w = 1, b = 0 when null). Every output is optional.
// (1c) bn_prep<P>(const P* mean?, const P* stat?, int stat_is_var, A eps, const P* weight?,
//        const P* bias?, ll C, A* out_mean?, A* out_invstd?, A* out_w?,
//        A* out_scale?, A* out_shift?)
//        grid/block = plan_per_channel(C). invstd = stat (stat_is_var = 0) or 1/sqrt(stat + eps)
//        (stat_is_var = 1: running_var for inference, oneDNN's variance). Null mean -> 0, null
//        stat -> invstd 1 (resp. variance 1), null weight -> 1, null bias -> 0.
//        out_scale = invstd*w (apply scale, and g of the inference backward), out_shift = b.
// (2)  bn_apply<T, CL, FUSED>(const T* x, const T* z?, const A* mean_f, const A* scale_f,
//        const A* shift_f, T* y, unsigned* mask?, ll N, ll C, ll S, int act, A ceiling)
//        grid/block = plan_elementwise(N, C, S, CL).
//        y = (x - mean_f[c]) * scale_f[c] + shift_f[c]           (the (x - mean) form on purpose)
//        FUSED: v = that [+ z]; y = act(v), act 0 identity, 1 relu (v < 0 ? 0 : v, NaN kept),
//        2 clipped relu (min(relu(v), ceiling)); mask (if not null) gets one bit per element:
//        1 = the activation passes the gradient (identity: always; relu: v > 0; clipped:
//        0 < v < ceiling). FUSED=false ignores z, mask, act, ceiling.
// (3a) bn_bwd_reduce_partial<T, CL, MASKED>(const T* dy, const T* x, const unsigned* mask,
//        const A* mean_f, A* ws, ll N, ll C, ll S)
//        grid/block = plan_reduction (splits = gridDim.y). Per (split, channel):
//        sum(dy'), sum(dy' * (x - mean_f[c])), dy' = dy, or (MASKED) dy where the mask bit is set.
// (3b) bn_bwd_reduce_finalize<P>(const A* ws, ll splits, ll C, ll count, const A* invstd_f?,
//        const A* w_f?, P* sum_dy?, P* sum_dy_xmu?, P* grad_weight?, P* grad_bias?,
//        A* a_f?, A* k_f?, A* g_f?)
//        grid/block = plan_finalize(C). f64 fixed-order combine; grad_weight = sum_dy_xmu*invstd,
//        grad_bias = sum_dy; dx coefficients a = sum_dy/count, k = invstd^2*sum_dy_xmu/count,
//        g = invstd*w (count = N*S; null invstd_f / w_f read as 1). Every output is optional.
// (4a) bn_prep_elemt_bwd<P, Q>(const P* mean, const P* invstd, const P* weight?, const P* sum_dy,
//        const P* sum_dy_xmu, const Q* counter, ll L, ll C, A* out_mean, A* out_a,
//        A* out_k, A* out_g)                    Q in {int, __half, float}; outputs required
//        grid/block = plan_per_channel(C). Total count = sum of the L counter entries, summed in
//        f64 on the device by every block in the same fixed order (no host sync); then
//        a = sum_dy/total, k = invstd^2*sum_dy_xmu/total, g = invstd*w.
// (4b) bn_bwd_elemt<T, CL, MODE>(const T* dy, const T* x, const unsigned* mask?, const A* mean_f,
//        const A* a_f, const A* k_f, const A* g_f, T* dx, T* dz?, ll N, ll C, ll S)
//        grid/block = plan_elementwise.
//        MODE 0 (inference): dx = dy * g_f[c]            (x, mask, mean_f, a_f, k_f, dz unused)
//        MODE 1 (training):  dx = (dy - a - (x - mean) * k) * g
//        MODE 2 (fused):     dy' = dy where the mask bit is set (mask null: dy' = dy);
//                            dz = dy' (if dz not null); dx = (dy' - a - (x - mean) * k) * g
// (5)  bn_gather_stats<P, Q>(const P* mean, const P* invstd, const Q* counts, ll world, ll C,
//        A eps, A momentum, P* running_mean?, P* running_var?, P* mean_all, P* invstd_all)
//        Q in {float, __half, __nv_bfloat16}; grid/block = plan_per_channel(C). mean/invstd are
//        [world, C]. Ranks with counts[r] <= 0 (or NaN) are skipped on the device. f64 Chan merge
//        in rank order with var_r = 1/invstd_r^2 - eps; invstd_all = 1/sqrt(var + eps); running
//        stats updated with var*n/(n-1), n = total count (untouched when n == 0, where
//        mean_all = 0 and invstd_all = NaN).
// (6)  oneDNN BatchNormTrainingBackward: bn_prep with stat_is_var = 1 (P float or bf16), then
//        (3a), (3b), (4b) MODE 1 — no kernel of its own.
//
// Launch sequences of the ops (A per-channel arrays live in the workspace):
//   BatchNorm training:  stats_partial -> stats_finalize(save, running, mean/scale/shift) -> apply
//   BatchNorm inference: prep(running_mean, running_var, is_var=1, w, b) -> apply
//   BatchNormStats:      stats_partial -> stats_finalize<float | double>(save_mean=mean, save_invstd=invstd)
//   BatchNormElemt:      prep(mean, invstd, is_var=0, w, b) -> apply
//   BatchNormBackward (training): prep(save_mean, save_invstd, w) -> bwd_reduce_partial
//                        -> bwd_reduce_finalize(grad_weight, grad_bias, a/k/g) -> bwd_elemt<1>
//   BatchNormBackward (inference): prep(running_mean, running_var, is_var=1, w) -> bwd_elemt<0>
//                        with g = out_scale; grads via bwd_reduce_partial/finalize (invstd_f)
//   BatchNormReduceBackward: prep(mean, invstd) -> bwd_reduce_partial -> bwd_reduce_finalize
//   BatchNormElemtBackward:  prep_elemt_bwd -> bwd_elemt<1>
//   BatchNormGatherStatsWithCounts: gather_stats
//   cuDNN BN-Ex forward: stats_partial -> stats_finalize -> apply<FUSED> (z, act, mask)
//   cuDNN BN-Ex backward: prep -> bwd_reduce_partial<MASKED> -> bwd_reduce_finalize
//                        -> bwd_elemt<2> (mask, dz)
//
// ================================================================================================
// WORKSPACE AND RESERVE MASK (formulas mirrored in _bn_plan.py)
// ================================================================================================
// Reduction partials, A slots (4 or 8 bytes), splits = s (from plan_reduction): slots = 3*s*C + C
//   stats:    ws[0 .. s*C) shifted means [split][c], ws[s*C .. 2sC) M2, ws[2sC .. 3sC) counts
//             (int32 values at int index i of that region: its first half for double),
//             ws[3sC .. 3sC + C) shifts K[c]
//   backward: ws[0 .. s*C) sum dy, ws[s*C .. 2sC) sum dy*(x - mean)
// splits:
//   NCX: block (tx, ty) = (clamp(next_pow2(ceil(min(seglen, S)/16)), 4, 256), 256/tx),
//        grid (C, s): s = min(ceil(1056/C), ceil(N*segs/ty), ceil(N*S/8192))
//   NXC: block (cx, cy) = (min(32, next_pow2(ceil(C/4))), 256/cx), grid (ceil(C/(4cx)), s):
//        s = min(ceil(1056/gx), ceil(N*S/(4*cy)), ceil(N*S*min(C, 4cx)/8192))
//   then s = min(65535, max(s, 1, ceil(N*S / 2^30))) (per-split counts stay below 2^31).
//   Host emulator profile (_bn_plan): 1056 -> 4 reduction blocks; NCX reductions one thread per
//   block (it walks its split of the channel's planes), NCX elementwise one thread per tile row
//   (tx = 1; 32 with several segments) over a contiguous range of tiles (row_tiles), NXC one warp
//   per block walking whole rows; elementwise grids of at most 32 blocks.
//   NCX planes are cut into segs = ceil(S/seglen) tiles, seglen = round_up(ceil(S/ceil(S/4096)), 32).
// Reserve mask (uint32 words, bit b of word w = bit w*32 + b), rows padded to whole words:
//   NCX: words = N*C*ceil(S/32);  (n,c,s) -> word (n*C + c)*ceil(S/32) + s/32, bit s%32
//   NXC: words = N*S*ceil(C/32);  (n,c,s) -> word (n*S + s)*ceil(C/32) + c/32, bit c%32
//   Every word of the mask is written by the forward (padding bits 0), so it needs no zeroing.
//
// ================================================================================================
// PERFORMANCE DESIGN (H100 target: >= 85% of HBM bandwidth on large shapes, NCX and NXC)
// ================================================================================================
// Byte model: forward training 3 passes of |x| (stats read x; apply read x, write y); backward
//   5 (reduce reads x, dy; elemt reads x, dy, writes dx); inference forward / backward 2.
// NCX: a block works on one channel (reductions: blockIdx.x = c, so no index math per element)
//   or on a stream of tiles (elementwise: the (plane, segment, channel) position advances
//   incrementally — no division or modulo by runtime sizes inside the loops). A tile is one
//   (n, c) plane (or a <= 4096-element segment of it); tx threads cover a tile, ty tiles run side
//   by side, so small planes (7x7) still fill the block. Each step a thread moves 16 elements
//   (two-stream kernels: 8) as 16-byte vectors (f16/bf16 planes of S % 8 == 4: 8-byte vectors;
//   else lane-consecutive scalars: with_ncx_width).
// NXC: threads along C (4 channels each, coalesced rows), rows split across blocks.y;
//   per-channel coefficients sit in registers for the whole grid-stride loop.
// Grids: reductions ~2 waves (1056 blocks = 132 SMs x 4 x 2); elementwise grid-stride with at
//   most 1584 blocks (132 x 12: 3 or 4 resident blocks per SM). __launch_bounds__(256, 4) keeps
//   the hot kernels at <= 64 registers (4 blocks / SM); the fused variants use (256, 3).
// Reductions are two launches (partials + a tiny finalize) so no semaphore has to be zeroed;
//   the finalize's fixed-order f64 combine makes every result bitwise reproducible run to run.
// Stores are written as indices into uint4/uint2 base pointers: nvcc split casts of computed
//   pointers into scalar stores inside these loops (checked in the PTX: st.global.v4 / v2 now).
#include "aclnn_common.cuh"

namespace bnk {

using aclnn::Welford;
using aclnn::kFullMask;

constexpr int kMaxThreads = 256;  // every data kernel runs with the plan's block (<= 256, whole warps)
constexpr int kEPT = 16;          // NCX: elements per thread per step
constexpr int kSeg = 4096;        // NCX: longest tile (segment of one (n, c) plane)
constexpr int kCPT = 4;           // NXC: channels per thread
constexpr int kRPT = 4;           // NXC: rows per thread per step
constexpr int kLanes = 4;         // NCX reductions: interleaved sub-series a thread keeps in lock step

// Compute (accumulator) type of a data or per-channel type: f32 for float, __half, __nv_bfloat16;
// f64 for double. The workspace partials and per-channel coefficient arrays are slots of this type.
template <typename T> struct Acc { using type = float; };
template <> struct Acc<double> { using type = double; };
template <typename T> using acc_t = typename Acc<T>::type;

// One element of T to / from its compute type.
template <typename T>
__device__ __forceinline__ acc_t<T> ld(T v) {
  if constexpr (sizeof(T) == 8) return v;
  else return aclnn::to_f32(v);
}
template <typename T>
__device__ __forceinline__ T st(acc_t<T> v) {
  if constexpr (sizeof(T) == 8) return v;
  else return aclnn::from_f32<T>(v);
}

// N consecutive elements base[idx .. idx+N) (base aligned to N*sizeof(T), idx % N == 0): one vector
// access for 2- and 4-byte types, N element accesses for double.
template <int N, typename T>
__device__ __forceinline__ void ld_vec(const T* __restrict__ base, long long idx, acc_t<T> (&f)[N]) {
  if constexpr (sizeof(T) == 8) {
#pragma unroll
    for (int k = 0; k < N; ++k) f[k] = base[idx + k];
  } else {
    aclnn::load_vec_f32<N>(base, idx, f);
  }
}
// ld_vec for a reduction's lanes (load_vec_f32_split, in its split order where SPLIT_ORDER and the
// type has one): double and float as ld_vec.
template <int N, bool SPLIT_ORDER, typename T>
__device__ __forceinline__ void ld_vec_split(const T* __restrict__ base, long long idx, acc_t<T> (&f)[N]) {
  if constexpr (sizeof(T) == 8) {
    ld_vec<N>(base, idx, f);
  } else {
    aclnn::load_vec_f32_split<N, T, SPLIT_ORDER>(base, idx, f);
  }
}
template <int N, typename T>
__device__ __forceinline__ void st_vec(T* __restrict__ base, long long idx, const acc_t<T> (&f)[N]) {
  if constexpr (sizeof(T) == 8) {
#pragma unroll
    for (int k = 0; k < N; ++k) base[idx + k] = f[k];
  } else {
    aclnn::store_vec_f32<N>(base, idx, f);
  }
}

__device__ __forceinline__ long long lmin(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ long long lmax(long long a, long long b) { return a > b ? a : b; }

// NCX tiling of one (n, c) plane of S elements into `segs` segments of `seglen` (a multiple of
// 32, so mask words and 16-byte vectors never straddle two tiles). Mirrors _bn_plan.ncx_geometry.
struct NcxGeom {
  long long seglen;
  long long segs;
};
__device__ __forceinline__ NcxGeom ncx_geom(long long S) {
  if (S <= kSeg) return NcxGeom{(S + 31) / 32 * 32, 1};  // one tile per plane: no division
  const long long s0 = (S + kSeg - 1) / kSeg;
  long long L = (S + s0 - 1) / s0;
  L = (L + 31) / 32 * 32;
  NcxGeom g;
  g.seglen = L;
  g.segs = (S + L - 1) / L;
  return g;
}

// Grid-stride walk over the tiles of NCX planes (tile t = plane * segs + seg, plane = n*C + c)
// without a division in the loop: one stride moves dq planes (dqc channels) and dr segments,
// plus a carry. Reductions over one channel walk planes n with channels = 1.
struct TileWalk {
  long long plane, seg, c;
  long long dq, dr, dqc, segs, channels;
  __device__ __forceinline__ TileWalk(long long t, long long stride, long long segs_, long long channels_)
      : plane(t), seg(0), c(0), dq(stride), dr(0), dqc(0), segs(segs_), channels(channels_) {
    // (a 64-bit division costs 40-90 cycles on a CPU: the host emulator's threads walk few tiles each,
    // so the common cases skip them)
    if (segs > 1) {
      plane = t / segs;
      seg = t - plane * segs;
      dq = stride / segs;
      dr = stride - dq * segs;
    }
    if (channels > 1) {
      c = rem(plane, channels);
      dqc = rem(dq, channels);
    }
  }
  static __device__ __forceinline__ long long rem(long long a, long long b) {  // a, b >= 0
    return (a | b) >> 32 ? a % b
                         : static_cast<long long>(static_cast<unsigned>(a) % static_cast<unsigned>(b));
  }
  __device__ __forceinline__ void advance() {
    seg += dr;
    plane += dq;
    c += dqc;
    if (seg >= segs) {
      seg -= segs;
      ++plane;
      ++c;
    }
    if (c >= channels) c -= channels;
  }
};

// The tiles thread row `row` of `rows` walks out of Tall: [begin, end) by `step`. A GPU's rows stride
// over the grid (a warp's rows take neighbouring tiles). The host's elementwise plans give each row
// one thread (tx == 1) and a contiguous range of tiles: a block's threads run one after another on one
// CPU thread, so the block walks memory forward, and a thread's setup (the divisions of TileWalk, the
// coefficients) is paid once for many small planes (32x256x14x14 f32, one emulator thread per core:
// apply 0.31 ms with 8192 one-tile threads -> 0.20 with 1024 threads of 8 tiles each; backward
// elementwise 0.33 -> 0.22, where the same 1024 threads striding over the grid took 0.49).
struct TileSpan {
  long long begin, end, step;
};
__device__ __forceinline__ TileSpan row_tiles(long long Tall) {
  const long long rows = static_cast<long long>(gridDim.x) * blockDim.y;
  const long long row = static_cast<long long>(blockIdx.x) * blockDim.y + threadIdx.y;
  if (blockDim.x != 1) return TileSpan{row, Tall, rows};
  const long long per = (Tall + rows - 1) / rows, b = row * per;
  return TileSpan{b, lmin(Tall, b + per), 1};
}

// NXC rows are walked in chunks of `rpc` rows; block y takes a contiguous range of chunks, so each
// thread walks memory forward (a GPU does not mind; on the host emulator, where a block's threads
// run one after another, a forward walk is what the CPU's prefetchers follow).
struct ChunkRange {
  long long begin, end;
};
__device__ __forceinline__ ChunkRange chunk_range(long long R, long long rpc) {
  const long long chunks = (R + rpc - 1) / rpc;
  const long long per = (chunks + gridDim.y - 1) / gridDim.y;
  const long long b = static_cast<long long>(blockIdx.y) * per;
  return ChunkRange{b, lmin(chunks, b + per)};
}

__device__ __forceinline__ bool all_aligned(unsigned long long bytes, const void* a, const void* b, const void* c,
                                            const void* d) {
  return aclnn::is_aligned(a, bytes) && aclnn::is_aligned(b, bytes) && aclnn::is_aligned(c, bytes) &&
         aclnn::is_aligned(d, bytes);
}

template <int W> struct VecWidth { static constexpr int value = W; };
template <bool B> struct BoolConst { static constexpr bool value = B; };

// Runs body(VecWidth<VW>{}) with the NCX vector width (elements per vector access) for planes of S
// elements at these pointers (nullptr: unused): 16-byte vectors when every pointer is 16-byte aligned
// and S % V == 0 or the loop `peel`s each tile's head up to the first 16-byte boundary (ncx_head: the
// pointers are then equally misaligned at every plane); for 2-byte types 8-byte vectors next (S % 4
// == 0: 14x14 planes), which still convert the elements in pairs; else VW = 0, the lane-consecutive
// scalar path. Loops whose steps must start at a mask word (the reserve-mask readers and writers) do
// not peel, nor the backward reduce (measured 6 % slower on 14x14 f16/bf16 with it; its partial steps
// load whole vectors, which needs S % VW == 0).
template <typename T, typename Body>
__device__ __forceinline__ void with_ncx_width(long long S, const void* a, const void* b, const void* c,
                                               const void* d, Body&& body, bool peel = false) {
  constexpr int V = aclnn::Vec16<T>::value;
  if ((S % V == 0 || peel) && all_aligned(16, a, b, c, d)) {
    body(VecWidth<V>{});
    return;
  }
  if constexpr (sizeof(T) == 2) {
    if (S % (V / 2) == 0 && all_aligned(8, a, b, c, d)) {
      body(VecWidth<V / 2>{});
      return;
    }
  }
  body(VecWidth<0>{});
}

// Channels per access in the host's elementwise whole-rows walks (see nxc_rows): for 2-byte types one
// 16-byte vector of 8 channels. With the GPU layout's 4 channels (8-byte vectors) g++ kept bf16's
// conversions and math scalar (NHWC apply 1.60 -> 0.77-0.98 ms, backward elementwise 2.21 -> 0.87 ms
// on 8x64x56x56, one emulator thread); __half, converted a whole vector at a time on the host
// (aclnn::EmuWholeVector), gains 6-10 % from 8 (apply 0.65 -> 0.61 ms). The statistics' whole-rows walk
// keeps 4 (8 measured the same). with_row_group runs body(VecWidth<G>{}) with G = kRowCPT<T> where C
// and every pointer allow its vectors, else G = kCPT (the fused and unfused apply; the backward
// elementwise picks G itself, see nxc_belem_loop).
// Elements of a tile at p (len elements) before its first VW-element vector boundary: the head a
// peeling loop takes in the scalar layout before its vector steps (see with_ncx_width). 0 when VW = 0
// and for every tile of planes that keep the vectors aligned (S % VW == 0).
template <typename T, int VW>
__device__ __forceinline__ int ncx_head(const T* p, int len) {
  if constexpr (VW == 0) {
    return 0;
  } else {
    constexpr unsigned long long B = VW * sizeof(T);
    const int h = static_cast<int>(((B - reinterpret_cast<unsigned long long>(p) % B) % B) / sizeof(T));
    return h < len ? h : len;
  }
}

template <typename T> struct RowCPT { static constexpr int value = sizeof(T) == 2 ? 8 : kCPT; };
template <typename T>
constexpr int kRowCPT = RowCPT<T>::value;

// Whether C and these pointers (nullptr: unused) allow groups of kRowCPT<T> > kCPT channels.
template <typename T, bool VEC>
__device__ __forceinline__ bool row_group_fits(long long C, const void* a, const void* b, const void* c,
                                               const void* d) {
  if constexpr (VEC && kRowCPT<T> != kCPT) return C % kRowCPT<T> == 0 && all_aligned(16, a, b, c, d);
  return false;
}

template <typename T, bool VEC, typename Body>
__device__ __forceinline__ void with_row_group(long long C, const void* a, const void* b, const void* c,
                                               const void* d, Body&& body) {
  if constexpr (VEC && kRowCPT<T> != kCPT) {
    if (row_group_fits<T, VEC>(C, a, b, c, d)) {
      body(VecWidth<kRowCPT<T>>{});
      return;
    }
  }
  body(VecWidth<kCPT>{});
}

__device__ __forceinline__ int lane_id() {
  return static_cast<int>((threadIdx.x + blockDim.x * threadIdx.y) & 31u);
}

// ------------------------------------------------------------------------------------------------
// NCX step I/O. A step of a thread row covers tx*E consecutive elements of a tile; `p` points
// at the step start, `rem` = elements of the tile left from there (may exceed the step).
//   VW = V > 0: element e = j*V + k sits at offset (j*tx + x)*V + k   (V-element vectors, coalesced)
//   VW = 0:     element e sits at offset e*tx + x                      (lane-consecutive scalars)
// FULL: the whole step is in the tile (rem >= tx*E), so every load / store is unconditional, which
// the host emulator's g++ can keep in SIMD registers (an access under `if (in)` it could not).
// ------------------------------------------------------------------------------------------------
// SUMS: how the vectors of a reduction's lanes are loaded (ld_vec_split; a sum's order is the
// caller's): kSumsSplit in the split order where the type has one, kSumsInOrder in the elements' order.
enum : int { kPlain = 0, kSumsInOrder = 1, kSumsSplit = 2 };
template <typename T, int VW, int E, bool FULL = false, int SUMS = kPlain>
__device__ __forceinline__ void ncx_load(const T* __restrict__ base, long long at, int rem, int tx, int x,
                                         acc_t<T> (&v)[E], bool (&ok)[E]) {
  constexpr int V = VW > 0 ? VW : 1;
  if constexpr (VW > 0) {
#pragma unroll
    for (int j = 0; j < E / V; ++j) {
      const int off = (j * tx + x) * V;
      const bool in = FULL || off < rem;
      acc_t<T> f[V];
      if (in) {
        if constexpr (SUMS != kPlain)
          ld_vec_split<V, SUMS == kSumsSplit>(base, at + off, f);
        else
          ld_vec<V>(base, at + off, f);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) f[k] = acc_t<T>(0);
      }
#pragma unroll
      for (int k = 0; k < V; ++k) {
        v[j * V + k] = f[k];
        ok[j * V + k] = in;
      }
    }
  } else {
    const T* p = base + at;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const int off = e * tx + x;
      ok[e] = FULL || off < rem;
      v[e] = ok[e] ? ld(p[off]) : acc_t<T>(0);
    }
  }
}

template <typename T, int VW, int E, bool FULL = false>
__device__ __forceinline__ void ncx_store(T* __restrict__ base, long long at, int rem, int tx, int x,
                                          const acc_t<T> (&v)[E]) {
  constexpr int V = VW > 0 ? VW : 1;
  if constexpr (VW > 0) {
#pragma unroll
    for (int j = 0; j < E / V; ++j) {
      const int off = (j * tx + x) * V;
      if (FULL || off < rem) {
        acc_t<T> f[V];
#pragma unroll
        for (int k = 0; k < V; ++k) f[k] = v[j * V + k];
        st_vec<V>(base, at + off, f);
      }
    }
  } else {
    T* p = base + at;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const int off = e * tx + x;
      if (FULL || off < rem) p[off] = st<T>(v[e]);
    }
  }
}

// Reserve-mask bits of one step. `mrow` = the plane's first mask word, `sp` = position of the step
// start inside the plane (a multiple of 32).
template <typename T, int VW, int E>
__device__ __forceinline__ void ncx_read_bits(const unsigned* __restrict__ mrow, long long sp, int rem, int tx,
                                              int x, bool (&bit)[E]) {
  constexpr int V = VW > 0 ? VW : 1;
  if constexpr (VW > 0) {
#pragma unroll
    for (int j = 0; j < E / V; ++j) {
      const int off = (j * tx + x) * V;
      unsigned w = 0u;
      if (off < rem) w = mrow[(sp + off) >> 5] >> ((sp + off) & 31);
#pragma unroll
      for (int k = 0; k < V; ++k) bit[j * V + k] = (w >> k) & 1u;
    }
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const long long s = sp + e * tx + x;
      bit[e] = (e * tx + x < rem) ? ((mrow[s >> 5] >> (s & 31)) & 1u) : false;
    }
  }
}

// Writes the mask words of one step. All 32 lanes of the warp must call (warp collectives);
// `valid` = this thread row has a real tile; bit[e] must be false for elements outside the tile.
template <typename T, int VW, int E>
__device__ __forceinline__ void ncx_write_bits(unsigned* __restrict__ mrow, long long sp, int rem, bool valid,
                                               int tx, int x, const bool (&bit)[E]) {
  constexpr int V = VW > 0 ? VW : 1;
  if constexpr (VW > 0) {
    constexpr int G = 32 / V;  // lanes per mask word
    const int g = tx < G ? tx : G;
    unsigned acc = 0u;
#pragma unroll
    for (int j = 0; j < E / V; ++j) {
      const int off = (j * tx + x) * V;
      unsigned frag = 0u;
#pragma unroll
      for (int k = 0; k < V; ++k) frag |= (bit[j * V + k] ? 1u : 0u) << k;
      frag <<= (off & 31);
      const unsigned red = aclnn::warp_group_or(frag, g);
      if (tx >= G) {
        if ((x & (g - 1)) == 0 && valid && off < rem) mrow[(sp + off) >> 5] = red;
      } else {
        acc |= red;
        const int end = (j * tx + tx) * V;
        if ((end & 31) == 0) {
          if (x == 0 && valid && end - 32 < rem) mrow[(sp + end - 32) >> 5] = acc;
          acc = 0u;
        }
      }
    }
  } else {
    const int lane = lane_id();
    const int g = tx < 32 ? tx : 32;
    unsigned acc = 0u;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const unsigned b = __ballot_sync(kFullMask, bit[e]);
      if (tx >= 32) {
        const int ws = e * tx + x - lane;  // first element of this warp's word
        if (lane == 0 && valid && ws < rem) mrow[(sp + ws) >> 5] = b;
      } else {
        const int gl = lane & ~(g - 1);
        acc |= ((b >> gl) & ((1u << g) - 1u)) << ((e * tx) & 31);
        const int end = e * tx + tx;
        if ((end & 31) == 0) {
          if (x == 0 && valid && end - 32 < rem) mrow[(sp + end - 32) >> 5] = acc;
          acc = 0u;
        }
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// NXC I/O: 4 consecutive channels c0..c0+3 of one row. VEC: C % 4 == 0 and 4*sizeof(T) alignment.
// ------------------------------------------------------------------------------------------------
// G channels (G = kCPT, or kRowCPT<T> in the host's whole-rows walks); VEC: G * sizeof(T) alignment.
template <typename T, bool VEC, int G = kCPT>
__device__ __forceinline__ void nxc_load(const T* __restrict__ base, long long at, long long cleft,
                                         acc_t<T> (&f)[G]) {
  if constexpr (VEC) {
    ld_vec<G>(base, at, f);
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) f[k] = (k < cleft) ? ld(base[at + k]) : acc_t<T>(0);
  }
}

template <typename T, bool VEC, int G = kCPT>
__device__ __forceinline__ void nxc_store(T* __restrict__ base, long long at, long long cleft,
                                          const acc_t<T> (&f)[G]) {
  if constexpr (VEC) {
    st_vec<G>(base, at, f);
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k)
      if (k < cleft) base[at + k] = st<T>(f[k]);
  }
}

// Mask bits of channels c0..c0+G-1 (c0 % G == 0 and G divides 32, so one word holds all of them).
template <int G = kCPT>
__device__ __forceinline__ unsigned nxc_read_bits(const unsigned* __restrict__ mask, long long r, long long W,
                                                  long long c0) {
  return (mask[r * W + (c0 >> 5)] >> (c0 & 31)) & ((1u << G) - 1u);
}

// All 32 lanes must call. Lanes of a row group share a word per 8 lanes (or per cx lanes if cx < 8).
__device__ __forceinline__ void nxc_write_bits(unsigned* __restrict__ mask, long long r, long long W, long long c0,
                                               bool ok, unsigned nib, int cx, int x) {
  const int g = cx < 8 ? cx : 8;
  const unsigned red = aclnn::warp_group_or(ok ? (nib << (c0 & 31)) : 0u, g);
  if ((x & (g - 1)) == 0 && ok) mask[r * W + (c0 >> 5)] = red;
}

// ------------------------------------------------------------------------------------------------
// block-level combines (fixed order)
// ------------------------------------------------------------------------------------------------
// Whole block -> one Welford (thread 0). All threads must call. Each warp merges its lanes with
// shuffles and thread 0 merges the warps' results in warp order. A one-warp block (the host
// emulator's plans) skips the shuffles: every thread leaves its partial in shared memory and thread
// 0 merges the 32 in thread order after the one barrier. On the emulator a shuffle round is a fiber
// switch per lane: 10 rounds (5 for the Welford, 5 for the count) cost ~8 µs per block, the
// barrier ~1 µs; a GPU block of 8 warps keeps the shuffle tree.
template <typename A>
__device__ __forceinline__ Welford<A, int> block_welford(Welford<A, int> w) {
  __shared__ A s_mean[32];
  __shared__ A s_m2[32];
  __shared__ int s_n[32];
  const int tid = threadIdx.x + blockDim.x * threadIdx.y;
  const int nt = blockDim.x * blockDim.y, nw = nt / 32;
  const bool one_warp = nt <= 32;  // block-uniform
  if (!one_warp) w = aclnn::warp_welford(w);
  if (one_warp || (tid & 31) == 0) {
    const int k = one_warp ? tid : tid >> 5;
    s_mean[k] = w.mean;
    s_m2[k] = w.m2;
    s_n[k] = w.n;
  }
  __syncthreads();
  if (tid == 0) {
    const int parts = one_warp ? nt : nw;
    for (int i = 1; i < parts; ++i) {
      Welford<A, int> b;
      b.mean = s_mean[i];
      b.m2 = s_m2[i];
      b.n = s_n[i];
      w = aclnn::welford_merge(w, b);
    }
  }
  return w;
}

// Whole block -> two sums (thread 0). All threads must call. Same scheme as block_welford.
template <typename A>
__device__ __forceinline__ void block_sum2(A& a, A& b) {
  __shared__ A s_a[32];
  __shared__ A s_b[32];
  const int tid = threadIdx.x + blockDim.x * threadIdx.y;
  const int nt = blockDim.x * blockDim.y, nw = nt / 32;
  const bool one_warp = nt <= 32;  // block-uniform
  if (!one_warp) {
    a = aclnn::warp_sum(a);
    b = aclnn::warp_sum(b);
  }
  if (one_warp || (tid & 31) == 0) {
    const int k = one_warp ? tid : tid >> 5;
    s_a[k] = a;
    s_b[k] = b;
  }
  __syncthreads();
  if (tid == 0) {
    const int parts = one_warp ? nt : nw;
    for (int i = 1; i < parts; ++i) {
      a += s_a[i];
      b += s_b[i];
    }
  }
}

// NXC: combine the cy thread rows of each thread column (tree over y, fixed). Row 0 gets it.
template <typename A>
__device__ __forceinline__ void column_welford(Welford<A, int> (&w)[kCPT]) {
  __shared__ A s_mean[kCPT][kMaxThreads];
  __shared__ A s_m2[kCPT][kMaxThreads];
  __shared__ int s_n[kMaxThreads];
  const int cx = blockDim.x, cy = blockDim.y, y = threadIdx.y;
  const int tid = threadIdx.x + cx * y;
#pragma unroll
  for (int k = 0; k < kCPT; ++k) {
    s_mean[k][tid] = w[k].mean;
    s_m2[k][tid] = w[k].m2;
  }
  s_n[tid] = w[0].n;
  for (int off = cy >> 1; off > 0; off >>= 1) {
    __syncthreads();
    if (y < off) {
      const int o = tid + off * cx;
#pragma unroll
      for (int k = 0; k < kCPT; ++k) {
        Welford<A, int> b;
        b.mean = s_mean[k][o];
        b.m2 = s_m2[k][o];
        b.n = s_n[o];
        w[k] = aclnn::welford_merge(w[k], b);
        s_mean[k][tid] = w[k].mean;
        s_m2[k][tid] = w[k].m2;
      }
      s_n[tid] = w[0].n;
    }
  }
}

template <typename A>
__device__ __forceinline__ void column_sum2(A (&a)[kCPT], A (&b)[kCPT]) {
  __shared__ A s_a[kCPT][kMaxThreads];
  __shared__ A s_b[kCPT][kMaxThreads];
  const int cx = blockDim.x, cy = blockDim.y, y = threadIdx.y;
  const int tid = threadIdx.x + cx * y;
#pragma unroll
  for (int k = 0; k < kCPT; ++k) {
    s_a[k][tid] = a[k];
    s_b[k][tid] = b[k];
  }
  for (int off = cy >> 1; off > 0; off >>= 1) {
    __syncthreads();
    if (y < off) {
      const int o = tid + off * cx;
#pragma unroll
      for (int k = 0; k < kCPT; ++k) {
        a[k] += s_a[k][o];
        b[k] += s_b[k][o];
        s_a[k][tid] = a[k];
        s_b[k][tid] = b[k];
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// activation of the fused forward (cuDNN BN-Ex): returns act(v), `pass` = gradient passes
// ------------------------------------------------------------------------------------------------
enum Act { kActIdentity = 0, kActRelu = 1, kActClippedRelu = 2 };

// v where its reserve-mask bit is set, else +0: a bitwise AND with an all-ones or all-zero word, not a
// branch. The bits are data (about half of them set after a ReLU), and g++ compiled `if (!bit) d = 0`
// into a branch per element on the host, mispredicted half the time (the fused backward's kernels took
// 5.8-6.1 ms against 0.4-0.9 unfused on 8x64x56x56, f32, one emulator thread).
template <typename A>
__device__ __forceinline__ A keep_if(A v, bool bit) {
  if constexpr (sizeof(A) == 8)
    return __longlong_as_double(__double_as_longlong(v) & -static_cast<long long>(bit));
  else
    return __int_as_float(__float_as_int(v) & -static_cast<int>(bit));
}

template <int V> struct IntConst { static constexpr int value = V; };

// The activation of the fused forward; `pass` = the element's reserve-mask bit (the gradient flows).
// act_fwd_c has ACT at compile time (with_act runs body(IntConst<ACT>{})). ReLU is a bitwise AND
// (keep_if): as `v < 0 ? 0 : v` it kept g++ from vectorising the host's fused step (see ncx_apply_loop).
template <int ACT, typename A>
__device__ __forceinline__ A act_fwd_c(A v, A ceiling, bool& pass) {
  if constexpr (ACT == kActRelu) {
    pass = v > A(0);
    return keep_if(v, !(v < A(0)));  // NaN propagates
  } else if constexpr (ACT == kActClippedRelu) {
    pass = (v > A(0)) & (v < ceiling);  // no short circuit: a select, not a branch, on the host
    return v < A(0) ? A(0) : (v > ceiling ? ceiling : v);
  } else {
    pass = true;
    return v;
  }
}
template <typename Body>
__device__ __forceinline__ void with_act(int act, Body&& body) {
  if (act == kActRelu)
    body(IntConst<kActRelu>{});
  else if (act == kActClippedRelu)
    body(IntConst<kActClippedRelu>{});
  else
    body(IntConst<kActIdentity>{});
}
template <typename A>
__device__ __forceinline__ A act_fwd(A v, int act, A ceiling, bool& pass) {
  if (act == kActRelu) return act_fwd_c<kActRelu>(v, ceiling, pass);
  if (act == kActClippedRelu) return act_fwd_c<kActClippedRelu>(v, ceiling, pass);
  return act_fwd_c<kActIdentity>(v, ceiling, pass);
}

// ------------------------------------------------------------------------------------------------
// statistics partial
// ------------------------------------------------------------------------------------------------
// NCX statistics of one thread: a full step's E values go to kLanes interleaved sub-series in lock
// step (value e to series e % kLanes; aclnn::welford_lanes_add), a partial step (a tile's end) to
// `tail`; at the end the lanes are folded in a fixed tree and merged with the tail into `w`.
// The lanes state lives in this function only and the partial steps never touch it: when it also
// flowed through a second path (a branch per step, the caller's other vector width), g++ 12 gave up
// the SIMD form of the whole loop on the host emulator. A partial step reads its elements in the
// lane-consecutive scalar layout (VW = 0: thread x takes e*tx + x), which covers the step's elements
// once across the tile row just as the vector layout does (a reduction does not care which thread
// adds which element); with the vector layout's loads in both places g++ 12 again kept the loop scalar.
// Whether a tile's partial step first feeds whole rows of L elements to the lanes (below). Measured on
// the host emulator (8x64x56x56 NCHW statistics, one emulator thread, with the __half vectors of the full
// steps converted through memory, see aclnn::load_vec_f32_split): __half 1.78 -> 0.84 ms, where f32
// 0.70 -> 1.64 and bf16 0.71 -> 2.04 ms: g++ 12 keeps the loop's SIMD form for one and loses it for the
// others. On a GPU either way is a handful of instructions per tile.
template <typename T> constexpr bool kTailRows = false;
template <> constexpr bool kTailRows<__half> = true;
template <typename T, int VW>
__device__ __forceinline__ void ncx_stats_loop(const T* __restrict__ x, long long N, long long C, long long S,
                                               long long c, acc_t<T> K, Welford<acc_t<T>, int>& w) {
  using A = acc_t<T>;
  constexpr int E = kEPT, L = kLanes, R = E / L;
  static_assert(L == 4, "the fold below merges four lanes");
  const int tx = blockDim.x, ty = blockDim.y, xi = threadIdx.x;
  const NcxGeom g = ncx_geom(S);
  const long long Tc = N * g.segs;
  const long long stride = static_cast<long long>(gridDim.y) * ty;
  long long t = static_cast<long long>(blockIdx.y) * ty + threadIdx.y;
  if (t >= Tc) return;
  A mean[L], m2[L];
  int n = 0;
#pragma unroll
  for (int k = 0; k < L; ++k) mean[k] = m2[k] = A(0);
  Welford<A, int> tail{A(0), A(0), 0};
  TileWalk tile(t, stride, g.segs, 1);
  const int step = tx * E;
  for (; t < Tc; t += stride) {
    const long long s0 = tile.seg * g.seglen;
    const int len = static_cast<int>(lmin(g.seglen, S - s0));
    const long long off0 = (tile.plane * C + c) * S + s0;
    // a head (see with_ncx_width) or the tile's last, partial step, in the scalar layout (see above):
    // whole rows of the lanes (L elements, one count for all lanes) where kTailRows<T>, then one
    // element at a time (a 14x14 plane: 12 full steps of one host thread and a 4-element head or
    // tail; a whole masked chunk per thread cost as much as the full steps)
    auto partial = [&](int so, int rem) {
      const T* p = x + off0 + so;
      int e = 0;
      for (; kTailRows<T> && (e + L - 1) * tx + xi < rem; e += L) {
        A r1[1][L];
#pragma unroll
        for (int k = 0; k < L; ++k) r1[0][k] = ld(p[(e + k) * tx + xi]) - K;
        aclnn::welford_lanes_add(mean, m2, n, r1);
      }
      for (; e * tx + xi < rem; ++e) aclnn::welford_add_one(tail, ld(p[e * tx + xi]) - K);
    };
    int so = ncx_head<T, VW>(x + off0, len);
    if (so > 0) partial(0, so);
    for (; so + step <= len; so += step) {  // full steps: every element is in the tile
      A v[E];
      bool ok[E];
      ncx_load<T, VW, E, true, kSumsSplit>(x, off0 + so, len - so, tx, xi, v, ok);  // lanes: any order
      A r[R][L];
#pragma unroll
      for (int e = 0; e < E; ++e) r[e / L][e % L] = v[e] - K;
      aclnn::welford_lanes_add(mean, m2, n, r);
    }
    partial(so, len - so);
    tile.advance();
  }
  Welford<A, int> lw[L];
  for (int k = 0; k < L; ++k) lw[k] = aclnn::welford_lanes_get(mean, m2, n, k);  // no pragma: see nxc_stats_loop
  w = aclnn::welford_merge(aclnn::welford_merge(lw[0], lw[1]), aclnn::welford_merge(lw[2], lw[3]));
  w = aclnn::welford_merge(w, tail);
}

// NXC statistics of one thread's 4 channels over its rows, as 4 lanes (see ncx_stats_loop: the lanes
// state is local, the one partial chunk at the end of the rows has its own).
template <typename T, bool VEC>
__device__ __forceinline__ void nxc_stats_loop(const T* __restrict__ x, long long R, long long C, long long c0,
                                               const acc_t<T> (&K)[kCPT], Welford<acc_t<T>, int> (&w)[kCPT]) {
  using A = acc_t<T>;
  const int cy = blockDim.y, y = threadIdx.y;
  const long long rpc = static_cast<long long>(cy) * kRPT;
  const long long cleft = C - c0;
  const ChunkRange cr = chunk_range(R, rpc);
  A mean[kCPT], m2[kCPT];
  int n = 0;
#pragma unroll
  for (int k = 0; k < kCPT; ++k) mean[k] = m2[k] = A(0);
  const long long full_end = lmin(cr.end, R / rpc);  // chunks whose every row exists
  long long ch = cr.begin;
  for (; ch < full_end; ++ch) {
    A f[kRPT][kCPT];
#pragma unroll
    for (int j = 0; j < kRPT; ++j) {
      nxc_load<T, VEC>(x, (ch * rpc + j * cy + y) * C + c0, cleft, f[j]);
#pragma unroll
      for (int k = 0; k < kCPT; ++k) f[j][k] -= K[k];
    }
    aclnn::welford_lanes_add(mean, m2, n, f);
  }
  A tmean[kCPT], tm2[kCPT];
  int tn = 0;
#pragma unroll
  for (int k = 0; k < kCPT; ++k) tmean[k] = tm2[k] = A(0);
  if (ch < cr.end) {  // the last chunk of all rows: some rows past the end
    A f[kRPT][kCPT];
    bool ok[kRPT];
#pragma unroll
    for (int j = 0; j < kRPT; ++j) {
      const long long r = ch * rpc + j * cy + y;
      ok[j] = r < R;
      if (ok[j]) {
        nxc_load<T, VEC>(x, r * C + c0, cleft, f[j]);
      } else {
#pragma unroll
        for (int k = 0; k < kCPT; ++k) f[j][k] = A(0);
      }
#pragma unroll
      for (int k = 0; k < kCPT; ++k) f[j][k] -= K[k];
    }
    aclnn::welford_add_rows(tmean, tm2, tn, f, ok);
  }
  // (no `#pragma unroll` on the loops that read a lanes state out: on the host emulator, where it
  // becomes `#pragma GCC unroll`, g++ then kept the state in memory and the hot loop scalar; nvcc
  // unrolls a 4-trip loop anyway)
  for (int k = 0; k < kCPT; ++k)
    w[k] = aclnn::welford_merge(aclnn::welford_lanes_get(mean, m2, n, k), aclnn::welford_lanes_get(tmean, tm2, tn, k));
}

// NXC statistics of a split, whole rows (the host's plan: block (1, 1, 1), grid (1, splits); see
// plan_reduction). A GPU plan gives each thread 4 channels and walks rows per thread, coalesced across
// the warp; run thread after thread on the host that read 16 bytes per row (f32 8x64x56x56: 0.9 ms
// against 0.4 for NCHW). Here the split's one thread walks its rows 4 at a time across every channel,
// reading memory in order (G channels a step). Each channel group keeps a lanes state (welford_lanes_add: mean and M2 of
// x - K per channel, one count for all) in the split's own workspace slots, 8 bytes per channel, so it
// stays in L1 whatever C is. The split's rows past the last full chunk of 4 (the end of all rows) are
// added one row at a time. Returns the count; mean / m2 hold the partials (m2 not yet clamped).
template <typename T, bool VEC, int G = kCPT>
__device__ __forceinline__ int nxc_stats_rows(const T* __restrict__ x, long long R, long long C,
                                              acc_t<T>* __restrict__ mean, acc_t<T>* __restrict__ m2) {
  using A = acc_t<T>;
  for (long long c = 0; c < C; ++c) mean[c] = m2[c] = A(0);
  const ChunkRange cr = chunk_range(R, kRPT);
  const long long full_end = lmin(cr.end, R / kRPT);
  int n = 0;
  for (long long ch = cr.begin; ch < full_end; ++ch) {
    for (long long cg = 0; cg < C; cg += G) {
      A K[G], mu[G], q[G], f[kRPT][G];
      nxc_load<T, VEC, G>(x, cg, C - cg, K);
#pragma unroll
      for (int k = 0; k < G; ++k) {
        mu[k] = VEC || k < C - cg ? mean[cg + k] : A(0);
        q[k] = VEC || k < C - cg ? m2[cg + k] : A(0);
      }
#pragma unroll
      for (int j = 0; j < kRPT; ++j) {
        nxc_load<T, VEC, G>(x, (ch * kRPT + j) * C + cg, C - cg, f[j]);
#pragma unroll
        for (int k = 0; k < G; ++k) f[j][k] -= K[k];
      }
      int nk = n;
      aclnn::welford_lanes_add(mu, q, nk, f);
#pragma unroll
      for (int k = 0; k < G; ++k)
        if (VEC || k < C - cg) {
          mean[cg + k] = mu[k];
          m2[cg + k] = q[k];
        }
    }
    n += kRPT;
  }
  const long long tail_end = lmin(cr.end * kRPT, R);
  for (long long r = lmax(cr.begin, full_end) * kRPT; r < tail_end; ++r) {
    for (long long cg = 0; cg < C; cg += G) {
      A K[G], mu[G], q[G], f[1][G];
      nxc_load<T, VEC, G>(x, cg, C - cg, K);
#pragma unroll
      for (int k = 0; k < G; ++k) {
        mu[k] = VEC || k < C - cg ? mean[cg + k] : A(0);
        q[k] = VEC || k < C - cg ? m2[cg + k] : A(0);
      }
      nxc_load<T, VEC, G>(x, r * C + cg, C - cg, f[0]);
#pragma unroll
      for (int k = 0; k < G; ++k) f[0][k] -= K[k];
      int nk = n;
      aclnn::welford_lanes_add(mu, q, nk, f);
#pragma unroll
      for (int k = 0; k < G; ++k)
        if (VEC || k < C - cg) {
          mean[cg + k] = mu[k];
          m2[cg + k] = q[k];
        }
    }
    ++n;
  }
  return n;
}

}  // namespace bnk

// ================================================================================================
// kernels
// ================================================================================================

// (1a) Per-split Welford partials of x (shifted by K[c], the channel's first element).
template <typename T, bool CL>
__global__ void ACLNN_LAUNCH_BOUNDS(256, 4) bn_stats_partial(const T* __restrict__ x, bnk::acc_t<T>* __restrict__ ws, long long N,
                                 long long C, long long S) {
  using namespace bnk;
  using A = acc_t<T>;
  const long long splits = gridDim.y, split = blockIdx.y;
  A* ws_mean = ws;
  A* ws_m2 = ws + splits * C;
  int* ws_n = reinterpret_cast<int*>(ws + 2 * splits * C);
  A* ws_K = ws + 3 * splits * C;
  if constexpr (!CL) {
    const long long c = blockIdx.x;
    const A K = ld(x[c * S]);
    Welford<A, int> w{A(0), A(0), 0};
    with_ncx_width<T>(
        S, x, nullptr, nullptr, nullptr, [&](auto vw) { ncx_stats_loop<T, decltype(vw)::value>(x, N, C, S, c, K, w); },
        true);
    w = block_welford(w);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      ws_mean[split * C + c] = w.mean;
      ws_m2[split * C + c] = w.m2;
      ws_n[split * C + c] = w.n;
      if (split == 0) ws_K[c] = K;
    }
  } else {
    const long long R = N * S;
    if (blockDim.x * blockDim.y == 1 && gridDim.x == 1 && C > kCPT) {  // the host's whole-row plan
      A* mean = ws_mean + split * C;
      A* m2 = ws_m2 + split * C;
      // 2-byte types take a 16-byte vector of 8 channels a step where C and x allow (kRowCPT; the
      // emulator converts it whole): 8x64x56x56 f16 0.57 -> 0.30 ms, bf16 0.48 -> 0.38 (one emulator
      // thread); f32 in pairs of 16-byte vectors measured 2x slower, so it keeps 4
      const int n = row_group_fits<T, true>(C, x, nullptr, nullptr, nullptr)
                        ? nxc_stats_rows<T, true, kRowCPT<T>>(x, R, C, mean, m2)
                    : C % kCPT == 0 && aclnn::is_aligned(x, kCPT * sizeof(T)) ? nxc_stats_rows<T, true>(x, R, C, mean, m2)
                                                                              : nxc_stats_rows<T, false>(x, R, C, mean, m2);
      for (long long c = 0; c < C; ++c) {
        if (m2[c] < A(0)) m2[c] = A(0);  // as welford_lanes_get
        ws_n[split * C + c] = n;
        if (split == 0) ws_K[c] = ld(x[c]);
      }
      return;
    }
    const long long c0 = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * kCPT;
    A K[kCPT];
    Welford<A, int> w[kCPT];
#pragma unroll
    for (int k = 0; k < kCPT; ++k) {
      K[k] = (c0 + k < C) ? ld(x[c0 + k]) : A(0);
      w[k] = Welford<A, int>{A(0), A(0), 0};
    }
    if (c0 < C) {
      if (C % kCPT == 0 && aclnn::is_aligned(x, kCPT * sizeof(T)))
        nxc_stats_loop<T, true>(x, R, C, c0, K, w);
      else
        nxc_stats_loop<T, false>(x, R, C, c0, K, w);
    }
    column_welford(w);
    if (threadIdx.y == 0) {
#pragma unroll
      for (int k = 0; k < kCPT; ++k) {
        const long long c = c0 + k;
        if (c < C) {
          ws_mean[split * C + c] = w[k].mean;
          ws_m2[split * C + c] = w[k].m2;
          ws_n[split * C + c] = w[k].n;
          if (split == 0) ws_K[c] = K[k];
        }
      }
    }
  }
}

// (1b) Combine the partials of each channel in a fixed order (double), write the statistics.
template <typename P>
__global__ void bn_stats_finalize(const bnk::acc_t<P>* __restrict__ ws, long long splits, long long C,
                                  bnk::acc_t<P> eps, bnk::acc_t<P> momentum, const P* __restrict__ weight,
                                  const P* __restrict__ bias, P* __restrict__ save_mean, P* __restrict__ save_invstd,
                                  P* running_mean, P* running_var, bnk::acc_t<P>* __restrict__ mean_f,
                                  bnk::acc_t<P>* __restrict__ scale_f, bnk::acc_t<P>* __restrict__ shift_f) {
  using A = bnk::acc_t<P>;
  // block (G, W): W channels, G lanes each (G = 32, a warp per channel, on a GPU; 1 on the host)
  const int lane = threadIdx.x, G = blockDim.x;
  const long long c = static_cast<long long>(blockIdx.x) * blockDim.y + threadIdx.y;
  if (c >= C) return;  // a channel's lanes leave together (G = 32: a whole warp)
  // lanes at or beyond `splits` hold nothing: those shuffle rounds are skipped (G = 1: none at all)
  const int active = splits < G ? static_cast<int>(splits) : G;
  const A* ws_mean = ws;
  const A* ws_m2 = ws + splits * C;
  const int* ws_n = reinterpret_cast<const int*>(ws + 2 * splits * C);
  const A* ws_K = ws + 3 * splits * C;
  aclnn::Welford<double, long long> w{0.0, 0.0, 0};
  for (long long s = lane; s < splits; s += G) {
    aclnn::Welford<double, long long> b;
    b.mean = ws_mean[s * C + c];
    b.m2 = ws_m2[s * C + c];
    b.n = ws_n[s * C + c];
    w = aclnn::welford_merge(w, b);
  }
  w = aclnn::warp_welford(w, active);
  if (lane != 0) return;
  const double n = static_cast<double>(w.n);
  const double mean = static_cast<double>(ws_K[c]) + w.mean;
  const double var = w.m2 / n;  // biased
  const double e = static_cast<double>(eps);
  const double invstd = (var == 0.0 && e == 0.0) ? 0.0 : 1.0 / sqrt(var + e);
  if (save_mean) save_mean[c] = aclnn::from_f64<P>(mean);
  if (save_invstd) save_invstd[c] = aclnn::from_f64<P>(invstd);
  const double m = static_cast<double>(momentum);
  if (running_mean) running_mean[c] = aclnn::from_f64<P>((1.0 - m) * aclnn::to_f64(running_mean[c]) + m * mean);
  if (running_var) {
    const double unbiased = var * (n / (n - 1.0));  // n == 1: 0 * inf = NaN, as PyTorch's kernel
    running_var[c] = aclnn::from_f64<P>((1.0 - m) * aclnn::to_f64(running_var[c]) + m * unbiased);
  }
  const double wv = weight ? aclnn::to_f64(weight[c]) : 1.0;
  const double bv = bias ? aclnn::to_f64(bias[c]) : 0.0;
  if (mean_f) mean_f[c] = static_cast<A>(mean);
  if (scale_f) scale_f[c] = static_cast<A>(invstd * wv);
  if (shift_f) shift_f[c] = static_cast<A>(bv);
}

// (1c) Per-channel f32 coefficients from user tensors (inference / elemt / backward prep).
template <typename P>
__global__ void bn_prep(const P* __restrict__ mean, const P* __restrict__ stat, int stat_is_var, bnk::acc_t<P> eps,
                        const P* __restrict__ weight, const P* __restrict__ bias, long long C,
                        bnk::acc_t<P>* __restrict__ out_mean, bnk::acc_t<P>* __restrict__ out_invstd,
                        bnk::acc_t<P>* __restrict__ out_w, bnk::acc_t<P>* __restrict__ out_scale,
                        bnk::acc_t<P>* __restrict__ out_shift) {
  using A = bnk::acc_t<P>;
  ACLNN_GRID_STRIDE_LOOP(c, C) {
    const double m = mean ? aclnn::to_f64(mean[c]) : 0.0;
    double invstd;
    if (stat_is_var) {
      const double var = stat ? aclnn::to_f64(stat[c]) : 1.0;
      const double e = static_cast<double>(eps);
      invstd = (var == 0.0 && e == 0.0) ? 0.0 : 1.0 / sqrt(var + e);
    } else {
      invstd = stat ? aclnn::to_f64(stat[c]) : 1.0;
    }
    const double wv = weight ? aclnn::to_f64(weight[c]) : 1.0;
    const double bv = bias ? aclnn::to_f64(bias[c]) : 0.0;
    if (out_mean) out_mean[c] = static_cast<A>(m);
    if (out_invstd) out_invstd[c] = static_cast<A>(invstd);
    if (out_w) out_w[c] = static_cast<A>(wv);
    if (out_scale) out_scale[c] = static_cast<A>(invstd * wv);
    if (out_shift) out_shift[c] = static_cast<A>(bv);
  }
}

// (2) y = act((x - mean) * scale + shift [+ z]), optional reserve mask.
namespace bnk {

template <typename T, int VW, bool FUSED>
__device__ __forceinline__ void ncx_apply_loop(const T* __restrict__ x, const T* __restrict__ z,
                                               const acc_t<T>* __restrict__ mean_f,
                                               const acc_t<T>* __restrict__ scale_f,
                                               const acc_t<T>* __restrict__ shift_f, T* __restrict__ y,
                                               unsigned* __restrict__ mask, long long N, long long C, long long S,
                                               int act, acc_t<T> ceiling) {
  using A = acc_t<T>;
  constexpr int E = FUSED ? kEPT / 2 : kEPT;  // two input streams -> half the elements per step
  const int tx = blockDim.x, ty = blockDim.y, xi = threadIdx.x;
  const NcxGeom g = ncx_geom(S);
  const long long W = (S + 31) / 32;
  const long long Tall = N * C * g.segs;
  const long long stride = static_cast<long long>(gridDim.x) * ty;
  long long t = static_cast<long long>(blockIdx.x) * ty + threadIdx.y;
  const int step = tx * E;
  if constexpr (!FUSED) {  // no mask, no collective: each row walks its own tiles (row_tiles)
    const TileSpan span = row_tiles(Tall);
    if (span.begin >= span.end) return;
    TileWalk tile(span.begin, span.step, g.segs, C);
    for (t = span.begin; t < span.end; t += span.step) {
      const long long s0 = tile.seg * g.seglen;
      const int len = static_cast<int>(lmin(g.seglen, S - s0));
      const A m = mean_f[tile.c], sc = scale_f[tile.c], sh = shift_f[tile.c];
      const long long off0 = tile.plane * S + s0;
      auto partial = [&](int so, int rem) {  // a head or the last, partial step, in the scalar layout
        A v[E];
        bool ok[E];
        ncx_load<T, 0, E>(x, off0 + so, rem, tx, xi, v, ok);
#pragma unroll
        for (int e = 0; e < E; ++e) v[e] = (v[e] - m) * sc + sh;
        ncx_store<T, 0, E>(y, off0 + so, rem, tx, xi, v);
      };
      int so = ncx_head<T, VW>(x + off0, len);
      if (so > 0) partial(0, so);
      for (; so + step <= len; so += step) {  // full steps (see ncx_belem_loop)
        A v[E];
        bool ok[E];
        ncx_load<T, VW, E, true>(x, off0 + so, len - so, tx, xi, v, ok);
#pragma unroll
        for (int e = 0; e < E; ++e) v[e] = (v[e] - m) * sc + sh;
        ncx_store<T, VW, E, true>(y, off0 + so, len - so, tx, xi, v);
      }
      if (so < len) partial(so, len - so);
      tile.advance();
    }
    return;
  }
  if (tx == 1) {
    // The host's fused plan: one thread per tile, so it owns the tile's mask words (a tile starts at a
    // word: seglen is a multiple of 32) and writes them itself. A GPU's tile is shared by a warp's
    // lanes, which OR each word with warp collectives (on the emulator a fiber switch per lane per
    // step: 19-24 ms of BatchNormActivation's apply on 8x64x56x56 and 32x256x14x14).
    static_assert(32 % E == 0, "a step's bits fall in one mask word");
    const TileSpan span = row_tiles(Tall);
    if (span.begin >= span.end) return;
    with_act(act, [&](auto actc) {
      constexpr int ACT = decltype(actc)::value;
      TileWalk tile(span.begin, span.step, g.segs, C);
      for (long long t = span.begin; t < span.end; t += span.step) {
        const long long s0 = tile.seg * g.seglen;
        const int len = static_cast<int>(lmin(g.seglen, S - s0));
        const A m = mean_f[tile.c], sc = scale_f[tile.c], sh = shift_f[tile.c];
        const long long off0 = tile.plane * S + s0;
        // One step: elements so .. so+E-1, in order; FULL: all in the tile (unconditional loads and
        // stores). The activation and z hoisted out of the step, ReLU as a bitwise AND and the values
        // computed apart from the bits let g++ keep the step's arithmetic in SIMD registers (the
        // hoisting alone, or the bits gathered in an array alone, measured no faster): BatchNormActivation's
        // apply, one emulator thread, NCHW f32 2.39 -> 0.99 ms, bf16 2.38 -> 1.18, f16 2.19 -> 1.61 (the
        // bits stay scalar).
        auto step_bits = [&](int so, auto full) {
          constexpr bool FULL = decltype(full)::value;
          A v[E], zv[E];
          bool ok[E], zok[E];
          ncx_load<T, VW, E, FULL>(x, off0 + so, len - so, 1, 0, v, ok);
          if (z) {
            ncx_load<T, VW, E, FULL>(z, off0 + so, len - so, 1, 0, zv, zok);
          } else {
#pragma unroll
            for (int e = 0; e < E; ++e) zv[e] = A(-0.0);  // r + -0 == r for every r: one code path
          }
          A r[E];
#pragma unroll
          for (int e = 0; e < E; ++e) r[e] = (v[e] - m) * sc + sh + zv[e];
#pragma unroll
          for (int e = 0; e < E; ++e) {
            bool pass;
            v[e] = act_fwd_c<ACT>(r[e], ceiling, pass);
          }
          ncx_store<T, VW, E, FULL>(y, off0 + so, len - so, 1, 0, v);
          unsigned pb[E];
#pragma unroll
          for (int e = 0; e < E; ++e) {
            bool pass;
            act_fwd_c<ACT>(r[e], ceiling, pass);
            pb[e] = static_cast<unsigned>(ok[e] & pass) << e;
          }
          unsigned bits = 0u;
#pragma unroll
          for (int e = 0; e < E; ++e) bits |= pb[e];
          return bits;
        };
        unsigned word = 0u;
        for (int so = 0; so < len; so += E) {
          const unsigned bits = so + E <= len ? step_bits(so, BoolConst<true>{}) : step_bits(so, BoolConst<false>{});
          word |= bits << (so & 31);
          if (mask && (((so + E) & 31) == 0 || so + E >= len)) {
            mask[tile.plane * W + ((s0 + so) >> 5)] = word;  // bits past the plane's end stay 0
            word = 0u;
          }
        }
        tile.advance();
      }
    });
    return;
  }
  // FUSED on a GPU: block-uniform trip counts (warp collectives inside when writing the mask): every row of
  // a warp runs the same number of steps; rows without a tile run predicated off.
  TileWalk tile(t, stride, g.segs, C);
  for (long long tb = static_cast<long long>(blockIdx.x) * ty; tb < Tall; tb += stride, t += stride) {
    const bool valid = t < Tall;
    const long long s0 = tile.seg * g.seglen;
    const int len = static_cast<int>(valid ? lmin(g.seglen, S - s0) : lmin(g.seglen, S));
    A m = A(0), sc = A(0), sh = A(0);
    if (valid) {
      m = mean_f[tile.c];
      sc = scale_f[tile.c];
      sh = shift_f[tile.c];
    }
    const long long off0 = tile.plane * S + s0;
    for (int so = 0; so < len; so += step) {
      A v[E];
      bool ok[E];
      if (valid) {
        ncx_load<T, VW, E>(x, off0 + so, len - so, tx, xi, v, ok);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) {
          v[e] = A(0);
          ok[e] = false;
        }
      }
      A zv[E];
      bool zok[E];
      if (z && valid) ncx_load<T, VW, E>(z, off0 + so, len - so, tx, xi, zv, zok);
      bool bit[E];
#pragma unroll
      for (int e = 0; e < E; ++e) {
        A r = (v[e] - m) * sc + sh;
        if (z && valid) r += zv[e];
        bool pass;
        v[e] = act_fwd(r, act, ceiling, pass);
        bit[e] = ok[e] && pass;
      }
      if (valid) ncx_store<T, VW, E>(y, off0 + so, len - so, tx, xi, v);
      if (mask) ncx_write_bits<T, VW, E>(mask + tile.plane * W, s0 + so, len - so, valid, tx, xi, bit);
    }
    tile.advance();
  }
}

// The rows of thread yi in the whole-rows walk: the block's rows (chunk_range over chunks of cy
// rows), cut into cy consecutive runs, one per thread row.
struct NxcRows {
  long long begin, end;
};
__device__ __forceinline__ NxcRows nxc_rows(long long R, int cy, int yi) {
  const ChunkRange cr = chunk_range(R, cy);
  const long long b = cr.begin * cy, e = lmin(cr.end * cy, R);
  const long long per = (e - b + cy - 1) / cy;
  const long long rb = lmin(b + yi * per, e);
  return NxcRows{rb, lmin(rb + per, e)};
}

// Whole rows (host plans: cx * gridDim.x * 4 < C). A GPU plan gives each thread one group of 4
// channels and walks rows per thread (coalesced across the warp); on the host a block's threads run
// one after another, so a thread that walks each of its rows across all channels reads memory in
// order instead of 16 bytes per row (f32 NHWC apply 0.50-0.62 -> 0.30-0.37 ms, backward elementwise
// 0.62-0.94 -> 0.34-0.47 on 8x64x56x56 and 32x256x14x14). Coefficients of channels cg..cg+3 (0 past
// C), per group: they stay in L1; with VEC (C % 4 == 0) loaded unconditionally, which g++ needs to
// vectorise the group (a conditional load per channel kept it scalar and no faster than before).
template <bool VEC, int G = kCPT, typename A>
__device__ __forceinline__ void nxc_coefs(const A* __restrict__ c, long long cg, long long C, A (&o)[G]) {
#pragma unroll
  for (int k = 0; k < G; ++k) o[k] = VEC || k < C - cg ? c[cg + k] : A(0);  // VEC: C % G == 0
}

template <typename T, bool VEC, bool FUSED>
__device__ __forceinline__ void nxc_apply_loop(const T* __restrict__ x, const T* __restrict__ z,
                                               const acc_t<T>* __restrict__ mean_f,
                                               const acc_t<T>* __restrict__ scale_f,
                                               const acc_t<T>* __restrict__ shift_f, T* __restrict__ y,
                                               unsigned* __restrict__ mask, long long N, long long C, long long S,
                                               int act, acc_t<T> ceiling) {
  using A = acc_t<T>;
  constexpr int RP = FUSED ? kRPT / 2 : kRPT;  // rows per thread per step
  const int cx = blockDim.x, cy = blockDim.y, xi = threadIdx.x, yi = threadIdx.y;
  const long long c0 = (static_cast<long long>(blockIdx.x) * cx + xi) * kCPT;
  const long long cstep = static_cast<long long>(kCPT) * cx * gridDim.x;
  if constexpr (!FUSED) {
    if (cstep < C) {  // several channel groups per thread (the host's plan): whole rows, see nxc_rows
      with_row_group<T, VEC>(C, x, y, nullptr, nullptr, [&](auto gw) {
        constexpr int G = decltype(gw)::value;
        const long long gstep = static_cast<long long>(G) * cx * gridDim.x;
        const NxcRows rows = nxc_rows(N * S, cy, yi);
        for (long long r = rows.begin; r < rows.end; ++r)
          for (long long cg = c0 / kCPT * G; cg < C; cg += gstep) {
            A f[G], mm[G], ss[G], hh[G];
            nxc_coefs<VEC, G>(mean_f, cg, C, mm);
            nxc_coefs<VEC, G>(scale_f, cg, C, ss);
            nxc_coefs<VEC, G>(shift_f, cg, C, hh);
            nxc_load<T, VEC, G>(x, r * C + cg, C - cg, f);
#pragma unroll
            for (int k = 0; k < G; ++k) f[k] = (f[k] - mm[k]) * ss[k] + hh[k];
            nxc_store<T, VEC, G>(y, r * C + cg, C - cg, f);
          }
      });
      return;
    }
  } else if (cstep == kCPT && C > kCPT) {
    // The host's fused plan: one thread walks all of its rows' channels, so it owns each row's mask
    // words and writes them itself. On a GPU a mask word is ORed across the 8 lanes that share it
    // (a warp collective per row: on the emulator a fiber switch per lane per row, 20-30 ms of
    // BatchNormActivation's apply on 8x64x56x56).
    const long long W = (C + 31) / 32;
    with_row_group<T, VEC>(C, x, y, z, nullptr, [&](auto gw) {
      constexpr int G = decltype(gw)::value;
      const NxcRows rows = nxc_rows(N * S, cy, yi);
      with_act(act, [&](auto actc) {  // as ncx_apply_loop's host step: act and z hoisted, bits apart
        constexpr int ACT = decltype(actc)::value;
        for (long long r = rows.begin; r < rows.end; ++r) {
          unsigned word = 0u;
          for (long long cg = 0; cg < C; cg += G) {
            A f[G], zf[G], mm[G], ss[G], hh[G];
            nxc_coefs<VEC, G>(mean_f, cg, C, mm);
            nxc_coefs<VEC, G>(scale_f, cg, C, ss);
            nxc_coefs<VEC, G>(shift_f, cg, C, hh);
            nxc_load<T, VEC, G>(x, r * C + cg, C - cg, f);
            if (z) {
              nxc_load<T, VEC, G>(z, r * C + cg, C - cg, zf);
            } else {
#pragma unroll
              for (int k = 0; k < G; ++k) zf[k] = A(-0.0);  // r + -0 == r for every r
            }
            A v[G];
#pragma unroll
            for (int k = 0; k < G; ++k) v[k] = (f[k] - mm[k]) * ss[k] + hh[k] + zf[k];
#pragma unroll
            for (int k = 0; k < G; ++k) {
              bool pass;
              f[k] = act_fwd_c<ACT>(v[k], ceiling, pass);
            }
            nxc_store<T, VEC, G>(y, r * C + cg, C - cg, f);
            unsigned bits = 0u;
#pragma unroll
            for (int k = 0; k < G; ++k) {
              bool pass;
              act_fwd_c<ACT>(v[k], ceiling, pass);
              bits |= static_cast<unsigned>(pass & (k < C - cg)) << k;  // branch-free: data-dependent bits
            }
            word |= bits << (cg & 31);
            if (mask && ((cg & 31) == 32 - G || cg + G >= C)) {
              mask[r * W + (cg >> 5)] = word;  // padding bits past C stay 0
              word = 0u;
            }
          }
        }
      });
    });
    return;
  }
  const long long cleft = C - c0;
  const bool cvalid = c0 < C;
  A m[kCPT], sc[kCPT], sh[kCPT];
#pragma unroll
  for (int k = 0; k < kCPT; ++k) {
    const bool in = k < cleft;
    m[k] = in ? mean_f[c0 + k] : A(0);
    sc[k] = in ? scale_f[c0 + k] : A(0);
    sh[k] = in ? shift_f[c0 + k] : A(0);
  }
  const long long R = N * S;
  const long long W = (C + 31) / 32;
  const long long rpc = static_cast<long long>(cy) * RP;
  const ChunkRange cr = chunk_range(R, rpc);
  for (long long ch = cr.begin; ch < cr.end; ++ch) {  // block-uniform
    A f[RP][kCPT];
    bool ok[RP];
#pragma unroll
    for (int j = 0; j < RP; ++j) {
      const long long r = ch * rpc + j * cy + yi;
      ok[j] = cvalid && r < R;
      if (ok[j]) nxc_load<T, VEC>(x, r * C + c0, cleft, f[j]);
    }
    if constexpr (FUSED) {
      A zf[RP][kCPT];
      if (z) {
#pragma unroll
        for (int j = 0; j < RP; ++j) {
          const long long r = ch * rpc + j * cy + yi;
          if (ok[j]) nxc_load<T, VEC>(z, r * C + c0, cleft, zf[j]);
        }
      }
#pragma unroll
      for (int j = 0; j < RP; ++j) {
        const long long r = ch * rpc + j * cy + yi;
        unsigned nib = 0u;
        if (ok[j]) {
#pragma unroll
          for (int k = 0; k < kCPT; ++k) {
            A v = (f[j][k] - m[k]) * sc[k] + sh[k];
            if (z) v += zf[j][k];
            bool pass;
            f[j][k] = act_fwd(v, act, ceiling, pass);
            if (pass && k < cleft) nib |= 1u << k;
          }
          nxc_store<T, VEC>(y, r * C + c0, cleft, f[j]);
        }
        if (mask) nxc_write_bits(mask, r, W, c0, ok[j], nib, cx, xi);
      }
    } else {
#pragma unroll
      for (int j = 0; j < RP; ++j) {
        if (ok[j]) {
          const long long r = ch * rpc + j * cy + yi;
#pragma unroll
          for (int k = 0; k < kCPT; ++k) f[j][k] = (f[j][k] - m[k]) * sc[k] + sh[k];
          nxc_store<T, VEC>(y, r * C + c0, cleft, f[j]);
        }
      }
    }
  }
}

}  // namespace bnk

template <typename T, bool CL, bool FUSED>
__global__ void ACLNN_LAUNCH_BOUNDS(256, FUSED ? 3 : 4) bn_apply(const T* __restrict__ x, const T* __restrict__ z,
                         const bnk::acc_t<T>* __restrict__ mean_f, const bnk::acc_t<T>* __restrict__ scale_f,
                         const bnk::acc_t<T>* __restrict__ shift_f, T* __restrict__ y, unsigned* __restrict__ mask,
                         long long N, long long C, long long S, int act, bnk::acc_t<T> ceiling) {
  using namespace bnk;
  const T* zz = FUSED ? z : nullptr;
  if constexpr (!CL) {
    with_ncx_width<T>(
        S, x, y, zz, nullptr,
        [&](auto vw) {
          ncx_apply_loop<T, decltype(vw)::value, FUSED>(x, zz, mean_f, scale_f, shift_f, y, mask, N, C, S, act,
                                                        ceiling);
        },
        !FUSED);
  } else {
    constexpr unsigned long long A = kCPT * sizeof(T);
    const bool vec = C % kCPT == 0 && aclnn::is_aligned(x, A) && aclnn::is_aligned(y, A) &&
                     (zz == nullptr || aclnn::is_aligned(zz, A));
    if (vec)
      nxc_apply_loop<T, true, FUSED>(x, zz, mean_f, scale_f, shift_f, y, mask, N, C, S, act, ceiling);
    else
      nxc_apply_loop<T, false, FUSED>(x, zz, mean_f, scale_f, shift_f, y, mask, N, C, S, act, ceiling);
  }
}

// (3a) Backward reduce partials: sum(dy'), sum(dy' * (x - mean)), dy' = dy (masked by reserve bits).
namespace bnk {

template <typename T, int VW, bool MASKED>
__device__ __forceinline__ void ncx_bred_loop(const T* __restrict__ dy, const T* __restrict__ x,
                                              const unsigned* __restrict__ mask, long long N, long long C,
                                              long long S, long long c, acc_t<T> m, acc_t<T>& s1,
                                              acc_t<T>& s2) {
  using A = acc_t<T>;
  constexpr int E = kEPT / 2;  // two input streams
  const int tx = blockDim.x, ty = blockDim.y, xi = threadIdx.x;
  const NcxGeom g = ncx_geom(S);
  const long long W = (S + 31) / 32;
  const long long Tc = N * g.segs;
  const long long stride = static_cast<long long>(gridDim.y) * ty;
  long long t = static_cast<long long>(blockIdx.y) * ty + threadIdx.y;
  if (t >= Tc) return;
  TileWalk tile(t, stride, g.segs, 1);
  const int step = tx * E;
  // kLanes interleaved sums per stream, added up once at the end (a sum per step was a horizontal add
  // and a dependency chain through s1/s2 every E elements)
  constexpr int L = kLanes;
  A l1[L], l2[L];
#pragma unroll
  for (int k = 0; k < L; ++k) l1[k] = l2[k] = A(0);
  auto add_step = [&](int so, long long s0, long long off0, const unsigned* mrow, int len, auto full) {
    constexpr bool FULL = decltype(full)::value;
    A d[E], v[E];
    bool ok[E];
    // unmasked full steps: both streams as a sum's lanes (the lanes' order is ours), in the elements'
    // order (bf16's split order measured slower here: see load_vec_f32_split)
    constexpr int SUMS = FULL && !MASKED ? kSumsInOrder : kPlain;
    ncx_load<T, VW, E, FULL, SUMS>(dy, off0 + so, len - so, tx, xi, d, ok);
    ncx_load<T, VW, E, FULL, SUMS>(x, off0 + so, len - so, tx, xi, v, ok);
    if constexpr (MASKED) {
      bool bit[E];
      ncx_read_bits<T, VW, E>(mrow, s0 + so, len - so, tx, xi, bit);
#pragma unroll
      for (int e = 0; e < E; ++e) d[e] = keep_if(d[e], bit[e]);
    }
#pragma unroll
    for (int e = 0; e < E; ++e) {
      l1[e % L] += FULL || ok[e] ? d[e] : A(0);
      l2[e % L] += FULL || ok[e] ? d[e] * (v[e] - m) : A(0);
    }
  };
  for (; t < Tc; t += stride) {
    const long long s0 = tile.seg * g.seglen;
    const int len = static_cast<int>(lmin(g.seglen, S - s0));
    const long long p = tile.plane * C + c;
    const long long off0 = p * S + s0;
    const unsigned* mrow = MASKED ? mask + p * W : nullptr;
    int so = 0;
    for (; so + step <= len; so += step) add_step(so, s0, off0, mrow, len, BoolConst<true>{});
    if (so < len) add_step(so, s0, off0, mrow, len, BoolConst<false>{});
    tile.advance();
  }
  s1 += (l1[0] + l1[1]) + (l1[2] + l1[3]);
  s2 += (l2[0] + l2[1]) + (l2[2] + l2[3]);
}

// One NXC backward-reduce chunk of a thread's 4 channels: per-channel sums of dy' and dy' * (x - m)
// over its RP rows. FULL: every row exists (no select); else rows past the end count 0.
template <typename T, bool VEC, bool MASKED, bool FULL>
__device__ __forceinline__ void nxc_bred_chunk(const T* __restrict__ dy, const T* __restrict__ x,
                                               const unsigned* __restrict__ mask, long long R, long long C,
                                               long long c0, long long r0, int cy, const acc_t<T> (&m)[kCPT],
                                               acc_t<T> (&a)[kCPT], acc_t<T> (&b)[kCPT]) {
  using A = acc_t<T>;
  constexpr int RP = kRPT / 2;  // two input streams
  const long long cleft = C - c0;
  const long long W = (C + 31) / 32;
  A d[RP][kCPT], p[RP][kCPT];
#pragma unroll
  for (int j = 0; j < RP; ++j) {
    const long long r = r0 + j * cy;
    const bool ok = FULL || r < R;
    A v[kCPT];
    if (ok) {
      nxc_load<T, VEC>(dy, r * C + c0, cleft, d[j]);
      nxc_load<T, VEC>(x, r * C + c0, cleft, v);
      if constexpr (MASKED) {
        const unsigned nib = nxc_read_bits(mask, r, W, c0);
#pragma unroll
        for (int k = 0; k < kCPT; ++k) d[j][k] = keep_if(d[j][k], (nib >> k) & 1u);
      }
#pragma unroll
      for (int k = 0; k < kCPT; ++k) p[j][k] = d[j][k] * (v[k] - m[k]);
    } else {
#pragma unroll
      for (int k = 0; k < kCPT; ++k) d[j][k] = p[j][k] = A(0);
    }
  }
  aclnn::row_sums(d, a);
  aclnn::row_sums(p, b);
}

// NXC backward-reduce partials of one thread (lanes = its 4 channels; the full chunks' sums local to
// this loop, the one partial chunk at the end of the rows apart, as in nxc_stats_loop).
template <typename T, bool VEC, bool MASKED>
__device__ __forceinline__ void nxc_bred_loop(const T* __restrict__ dy, const T* __restrict__ x,
                                              const unsigned* __restrict__ mask, long long R, long long C,
                                              long long c0, const acc_t<T> (&m)[kCPT], acc_t<T> (&s1)[kCPT],
                                              acc_t<T> (&s2)[kCPT]) {
  using A = acc_t<T>;
  constexpr int RP = kRPT / 2;  // two input streams
  const int cy = blockDim.y, y = threadIdx.y;
  const long long rpc = static_cast<long long>(cy) * RP;
  const ChunkRange cr = chunk_range(R, rpc);
  A l1[kCPT], l2[kCPT];
#pragma unroll
  for (int k = 0; k < kCPT; ++k) l1[k] = l2[k] = A(0);
  const long long full_end = lmin(cr.end, R / rpc);  // chunks whose every row exists
  long long ch = cr.begin;
  for (; ch < full_end; ++ch) {
    A a[kCPT], b[kCPT];
    nxc_bred_chunk<T, VEC, MASKED, true>(dy, x, mask, R, C, c0, ch * rpc + y, cy, m, a, b);
#pragma unroll
    for (int k = 0; k < kCPT; ++k) {
      l1[k] += a[k];
      l2[k] += b[k];
    }
  }
  A a[kCPT], b[kCPT];
#pragma unroll
  for (int k = 0; k < kCPT; ++k) a[k] = b[k] = A(0);
  if (ch < cr.end) nxc_bred_chunk<T, VEC, MASKED, false>(dy, x, mask, R, C, c0, ch * rpc + y, cy, m, a, b);
  for (int k = 0; k < kCPT; ++k) {  // no pragma: see nxc_stats_loop
    s1[k] += l1[k] + a[k];
    s2[k] += l2[k] + b[k];
  }
}

}  // namespace bnk

template <typename T, bool CL, bool MASKED>
__global__ void ACLNN_LAUNCH_BOUNDS(256, 4) bn_bwd_reduce_partial(const T* __restrict__ dy, const T* __restrict__ x,
                                      const unsigned* __restrict__ mask, const bnk::acc_t<T>* __restrict__ mean_f,
                                      bnk::acc_t<T>* __restrict__ ws, long long N, long long C, long long S) {
  using namespace bnk;
  using A = acc_t<T>;
  const long long splits = gridDim.y, split = blockIdx.y;
  A* ws_a = ws;
  A* ws_b = ws + splits * C;
  if constexpr (!CL) {
    const long long c = blockIdx.x;
    const A m = mean_f[c];
    A s1 = A(0), s2 = A(0);
    with_ncx_width<T>(S, dy, x, nullptr, nullptr, [&](auto vw) {
      ncx_bred_loop<T, decltype(vw)::value, MASKED>(dy, x, mask, N, C, S, c, m, s1, s2);
    });
    block_sum2(s1, s2);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      ws_a[split * C + c] = s1;
      ws_b[split * C + c] = s2;
    }
  } else {
    const long long c0 = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * kCPT;
    A m[kCPT], s1[kCPT], s2[kCPT];
#pragma unroll
    for (int k = 0; k < kCPT; ++k) {
      m[k] = (c0 + k < C) ? mean_f[c0 + k] : A(0);
      s1[k] = A(0);
      s2[k] = A(0);
    }
    if (c0 < C) {
      constexpr unsigned long long A = kCPT * sizeof(T);
      if (C % kCPT == 0 && aclnn::is_aligned(dy, A) && aclnn::is_aligned(x, A))
        nxc_bred_loop<T, true, MASKED>(dy, x, mask, N * S, C, c0, m, s1, s2);
      else
        nxc_bred_loop<T, false, MASKED>(dy, x, mask, N * S, C, c0, m, s1, s2);
    }
    column_sum2(s1, s2);
    if (threadIdx.y == 0) {
#pragma unroll
      for (int k = 0; k < kCPT; ++k) {
        if (c0 + k < C) {
          ws_a[split * C + c0 + k] = s1[k];
          ws_b[split * C + c0 + k] = s2[k];
        }
      }
    }
  }
}

// (3b) Combine backward partials (double, fixed order); outputs and dx coefficients.
template <typename P>
__global__ void bn_bwd_reduce_finalize(const bnk::acc_t<P>* __restrict__ ws, long long splits, long long C,
                                       long long count, const bnk::acc_t<P>* __restrict__ invstd_f,
                                       const bnk::acc_t<P>* __restrict__ w_f, P* __restrict__ sum_dy,
                                       P* __restrict__ sum_dy_xmu, P* __restrict__ grad_weight,
                                       P* __restrict__ grad_bias, bnk::acc_t<P>* __restrict__ a_f,
                                       bnk::acc_t<P>* __restrict__ k_f, bnk::acc_t<P>* __restrict__ g_f) {
  using A = bnk::acc_t<P>;
  // block (G, W): W channels, G lanes each (G = 32, a warp per channel, on a GPU; 1 on the host)
  const int lane = threadIdx.x, G = blockDim.x;
  const long long c = static_cast<long long>(blockIdx.x) * blockDim.y + threadIdx.y;
  if (c >= C) return;  // a channel's lanes leave together (G = 32: a whole warp)
  // lanes at or beyond `splits` hold nothing: those shuffle rounds are skipped (G = 1: none at all)
  const int active = splits < G ? static_cast<int>(splits) : G;
  double a = 0.0, b = 0.0;
  for (long long s = lane; s < splits; s += G) {
    a += static_cast<double>(ws[s * C + c]);
    b += static_cast<double>(ws[(splits + s) * C + c]);
  }
  a = aclnn::warp_sum(a, active);
  b = aclnn::warp_sum(b, active);
  if (lane != 0) return;
  const double invstd = invstd_f ? static_cast<double>(invstd_f[c]) : 1.0;
  const double wv = w_f ? static_cast<double>(w_f[c]) : 1.0;
  if (sum_dy) sum_dy[c] = aclnn::from_f64<P>(a);
  if (sum_dy_xmu) sum_dy_xmu[c] = aclnn::from_f64<P>(b);
  if (grad_weight) grad_weight[c] = aclnn::from_f64<P>(b * invstd);
  if (grad_bias) grad_bias[c] = aclnn::from_f64<P>(a);
  const double inv_n = 1.0 / static_cast<double>(count);
  if (a_f) a_f[c] = static_cast<A>(a * inv_n);
  if (k_f) k_f[c] = static_cast<A>(invstd * invstd * b * inv_n);
  if (g_f) g_f[c] = static_cast<A>(invstd * wv);
}

// (4a) aclnnBatchNormElemtBackward prep: total count = sum(counter) on the device, coefficients.
template <typename P, typename Q>
__global__ void bn_prep_elemt_bwd(const P* __restrict__ mean, const P* __restrict__ invstd,
                                  const P* __restrict__ weight, const P* __restrict__ sum_dy,
                                  const P* __restrict__ sum_dy_xmu, const Q* __restrict__ counter, long long L,
                                  long long C, bnk::acc_t<P>* __restrict__ out_mean, bnk::acc_t<P>* __restrict__ out_a,
                                  bnk::acc_t<P>* __restrict__ out_k, bnk::acc_t<P>* __restrict__ out_g) {
  using A = bnk::acc_t<P>;
  __shared__ double s_cnt[bnk::kMaxThreads / 32];
  double t = 0.0;
  for (long long i = threadIdx.x; i < L; i += blockDim.x) t += aclnn::to_f64(counter[i]);
  t = aclnn::block_sum(t, s_cnt);
  __shared__ double s_total;
  if (threadIdx.x == 0) s_total = t;
  __syncthreads();
  const double total = s_total;
  const double inv_n = 1.0 / total;
  ACLNN_GRID_STRIDE_LOOP(c, C) {
    const double is = aclnn::to_f64(invstd[c]);
    const double wv = weight ? aclnn::to_f64(weight[c]) : 1.0;
    out_mean[c] = static_cast<A>(aclnn::to_f64(mean[c]));
    out_a[c] = static_cast<A>(aclnn::to_f64(sum_dy[c]) * inv_n);
    out_k[c] = static_cast<A>(is * is * aclnn::to_f64(sum_dy_xmu[c]) * inv_n);
    out_g[c] = static_cast<A>(is * wv);
  }
}

// (4b) dx = (dy' - a - (x - mean) * k) * g  (MODE 1, 2) or dx = dy * g (MODE 0); MODE 2: dy' = dy
// masked by the reserve bits (mask may be null: no activation), dz = dy' (dz may be null).
namespace bnk {

// One NCX backward-elementwise step. FULL: every element of the step is in the tile (see ncx_load);
// else the tile's last, partial step, in the lane-consecutive scalar layout (VW = 0), which covers the
// same elements once across the thread row.
template <typename T, int VW, int MODE, bool FULL>
__device__ __forceinline__ void ncx_belem_step(const T* __restrict__ dy, const T* __restrict__ x,
                                               const unsigned* __restrict__ mrow, T* __restrict__ dx,
                                               T* __restrict__ dz, long long at, long long sp, int rem, int tx,
                                               int xi, acc_t<T> m, acc_t<T> a, acc_t<T> k, acc_t<T> gg) {
  using A = acc_t<T>;
  constexpr int E = MODE == 0 ? kEPT : kEPT / 2;  // two input streams in training
  constexpr int LW = FULL ? VW : 0;
  A d[E];
  bool ok[E];
  ncx_load<T, LW, E, FULL>(dy, at, rem, tx, xi, d, ok);
  if constexpr (MODE == 0) {
#pragma unroll
    for (int e = 0; e < E; ++e) d[e] *= gg;
  } else {
    A v[E];
    ncx_load<T, LW, E, FULL>(x, at, rem, tx, xi, v, ok);
    if constexpr (MODE == 2) {
      if (mrow) {
        bool bit[E];
        ncx_read_bits<T, LW, E>(mrow, sp, rem, tx, xi, bit);
#pragma unroll
        for (int e = 0; e < E; ++e) d[e] = keep_if(d[e], bit[e]);
      }
      if (dz) ncx_store<T, LW, E, FULL>(dz, at, rem, tx, xi, d);
    }
#pragma unroll
    for (int e = 0; e < E; ++e) d[e] = (d[e] - a - (v[e] - m) * k) * gg;
  }
  ncx_store<T, LW, E, FULL>(dx, at, rem, tx, xi, d);
}

template <typename T, int VW, int MODE>
__device__ __forceinline__ void ncx_belem_loop(const T* __restrict__ dy, const T* __restrict__ x,
                                               const unsigned* __restrict__ mask,
                                               const acc_t<T>* __restrict__ mean_f, const acc_t<T>* __restrict__ a_f,
                                               const acc_t<T>* __restrict__ k_f, const acc_t<T>* __restrict__ g_f,
                                               T* __restrict__ dx, T* __restrict__ dz, long long N, long long C,
                                               long long S) {
  using A = acc_t<T>;
  constexpr int E = MODE == 0 ? kEPT : kEPT / 2;  // two input streams in training
  const int tx = blockDim.x, xi = threadIdx.x;
  const NcxGeom g = ncx_geom(S);
  const long long W = (S + 31) / 32;
  const long long Tall = N * C * g.segs;
  const TileSpan span = row_tiles(Tall);
  if (span.begin >= span.end) return;  // no collectives in this kernel
  TileWalk tile(span.begin, span.step, g.segs, C);
  const int step = tx * E;
  for (long long t = span.begin; t < span.end; t += span.step) {
    const long long s0 = tile.seg * g.seglen;
    const int len = static_cast<int>(lmin(g.seglen, S - s0));
    const A gg = g_f[tile.c];
    A m = A(0), a = A(0), k = A(0);
    if constexpr (MODE != 0) {
      m = mean_f[tile.c];
      a = a_f[tile.c];
      k = k_f[tile.c];
    }
    const long long off0 = tile.plane * S + s0;
    const unsigned* mrow = (MODE == 2 && mask) ? mask + tile.plane * W : nullptr;
    int so = ncx_head<T, VW>(dy + off0, len);  // 0 unless peeling (no mask: see bn_bwd_elemt)
    if (so > 0) ncx_belem_step<T, VW, MODE, false>(dy, x, mrow, dx, dz, off0, s0, so, tx, xi, m, a, k, gg);
    for (; so + step <= len; so += step)
      ncx_belem_step<T, VW, MODE, true>(dy, x, mrow, dx, dz, off0 + so, s0 + so, len - so, tx, xi, m, a, k, gg);
    if (so < len)
      ncx_belem_step<T, VW, MODE, false>(dy, x, mrow, dx, dz, off0 + so, s0 + so, len - so, tx, xi, m, a, k, gg);
    tile.advance();
  }
}

// The host's whole-rows walk of the backward elementwise kernel (see nxc_rows) in groups of G channels:
// thread t0 of tstep takes the groups t0, t0 + tstep, ... of each of its rows.
template <typename T, bool VEC, int MODE, int G>
__device__ __forceinline__ void nxc_belem_rows(const T* __restrict__ dy, const T* __restrict__ x,
                                               const unsigned* __restrict__ mask,
                                               const acc_t<T>* __restrict__ mean_f, const acc_t<T>* __restrict__ a_f,
                                               const acc_t<T>* __restrict__ k_f, const acc_t<T>* __restrict__ g_f,
                                               T* __restrict__ dx, T* __restrict__ dz, long long C, NxcRows rows,
                                               long long t0, long long tstep) {
  using A = acc_t<T>;
  const long long W = (C + 31) / 32;
  for (long long r = rows.begin; r < rows.end; ++r)
    for (long long cg = t0 * G; cg < C; cg += tstep * G) {
      A d[G], v[G], gq[G];
      nxc_coefs<VEC, G>(g_f, cg, C, gq);
      nxc_load<T, VEC, G>(dy, r * C + cg, C - cg, d);
      if constexpr (MODE == 0) {
#pragma unroll
        for (int q = 0; q < G; ++q) d[q] *= gq[q];
      } else {
        A mq[G], aq[G], kq[G];
        nxc_coefs<VEC, G>(mean_f, cg, C, mq);
        nxc_coefs<VEC, G>(a_f, cg, C, aq);
        nxc_coefs<VEC, G>(k_f, cg, C, kq);
        nxc_load<T, VEC, G>(x, r * C + cg, C - cg, v);
        if constexpr (MODE == 2) {
          if (mask) {
            const unsigned bits = nxc_read_bits<G>(mask, r, W, cg);
#pragma unroll
            for (int q = 0; q < G; ++q) d[q] = keep_if(d[q], (bits >> q) & 1u);
          }
          if (dz) nxc_store<T, VEC, G>(dz, r * C + cg, C - cg, d);
        }
#pragma unroll
        for (int q = 0; q < G; ++q) d[q] = (d[q] - aq[q] - (v[q] - mq[q]) * kq[q]) * gq[q];
      }
      nxc_store<T, VEC, G>(dx, r * C + cg, C - cg, d);
    }
}

template <typename T, bool VEC, int MODE>
__device__ __forceinline__ void nxc_belem_loop(const T* __restrict__ dy, const T* __restrict__ x,
                                               const unsigned* __restrict__ mask,
                                               const acc_t<T>* __restrict__ mean_f, const acc_t<T>* __restrict__ a_f,
                                               const acc_t<T>* __restrict__ k_f, const acc_t<T>* __restrict__ g_f,
                                               T* __restrict__ dx, T* __restrict__ dz, long long N, long long C,
                                               long long S) {
  using A = acc_t<T>;
  constexpr int RP = MODE == 0 ? kRPT : kRPT / 2;  // two input streams in training
  const int cx = blockDim.x, cy = blockDim.y, xi = threadIdx.x, yi = threadIdx.y;
  const long long c0 = (static_cast<long long>(blockIdx.x) * cx + xi) * kCPT;
  const long long cstep = static_cast<long long>(kCPT) * cx * gridDim.x;
  if (cstep < C) {  // several channel groups per thread (the host's plan): whole rows, see nxc_rows
    // (a function per group width, not with_row_group's lambda: through the lambda's captures the
    // __half path, whose width stays 4, ran 5 % slower)
    const NxcRows rows = nxc_rows(N * S, cy, yi);
    const long long t0 = c0 / kCPT, tstep = static_cast<long long>(cx) * gridDim.x;
    if constexpr (VEC && kRowCPT<T> != kCPT) {
      if (row_group_fits<T, VEC>(C, dy, MODE == 0 ? nullptr : x, dx, dz)) {
        nxc_belem_rows<T, VEC, MODE, kRowCPT<T>>(dy, x, mask, mean_f, a_f, k_f, g_f, dx, dz, C, rows, t0, tstep);
        return;
      }
    }
    nxc_belem_rows<T, VEC, MODE, kCPT>(dy, x, mask, mean_f, a_f, k_f, g_f, dx, dz, C, rows, t0, tstep);
    return;
  }
  if (c0 >= C) return;  // no collectives in this kernel
  const long long cleft = C - c0;
  A m[kCPT], a[kCPT], k[kCPT], gg[kCPT];
#pragma unroll
  for (int q = 0; q < kCPT; ++q) {
    const bool in = q < cleft;
    gg[q] = in ? g_f[c0 + q] : A(0);
    m[q] = (MODE != 0 && in) ? mean_f[c0 + q] : A(0);
    a[q] = (MODE != 0 && in) ? a_f[c0 + q] : A(0);
    k[q] = (MODE != 0 && in) ? k_f[c0 + q] : A(0);
  }
  const long long R = N * S;
  const long long W = (C + 31) / 32;
  const long long rpc = static_cast<long long>(cy) * RP;
  const ChunkRange cr = chunk_range(R, rpc);
  for (long long ch = cr.begin; ch < cr.end; ++ch) {
    A d[RP][kCPT], v[RP][kCPT];
    bool ok[RP];
#pragma unroll
    for (int j = 0; j < RP; ++j) {
      const long long r = ch * rpc + j * cy + yi;
      ok[j] = r < R;
      if (ok[j]) {
        nxc_load<T, VEC>(dy, r * C + c0, cleft, d[j]);
        if constexpr (MODE != 0) nxc_load<T, VEC>(x, r * C + c0, cleft, v[j]);
      }
    }
#pragma unroll
    for (int j = 0; j < RP; ++j) {
      if (!ok[j]) continue;
      const long long r = ch * rpc + j * cy + yi;
      if constexpr (MODE == 0) {
#pragma unroll
        for (int q = 0; q < kCPT; ++q) d[j][q] *= gg[q];
      } else {
        if constexpr (MODE == 2) {
          if (mask) {
            const unsigned nib = nxc_read_bits(mask, r, W, c0);
#pragma unroll
            for (int q = 0; q < kCPT; ++q) d[j][q] = keep_if(d[j][q], (nib >> q) & 1u);
          }
          if (dz) nxc_store<T, VEC>(dz, r * C + c0, cleft, d[j]);
        }
#pragma unroll
        for (int q = 0; q < kCPT; ++q) d[j][q] = (d[j][q] - a[q] - (v[j][q] - m[q]) * k[q]) * gg[q];
      }
      nxc_store<T, VEC>(dx, r * C + c0, cleft, d[j]);
    }
  }
}

}  // namespace bnk

template <typename T, bool CL, int MODE>
__global__ void ACLNN_LAUNCH_BOUNDS(256, MODE == 2 ? 3 : 4) bn_bwd_elemt(const T* __restrict__ dy, const T* __restrict__ x, const unsigned* __restrict__ mask,
                             const bnk::acc_t<T>* __restrict__ mean_f, const bnk::acc_t<T>* __restrict__ a_f,
                             const bnk::acc_t<T>* __restrict__ k_f, const bnk::acc_t<T>* __restrict__ g_f,
                             T* __restrict__ dx, T* __restrict__ dz, long long N, long long C, long long S) {
  using namespace bnk;
  static_assert(MODE >= 0 && MODE <= 2, "MODE: 0 inference, 1 training, 2 training fused");
  T* dzz = MODE == 2 ? dz : nullptr;
  if constexpr (!CL) {
    with_ncx_width<T>(
        S, dy, dx, MODE == 0 ? nullptr : x, dzz,
        [&](auto vw) {
          ncx_belem_loop<T, decltype(vw)::value, MODE>(dy, x, mask, mean_f, a_f, k_f, g_f, dx, dzz, N, C, S);
        },
        MODE != 2 || mask == nullptr);  // (mask bits are read per word-aligned step)
  } else {
    constexpr unsigned long long A = kCPT * sizeof(T);
    const bool vec = C % kCPT == 0 && aclnn::is_aligned(dy, A) && aclnn::is_aligned(dx, A) &&
                     (MODE == 0 || aclnn::is_aligned(x, A)) && (dzz == nullptr || aclnn::is_aligned(dzz, A));
    if (vec)
      nxc_belem_loop<T, true, MODE>(dy, x, mask, mean_f, a_f, k_f, g_f, dx, dzz, N, C, S);
    else
      nxc_belem_loop<T, false, MODE>(dy, x, mask, mean_f, a_f, k_f, g_f, dx, dzz, N, C, S);
  }
}

// (5) Gather per-rank statistics (SyncBN): ranks with count <= 0 are skipped.
template <typename P, typename Q>
__global__ void bn_gather_stats(const P* __restrict__ mean, const P* __restrict__ invstd, const Q* __restrict__ counts,
                                long long world, long long C, bnk::acc_t<P> eps, bnk::acc_t<P> momentum,
                                P* running_mean,
                                P* running_var, P* __restrict__ mean_all, P* __restrict__ invstd_all) {
  const double e = static_cast<double>(eps);
  ACLNN_GRID_STRIDE_LOOP(c, C) {
    double avg = 0.0, m2 = 0.0, n = 0.0;
    for (long long r = 0; r < world; ++r) {
      const double cnt = aclnn::to_f64(counts[r]);
      if (!(cnt > 0.0)) continue;
      const double mr = aclnn::to_f64(mean[r * C + c]);
      const double is = aclnn::to_f64(invstd[r * C + c]);
      const double var_r = 1.0 / (is * is) - e;
      const double nn = n + cnt;
      const double delta = mr - avg;
      avg += delta * (cnt / nn);
      m2 += var_r * cnt + delta * delta * n * cnt / nn;
      n = nn;
    }
    const double var = m2 / n;
    const double inv = (var == 0.0 && e == 0.0) ? 0.0 : 1.0 / sqrt(var + e);
    mean_all[c] = aclnn::from_f64<P>(avg);
    invstd_all[c] = aclnn::from_f64<P>(inv);
    if (n > 0.0) {
      const double mo = static_cast<double>(momentum);
      if (running_mean) running_mean[c] = aclnn::from_f64<P>((1.0 - mo) * aclnn::to_f64(running_mean[c]) + mo * avg);
      if (running_var)
        running_var[c] = aclnn::from_f64<P>((1.0 - mo) * aclnn::to_f64(running_var[c]) + mo * (m2 / (n - 1.0)));
    }
  }
}
