// Kernels with bugs a GPU would hang on or silently get wrong; the emulator must report each
// one as a KernelError naming the kernel and the block (tests/test_emulator.py). They are valid
// CUDA source (tests/test_nvrtc.py compiles them) -- the errors are at run time.

// threads of one block reach __syncthreads at different call sites
extern "C" __global__ void bad_barrier(float* x) {
    if (threadIdx.x < 16) {
        x[threadIdx.x] = 1.0f;
        __syncthreads();
    } else {
        x[threadIdx.x] = 2.0f;
        __syncthreads();
    }
}

// a shuffle whose mask names lanes that have already exited
extern "C" __global__ void bad_shuffle(const float* x, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if ((threadIdx.x & 31) >= 8) return;
    out[i] = __shfl_down_sync(0xffffffffu, x[i], 1);
}

// the caller is not in its own mask
extern "C" __global__ void not_in_mask(int* out) {
    out[threadIdx.x] = __shfl_sync(0x0000ffffu, static_cast<int>(threadIdx.x), 0);
}

// lanes named in one mask reach different collectives
extern "C" __global__ void mixed_collectives(int* out) {
    if (threadIdx.x & 1) out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
    else out[threadIdx.x] = __ballot_sync(0xffffffffu, 1);
}

// deadlock: half a warp waits at the barrier, the other half in __syncwarp for them
extern "C" __global__ void deadlock(float* x) {
    if ((threadIdx.x & 31) < 16) {
        __syncthreads();
    }
    __syncwarp();
    x[threadIdx.x] = 1.0f;
}

// a barrier in a loop that only the first warp keeps reaching, while thread 32 spin-waits for a
// flag that the first warp sets only after that barrier (a hang on a GPU)
extern "C" __global__ void loop_barrier_spin(volatile int* flag, int n) {
    if (threadIdx.x > 32) return;
    for (int k = 0; k < n; ++k) {
        if (threadIdx.x < 32) {
            __syncthreads();
            if (threadIdx.x == 0) flag[0] = k + 1;
        } else {
            while (flag[0] <= k) __nanosleep(100);
        }
    }
}

// livelock: one thread spins on a warp collective forever while the others wait at a barrier
extern "C" __global__ void spin_forever(volatile int* flag) {
    if (threadIdx.x == 0) {
        while (*flag == 0) __syncwarp(1u);
    }
    __syncthreads();
}

// an assert that fails in one block
extern "C" __global__ void failing_assert(const int* x) {
    assert(x[blockIdx.x * blockDim.x + threadIdx.x] != 7);
}

// a barrier reached through a function pointer: the loader's static scan cannot see it, so the
// kernel runs as a plain loop and the emulator must report the barrier instead of running it wrong
__device__ void sync_through_pointer(float* s) {
    s[threadIdx.x] = static_cast<float>(threadIdx.x);
    __syncthreads();
}
typedef void (*sync_fn_t)(float*);
__device__ sync_fn_t g_sync_fn = sync_through_pointer;
extern "C" __global__ void hidden_barrier(float* out) {
    __shared__ float s[64];
    g_sync_fn(s);
    out[threadIdx.x] = s[63 - threadIdx.x];
}
