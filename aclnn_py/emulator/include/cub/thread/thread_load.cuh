#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/thread/thread_load.cuh + thread_store.cuh for the aclnn_py CPU emulator: cache-modified loads
// and stores (ThreadLoad<LOAD_LDG>(ptr), ThreadStore<STORE_CG>(ptr, v)). On the CPU every modifier is
// a plain access (the same values; LOAD_VOLATILE / STORE_VOLATILE through a volatile pointer).
#ifndef ACLNN_EMU_CUB_THREAD_LOAD_STORE_CUH
#define ACLNN_EMU_CUB_THREAD_LOAD_STORE_CUH
#include "../util_type.cuh"
#include <iterator>

CUB_NAMESPACE_BEGIN
enum CacheLoadModifier { LOAD_DEFAULT, LOAD_CA, LOAD_CG, LOAD_CS, LOAD_CV, LOAD_LDG, LOAD_VOLATILE };
enum CacheStoreModifier { STORE_DEFAULT, STORE_WB, STORE_CG, STORE_CS, STORE_WT, STORE_VOLATILE };

template <CacheLoadModifier MODIFIER = LOAD_DEFAULT, typename InputIteratorT>
__device__ __forceinline__ typename std::iterator_traits<InputIteratorT>::value_type ThreadLoad(InputIteratorT itr) {
    if constexpr (MODIFIER == LOAD_VOLATILE && std::is_pointer<InputIteratorT>::value) {
        using T = std::remove_cv_t<std::remove_pointer_t<InputIteratorT>>;
        if constexpr (std::is_arithmetic<T>::value) return *const_cast<volatile T*>(itr);
        else return *itr;
    } else {
        return *itr;
    }
}
template <CacheStoreModifier MODIFIER = STORE_DEFAULT, typename OutputIteratorT, typename T>
__device__ __forceinline__ void ThreadStore(OutputIteratorT itr, T val) {
    if constexpr (MODIFIER == STORE_VOLATILE && std::is_pointer<OutputIteratorT>::value &&
                  std::is_arithmetic<std::remove_pointer_t<OutputIteratorT>>::value)
        *const_cast<volatile std::remove_pointer_t<OutputIteratorT>*>(itr) = val;
    else
        *itr = val;
}
CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
