// blend.cu — cuDNN's blending, run by the shared elementwise kernels of aclnn/elementwise.cuh:
//   Scale:  y = alpha·x                 (ew_unary; beta == 0, so the destination is never read)
//   Axpby:  y = alpha·a + beta·b        (ew_binary / ew_binary_bcast; b is the destination itself)
// alpha and beta arrive as double in OpParams {a, b} and are rounded once to the compute type C
// (float for FLOAT/FLOAT16/BF16 storage, double for DOUBLE), as cuDNN takes float scaling factors
// for float-like tensors and double ones for double tensors.
#include "aclnn/elementwise.cuh"

using aclnn::OpParams;

struct Scale {
  double alpha;
  __device__ explicit Scale(const OpParams& p) : alpha(p.a) {}
  template <typename C> __device__ C operator()(C x) const { return C(alpha) * x; }
};

struct Axpby {
  double alpha, beta;
  __device__ explicit Axpby(const OpParams& p) : alpha(p.a), beta(p.b) {}
  template <typename C> __device__ C operator()(C a, C b) const { return C(alpha) * a + C(beta) * b; }
};

// beta == 0 with a broadcast self: the destination's element is loaded by the shared binary kernel
// but never used (0·NaN would be NaN): y = alpha·a.
struct ScaleFirst {
  double alpha;
  __device__ explicit ScaleFirst(const OpParams& p) : alpha(p.a) {}
  template <typename C> __device__ C operator()(C a, C) const { return C(alpha) * a; }
};
