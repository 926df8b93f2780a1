#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// Emulator shim for <cufft.h> (aclnn_py host CUDA emulator): the cuFFT types and constants that device code
// names (cufftComplex is cuComplex, i.e. float2; cufftReal float ...). Kernels written next to cuFFT calls
// (cuda-samples' oceanFFT, fluidsGL) include it for these types. The host API (cufftPlan*, cufftExec*, ...) is
// not provided: it runs on the host with the cuFFT library, not in kernel code.
#ifndef ACLNN_EMU_CUFFT_H
#define ACLNN_EMU_CUFFT_H

#include "cuComplex.h"

#define CUFFT_VER_MAJOR 11
#define CUFFT_VER_MINOR 2
#define CUFFT_VER_PATCH 1
#define CUFFT_VERSION (CUFFT_VER_MAJOR * 1000 + CUFFT_VER_MINOR * 100 + CUFFT_VER_PATCH)

#define CUFFT_FORWARD -1
#define CUFFT_INVERSE 1

typedef enum cufftResult_t {
    CUFFT_SUCCESS = 0x0,
    CUFFT_INVALID_PLAN = 0x1,
    CUFFT_ALLOC_FAILED = 0x2,
    CUFFT_INVALID_TYPE = 0x3,
    CUFFT_INVALID_VALUE = 0x4,
    CUFFT_INTERNAL_ERROR = 0x5,
    CUFFT_EXEC_FAILED = 0x6,
    CUFFT_SETUP_FAILED = 0x7,
    CUFFT_INVALID_SIZE = 0x8,
    CUFFT_UNALIGNED_DATA = 0x9,
    CUFFT_INCOMPLETE_PARAMETER_LIST = 0xA,
    CUFFT_INVALID_DEVICE = 0xB,
    CUFFT_PARSE_ERROR = 0xC,
    CUFFT_NO_WORKSPACE = 0xD,
    CUFFT_NOT_IMPLEMENTED = 0xE,
    CUFFT_LICENSE_ERROR = 0x0F,
    CUFFT_NOT_SUPPORTED = 0x10
} cufftResult;

typedef float cufftReal;
typedef double cufftDoubleReal;
typedef cuComplex cufftComplex;
typedef cuDoubleComplex cufftDoubleComplex;

typedef enum cufftType_t {
    CUFFT_R2C = 0x2a,
    CUFFT_C2R = 0x2c,
    CUFFT_C2C = 0x29,
    CUFFT_D2Z = 0x6a,
    CUFFT_Z2D = 0x6c,
    CUFFT_Z2Z = 0x69
} cufftType;

typedef enum cufftCompatibility_t {
    CUFFT_COMPATIBILITY_FFTW_PADDING = 0x01
} cufftCompatibility;

#define CUFFT_COMPATIBILITY_DEFAULT CUFFT_COMPATIBILITY_FFTW_PADDING

typedef int cufftHandle;

#endif  // ACLNN_EMU_CUFFT_H

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
