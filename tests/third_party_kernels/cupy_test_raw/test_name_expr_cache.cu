
namespace mylib { enum class Tag { A, B }; }

template<typename Tv, typename Tp>
__global__ void multi_param() { }

template<typename T>
__global__ void ptr_param(T* p) { }

template<typename T, int N>
__global__ void non_type_param() { }

template<mylib::Tag t>
__global__ void enum_param() { }
