#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// thrust's namespace macros, and nothing else of thrust (which the emulator does not provide).
// CuPy's <cupy/complex.cuh> (a port of thrust::complex shipped with CuPy, on the include path when
// CuPy is installed) takes THRUST_NAMESPACE_BEGIN/END from CCCL's <thrust/detail/config/namespace.h>,
// whose configuration headers do not build under g++; this file stands in for it.
#pragma once
#ifndef THRUST_NAMESPACE_BEGIN
#define THRUST_NAMESPACE_BEGIN namespace thrust {
#define THRUST_NAMESPACE_END }
#define THRUST_NS_QUALIFIER ::thrust
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
