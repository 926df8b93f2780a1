
template<typename Tv, typename Tp>
__global__ void bare_cubin_probe() { }
