// Kernels that fault on purpose (tests/test_emulator_faults.py). Each must be reported as a kernel
// error at the next synchronize, and the process must stay usable.
extern "C" __global__ void null_write(int* p, int v) {
    int* q = nullptr;
    if (threadIdx.x == 3 && blockIdx.x == 1) q[v] = 42;   // v is 0 at run time
    p[threadIdx.x] = v;
}

extern "C" __global__ void int_div_zero(const int* a, int* out, int d) {
    out[threadIdx.x] = a[threadIdx.x] / (d - static_cast<int>(threadIdx.x == 5));   // d == 1: thread 5 divides by 0
}

__device__ int depth(int n, volatile int* sink) {
    volatile int pad[64];
    pad[n & 63] = n;
    sink[0] = pad[n & 63];
    if (sink[1] == 123456789) return 0;             // never true: the recursion never ends
    return depth(n + 1, sink) + depth(n + 2, sink);   // not a tail call: a real stack frame each
}
extern "C" __global__ void deep_recursion(int* out) {
    out[threadIdx.x] = depth(0, out);
}
// the same in a kernel that uses barriers (threads run as fibers on their own small stacks)
extern "C" __global__ void deep_recursion_fibers(int* out) {
    __syncthreads();
    out[threadIdx.x] = depth(0, out);
}

extern "C" __global__ void forever(volatile int* flag, int* out) {
    while (flag[0] == 0) { }   // nobody ever sets it
    out[0] = 1;
}
extern "C" __global__ void forever_fibers(volatile int* flag, int* out) {
    __syncthreads();
    while (flag[0] == 0) { }
    out[threadIdx.x] = 1;
}

// writes one element past the end when n is the buffer's length
extern "C" __global__ void store_past_end(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) x[i] = 1.0f;
}
// reads far past the end
extern "C" __global__ void load_past_end(const float* x, float* y, int n, int off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i + off];
}
extern "C" __global__ void store_before_start(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i - 1] = 2.0f;
}
extern "C" __global__ void in_bounds(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

// Vectorisable across CUDA threads (the emulator's plain loop), with one thread reading far out of
// bounds: the report must still name that thread.
extern "C" __global__ void axpy_one_bad(float a, const float* x, float* y, int n, int bad) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long j = i == bad ? (1ll << 40) : i;
    if (i < n) y[i] = a * x[j] + y[i];
}

// Traps only on its first run (a device counter): a re-run cannot name the thread.
__device__ int trap_once_count;
extern "C" __global__ void trap_once(int* p) {
    if (threadIdx.x == 5 && atomicAdd(&trap_once_count, 1) == 0) p = nullptr;
    p[threadIdx.x] = 1;
}

// The re-run that names the trapping thread meets an assert the first run did not (the flags are
// set now): the real fault must still be the report.
extern "C" __global__ void assert_then_fault(int* flag, float* out, float** bad) {
    int i = threadIdx.x;
    assert(flag[i] == 0);
    flag[i] = 1;
    if (i == 37) out[i] = *bad[0]; else out[i] = 1.f;
}
