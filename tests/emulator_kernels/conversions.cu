// Bit-exactness of the emulator's __half / __nv_bfloat16 conversions and arithmetic
// (tests/test_emulator.py compares them with NumPy float16 and ml_dtypes.bfloat16).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void half_bits_to_float(const unsigned short* bits, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = __half2float(__ushort_as_half(bits[i]));
}

extern "C" __global__ void bf16_bits_to_float(const unsigned short* bits, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = __bfloat162float(__ushort_as_bfloat16(bits[i]));
}

extern "C" __global__ void float_to_half_bits(const float* x, unsigned short* h, unsigned short* h_ctor, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        h[i] = __half_as_ushort(__float2half_rn(x[i]));
        const __half c = x[i];  // implicit constructor
        h_ctor[i] = __half_as_ushort(c);
    }
}

extern "C" __global__ void float_to_bf16_bits(const float* x, unsigned short* b, unsigned short* b_ctor, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        b[i] = __bfloat16_as_ushort(__float2bfloat16_rn(x[i]));
        const __nv_bfloat16 c = x[i];
        b_ctor[i] = __bfloat16_as_ushort(c);
    }
}

// __floats2bfloat162_rn: lane x = x[i], lane y = x[n-1-i], as one 32-bit word (low half = lane x).
extern "C" __global__ void float_to_bf162_bits(const float* x, unsigned* w, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const __nv_bfloat162 p = __floats2bfloat162_rn(x[i], x[n - 1 - i]);
        w[i] = static_cast<unsigned>(__bfloat16_as_ushort(p.x)) | (static_cast<unsigned>(__bfloat16_as_ushort(p.y)) << 16);
    }
}

extern "C" __global__ void double_to_lowp_bits(const double* x, unsigned short* h, unsigned short* b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        h[i] = __half_as_ushort(__double2half(x[i]));
        b[i] = __bfloat16_as_ushort(__double2bfloat16(x[i]));
    }
}

// half/bf16 arithmetic: a+b, a*b, a/b, fma(a,b,c), sqrt(a), and the two-lane forms
extern "C" __global__ void half_arith(const unsigned short* a, const unsigned short* b, const unsigned short* c,
                                      unsigned short* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const __half x = __ushort_as_half(a[i]), y = __ushort_as_half(b[i]), z = __ushort_as_half(c[i]);
        unsigned short* o = out + 8 * i;
        o[0] = __half_as_ushort(x + y);
        o[1] = __half_as_ushort(x * y);
        o[2] = __half_as_ushort(__hdiv(x, y));
        o[3] = __half_as_ushort(__hfma(x, y, z));
        o[4] = __half_as_ushort(hsqrt(__habs(x)));
        const __half2 p = __halves2half2(x, y), q = __halves2half2(y, z);
        const __half2 r = __hadd2(p, q);
        o[5] = __half_as_ushort(__low2half(r));
        o[6] = __half_as_ushort(__high2half(__hmul2(p, q)));
        o[7] = __half_as_ushort(__hmax(x, y));
    }
}

extern "C" __global__ void bf16_arith(const unsigned short* a, const unsigned short* b, const unsigned short* c,
                                      unsigned short* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const __nv_bfloat16 x = __ushort_as_bfloat16(a[i]), y = __ushort_as_bfloat16(b[i]), z = __ushort_as_bfloat16(c[i]);
        unsigned short* o = out + 8 * i;
        o[0] = __bfloat16_as_ushort(x + y);
        o[1] = __bfloat16_as_ushort(x * y);
        o[2] = __bfloat16_as_ushort(__hdiv(x, y));
        o[3] = __bfloat16_as_ushort(__hfma(x, y, z));
        o[4] = __bfloat16_as_ushort(hsqrt(__habs(x)));
        const __nv_bfloat162 p = __halves2bfloat162(x, y), q = __halves2bfloat162(y, z);
        const __nv_bfloat162 r = __hadd2(p, q);
        o[5] = __bfloat16_as_ushort(__low2bfloat16(r));
        o[6] = __bfloat16_as_ushort(__high2bfloat16(__hmul2(p, q)));
        o[7] = __bfloat16_as_ushort(__hmax(x, y));
    }
}

// integer <-> half conversions
extern "C" __global__ void half_int_conv(const int* v, const unsigned short* h, unsigned short* to_half, int* to_int,
                                         int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        to_half[i] = __half_as_ushort(__int2half_rn(v[i]));
        const __half x = __ushort_as_half(h[i]);
        to_int[4 * i + 0] = __half2int_rn(x);
        to_int[4 * i + 1] = __half2int_rz(x);
        to_int[4 * i + 2] = __half2int_rd(x);
        to_int[4 * i + 3] = __half2int_ru(x);
    }
}

// The two-lane conversions (the emulator converts both lanes in one F16C instruction, with the
// scalar path for a NaN on either side): element i is paired with element n-1-i, so every value
// meets many partners, NaNs included, in both lanes.
extern "C" __global__ void half2_pairs(const unsigned short* bits, const float* x, float* f_out,
                                       unsigned short* h_out, unsigned short* h_out2, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int j = n - 1 - i;
        const float2 p = __half22float2(__halves2half2(__ushort_as_half(bits[i]), __ushort_as_half(bits[j])));
        f_out[2 * i] = p.x;
        f_out[2 * i + 1] = p.y;
        const __half2 h = __floats2half2_rn(x[i], x[j]);
        h_out[2 * i] = __half_as_ushort(__low2half(h));
        h_out[2 * i + 1] = __half_as_ushort(__high2half(h));
        const __half2 g = __float22half2_rn(make_float2(x[j], x[i]));
        h_out2[2 * i] = __half_as_ushort(__low2half(g));
        h_out2[2 * i + 1] = __half_as_ushort(__high2half(g));
    }
}
