// ViewCopy and fill for views of any rank (<= 8) and strides: the framework's way to make a
// non-contiguous input dense in the workspace, to write a result computed in the workspace back
// into a strided output, and to fill outputs of empty inputs. Bit copies: U is an unsigned type
// of the element's size, so one instantiation serves every dtype of that size.
// The index unravel divides by runtime sizes; this is the general (slow) path, taken only for views
// that are not dense in the layout the kernels want.

struct ViewParams {
    int rank;
    long long numel;
    long long sizes[8];
    long long src_strides[8];   // elements; unused by strided_fill
    long long dst_strides[8];
};

template <typename U>
__global__ void strided_copy(const U* __restrict__ src, U* __restrict__ dst, ViewParams p)
{
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += step) {
        long long r = i, s = 0, d = 0;
        for (int k = p.rank - 1; k >= 0; --k) {
            const long long idx = r % p.sizes[k];
            r /= p.sizes[k];
            s += idx * p.src_strides[k];
            d += idx * p.dst_strides[k];
        }
        dst[d] = src[s];
    }
}

template <typename U>
__global__ void strided_fill(U* __restrict__ dst, U value, ViewParams p)
{
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += step) {
        long long r = i, d = 0;
        for (int k = p.rank - 1; k >= 0; --k) {
            d += (r % p.sizes[k]) * p.dst_strides[k];
            r /= p.sizes[k];
        }
        dst[d] = value;
    }
}
