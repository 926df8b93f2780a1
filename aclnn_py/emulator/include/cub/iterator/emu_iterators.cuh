#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// aclnn_py emulator: the simple input iterators kernels pass to BlockLoad / LoadDirect*:
// CacheModifiedInputIterator (a plain pointer here), CountingInputIterator, ConstantInputIterator,
// TransformInputIterator. Random access only through operator[] / + / * (what the block loads use).
#ifndef ACLNN_EMU_CUB_ITERATORS_CUH
#define ACLNN_EMU_CUB_ITERATORS_CUH
#include "../thread/thread_load.cuh"
#include <iterator>

CUB_NAMESPACE_BEGIN
namespace detail {
template <typename Derived, typename ValueT, typename OffsetT>
struct emu_iterator_base {
    using iterator_category = std::random_access_iterator_tag;
    using value_type = ValueT;
    using difference_type = OffsetT;
    using pointer = ValueT*;
    using reference = ValueT;
    __host__ __device__ __forceinline__ Derived& self() { return static_cast<Derived&>(*this); }
    __host__ __device__ __forceinline__ const Derived& self() const { return static_cast<const Derived&>(*this); }
    template <typename D> __host__ __device__ __forceinline__ ValueT operator[](D n) const { return *(self() + n); }
    __host__ __device__ __forceinline__ Derived operator++(int) { Derived r = self(); self() += 1; return r; }
    __host__ __device__ __forceinline__ Derived& operator++() { self() += 1; return self(); }
    template <typename D> __host__ __device__ __forceinline__ Derived operator-(D n) const { return self() + (-static_cast<difference_type>(n)); }
    template <typename D> __host__ __device__ __forceinline__ Derived& operator-=(D n) { return self() += -static_cast<difference_type>(n); }
};
}  // namespace detail

template <CacheLoadModifier MODIFIER, typename ValueType, typename OffsetT = ptrdiff_t>
class CacheModifiedInputIterator
    : public detail::emu_iterator_base<CacheModifiedInputIterator<MODIFIER, ValueType, OffsetT>, ValueType, OffsetT> {
public:
    ValueType* ptr;
    template <typename QualifiedValueType>
    __host__ __device__ __forceinline__ CacheModifiedInputIterator(QualifiedValueType* ptr)
        : ptr(const_cast<std::remove_cv_t<QualifiedValueType>*>(ptr)) {}
    __host__ __device__ __forceinline__ ValueType operator*() const { return ThreadLoad<MODIFIER>(ptr); }
    template <typename D> __host__ __device__ __forceinline__ CacheModifiedInputIterator operator+(D n) const { return CacheModifiedInputIterator(ptr + n); }
    template <typename D> __host__ __device__ __forceinline__ CacheModifiedInputIterator& operator+=(D n) { ptr += n; return *this; }
    __host__ __device__ __forceinline__ OffsetT operator-(CacheModifiedInputIterator other) const { return ptr - other.ptr; }
    using detail::emu_iterator_base<CacheModifiedInputIterator, ValueType, OffsetT>::operator-;
    __host__ __device__ __forceinline__ bool operator==(const CacheModifiedInputIterator& o) const { return ptr == o.ptr; }
    __host__ __device__ __forceinline__ bool operator!=(const CacheModifiedInputIterator& o) const { return ptr != o.ptr; }
};

template <typename ValueType, typename OffsetT = ptrdiff_t>
class CountingInputIterator : public detail::emu_iterator_base<CountingInputIterator<ValueType, OffsetT>, ValueType, OffsetT> {
public:
    ValueType val;
    __host__ __device__ __forceinline__ CountingInputIterator(const ValueType& val) : val(val) {}
    __host__ __device__ __forceinline__ ValueType operator*() const { return val; }
    template <typename D> __host__ __device__ __forceinline__ CountingInputIterator operator+(D n) const { return CountingInputIterator(val + (ValueType)n); }
    template <typename D> __host__ __device__ __forceinline__ CountingInputIterator& operator+=(D n) { val += (ValueType)n; return *this; }
    __host__ __device__ __forceinline__ OffsetT operator-(CountingInputIterator other) const { return (OffsetT)(val - other.val); }
    using detail::emu_iterator_base<CountingInputIterator, ValueType, OffsetT>::operator-;
    __host__ __device__ __forceinline__ bool operator==(const CountingInputIterator& o) const { return val == o.val; }
    __host__ __device__ __forceinline__ bool operator!=(const CountingInputIterator& o) const { return val != o.val; }
};

template <typename ValueType, typename OffsetT = ptrdiff_t>
class ConstantInputIterator : public detail::emu_iterator_base<ConstantInputIterator<ValueType, OffsetT>, ValueType, OffsetT> {
public:
    ValueType val;
    OffsetT offset;
    __host__ __device__ __forceinline__ ConstantInputIterator(ValueType val, OffsetT offset = 0) : val(val), offset(offset) {}
    __host__ __device__ __forceinline__ ValueType operator*() const { return val; }
    template <typename D> __host__ __device__ __forceinline__ ConstantInputIterator operator+(D n) const { return ConstantInputIterator(val, offset + n); }
    template <typename D> __host__ __device__ __forceinline__ ConstantInputIterator& operator+=(D n) { offset += n; return *this; }
    __host__ __device__ __forceinline__ OffsetT operator-(ConstantInputIterator other) const { return offset - other.offset; }
    using detail::emu_iterator_base<ConstantInputIterator, ValueType, OffsetT>::operator-;
    __host__ __device__ __forceinline__ bool operator==(const ConstantInputIterator& o) const { return offset == o.offset && val == o.val; }
    __host__ __device__ __forceinline__ bool operator!=(const ConstantInputIterator& o) const { return !(*this == o); }
};

template <typename ValueType, typename ConversionOp, typename InputIteratorT, typename OffsetT = ptrdiff_t>
class TransformInputIterator
    : public detail::emu_iterator_base<TransformInputIterator<ValueType, ConversionOp, InputIteratorT, OffsetT>, ValueType, OffsetT> {
public:
    ConversionOp conversion_op;
    InputIteratorT input_itr;
    __host__ __device__ __forceinline__ TransformInputIterator(InputIteratorT input_itr, ConversionOp conversion_op)
        : conversion_op(conversion_op), input_itr(input_itr) {}
    __host__ __device__ __forceinline__ ValueType operator*() const { return conversion_op(*input_itr); }
    template <typename D> __host__ __device__ __forceinline__ TransformInputIterator operator+(D n) const { return TransformInputIterator(input_itr + n, conversion_op); }
    template <typename D> __host__ __device__ __forceinline__ TransformInputIterator& operator+=(D n) { input_itr += n; return *this; }
    __host__ __device__ __forceinline__ OffsetT operator-(TransformInputIterator other) const { return input_itr - other.input_itr; }
    using detail::emu_iterator_base<TransformInputIterator, ValueType, OffsetT>::operator-;
    __host__ __device__ __forceinline__ bool operator==(const TransformInputIterator& o) const { return input_itr == o.input_itr; }
    __host__ __device__ __forceinline__ bool operator!=(const TransformInputIterator& o) const { return input_itr != o.input_itr; }
};
CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
