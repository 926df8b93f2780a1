"""cuDNN 8.9.7's enums (cudnn_ops_infer.h; shared reference cudnn.md §2) as IntEnums named like the C
typedefs, and the #define constants. ``cudnnStatus_t`` is built from ``status_codes/cudnn_status.csv``,
the single source of truth for status values."""
from __future__ import annotations

import enum

from ..status import load_status_table

cudnnStatus_t = enum.IntEnum("cudnnStatus_t", [(n, v) for n, v, _ in load_status_table("cudnn_status")],
                             module=__name__)


def _enum(name: str, **members: int) -> type[enum.IntEnum]:
    return enum.IntEnum(name, list(members.items()), module=__name__)


cudnnErrQueryMode_t = _enum("cudnnErrQueryMode_t", CUDNN_ERRQUERY_RAWCODE=0, CUDNN_ERRQUERY_NONBLOCKING=1,
                            CUDNN_ERRQUERY_BLOCKING=2)
cudnnDataType_t = _enum(
    "cudnnDataType_t", CUDNN_DATA_FLOAT=0, CUDNN_DATA_DOUBLE=1, CUDNN_DATA_HALF=2, CUDNN_DATA_INT8=3,
    CUDNN_DATA_INT32=4, CUDNN_DATA_INT8x4=5, CUDNN_DATA_UINT8=6, CUDNN_DATA_UINT8x4=7, CUDNN_DATA_INT8x32=8,
    CUDNN_DATA_BFLOAT16=9, CUDNN_DATA_INT64=10, CUDNN_DATA_BOOLEAN=11, CUDNN_DATA_FP8_E4M3=12,
    CUDNN_DATA_FP8_E5M2=13, CUDNN_DATA_FAST_FLOAT_FOR_FP8=14)
cudnnMathType_t = _enum("cudnnMathType_t", CUDNN_DEFAULT_MATH=0, CUDNN_TENSOR_OP_MATH=1,
                        CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION=2, CUDNN_FMA_MATH=3)
cudnnNanPropagation_t = _enum("cudnnNanPropagation_t", CUDNN_NOT_PROPAGATE_NAN=0, CUDNN_PROPAGATE_NAN=1)
cudnnDeterminism_t = _enum("cudnnDeterminism_t", CUDNN_NON_DETERMINISTIC=0, CUDNN_DETERMINISTIC=1)
cudnnTensorFormat_t = _enum("cudnnTensorFormat_t", CUDNN_TENSOR_NCHW=0, CUDNN_TENSOR_NHWC=1,
                            CUDNN_TENSOR_NCHW_VECT_C=2)
cudnnSoftmaxAlgorithm_t = _enum("cudnnSoftmaxAlgorithm_t", CUDNN_SOFTMAX_FAST=0, CUDNN_SOFTMAX_ACCURATE=1,
                                CUDNN_SOFTMAX_LOG=2)
cudnnSoftmaxMode_t = _enum("cudnnSoftmaxMode_t", CUDNN_SOFTMAX_MODE_INSTANCE=0, CUDNN_SOFTMAX_MODE_CHANNEL=1)
cudnnPoolingMode_t = _enum("cudnnPoolingMode_t", CUDNN_POOLING_MAX=0, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING=1,
                           CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING=2, CUDNN_POOLING_MAX_DETERMINISTIC=3)
cudnnActivationMode_t = _enum(
    "cudnnActivationMode_t", CUDNN_ACTIVATION_SIGMOID=0, CUDNN_ACTIVATION_RELU=1, CUDNN_ACTIVATION_TANH=2,
    CUDNN_ACTIVATION_CLIPPED_RELU=3, CUDNN_ACTIVATION_ELU=4, CUDNN_ACTIVATION_IDENTITY=5, CUDNN_ACTIVATION_SWISH=6)
cudnnLRNMode_t = _enum("cudnnLRNMode_t", CUDNN_LRN_CROSS_CHANNEL_DIM1=0)
cudnnDivNormMode_t = _enum("cudnnDivNormMode_t", CUDNN_DIVNORM_PRECOMPUTED_MEANS=0)
cudnnBatchNormMode_t = _enum("cudnnBatchNormMode_t", CUDNN_BATCHNORM_PER_ACTIVATION=0, CUDNN_BATCHNORM_SPATIAL=1,
                             CUDNN_BATCHNORM_SPATIAL_PERSISTENT=2)
cudnnBatchNormOps_t = _enum("cudnnBatchNormOps_t", CUDNN_BATCHNORM_OPS_BN=0, CUDNN_BATCHNORM_OPS_BN_ACTIVATION=1,
                            CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION=2)
cudnnNormMode_t = _enum("cudnnNormMode_t", CUDNN_NORM_PER_ACTIVATION=0, CUDNN_NORM_PER_CHANNEL=1)
cudnnNormAlgo_t = _enum("cudnnNormAlgo_t", CUDNN_NORM_ALGO_STANDARD=0, CUDNN_NORM_ALGO_PERSIST=1)
cudnnNormOps_t = _enum("cudnnNormOps_t", CUDNN_NORM_OPS_NORM=0, CUDNN_NORM_OPS_NORM_ACTIVATION=1,
                       CUDNN_NORM_OPS_NORM_ADD_ACTIVATION=2)
cudnnSamplerType_t = _enum("cudnnSamplerType_t", CUDNN_SAMPLER_BILINEAR=0)
cudnnFoldingDirection_t = _enum("cudnnFoldingDirection_t", CUDNN_TRANSFORM_FOLD=0, CUDNN_TRANSFORM_UNFOLD=1)
cudnnSeverity_t = _enum("cudnnSeverity_t", CUDNN_SEV_FATAL=0, CUDNN_SEV_ERROR=1, CUDNN_SEV_WARNING=2,
                        CUDNN_SEV_INFO=3)
libraryPropertyType = _enum("libraryPropertyType", MAJOR_VERSION=0, MINOR_VERSION=1, PATCH_LEVEL=2)

ENUMS = [v for v in list(globals().values()) if isinstance(v, type) and issubclass(v, enum.IntEnum)]
CONSTANTS = {m.name: m for e in ENUMS for m in e}          # every member as a module-level constant

CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL = 8, 9, 7
CUDNN_VERSION = CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL      # 8907
CUDNN_OPS_TRAIN_MAJOR, CUDNN_OPS_TRAIN_MINOR, CUDNN_OPS_TRAIN_PATCH = 8, 9, 7
CUDNN_OPS_INFER_MAJOR, CUDNN_OPS_INFER_MINOR, CUDNN_OPS_INFER_PATCH = 8, 9, 7
CUDNN_DIM_MAX = 8
CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N, CUDNN_LRN_MIN_K, CUDNN_LRN_MIN_BETA = 1, 16, 1e-5, 0.01
CUDNN_BN_MIN_EPSILON = 0.0
CUDNN_MAX_SM_MAJOR_NUMBER, CUDNN_MAX_SM_MINOR_NUMBER = 9, 0
CUDNN_MAX_DEVICE_VERSION, CUDNN_MIN_DEVICE_VERSION = 900, 500
