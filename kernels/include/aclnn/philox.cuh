// aclnn/philox.cuh — Philox4x32-10, the counter-based random number generator of every random op
//
// Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11); Random123's
// philox4x32_R(10, ctr, key): ten rounds, the key bumped by the Weyl constants between rounds. A
// pure function of (counter, key), so the numbers depend only on the element's index, the seed and
// the offset, never on the grid or the device: a mask is identical on a GPU and on the emulator.
// Verified against Random123's known-answer vectors (tests/test_dropout_mask.py).
//
// Part of the shared device code of kernels/ (see aclnn_common.cuh, which includes every part).
#pragma once

#include "base.cuh"

namespace aclnn {

constexpr unsigned kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr unsigned kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

// 4 random 32-bit words for counter c (128 bits) and key k (64 bits).
__device__ __forceinline__ uint4 philox4x32_10(uint4 c, uint2 k) {
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k.x += kPhiloxW0;
      k.y += kPhiloxW1;
    }
    const unsigned long long p0 = static_cast<unsigned long long>(kPhiloxM0) * c.x;
    const unsigned long long p1 = static_cast<unsigned long long>(kPhiloxM1) * c.z;
    c = make_uint4(static_cast<unsigned>(p1 >> 32) ^ c.y ^ k.x, static_cast<unsigned>(p1),
                   static_cast<unsigned>(p0 >> 32) ^ c.w ^ k.y, static_cast<unsigned>(p0));
  }
  return c;
}

}  // namespace aclnn
