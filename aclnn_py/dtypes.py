"""``aclDataType`` and ``aclFormat`` with CANN's numbers, and what each supported dtype is on both sides.

Values from ``hicann/runtime:include/external/acl/acl_base_rt.h`` (shared reference aclnn.md §2).
"""
from __future__ import annotations

import enum

import attrs
import ml_dtypes
import numpy as np

__all__ = ["aclDataType", "aclFormat", "DTypeInfo", "dtype_info", "from_numpy_dtype",
           "PRIVATE_FORMATS", "FORMAT_RANK", "CHANNELS_LAST_FORMATS"]


class aclDataType(enum.IntEnum):
    ACL_DT_UNDEFINED = -1
    ACL_FLOAT = 0
    ACL_FLOAT16 = 1
    ACL_INT8 = 2
    ACL_INT32 = 3
    ACL_UINT8 = 4
    ACL_INT16 = 6
    ACL_UINT16 = 7
    ACL_UINT32 = 8
    ACL_INT64 = 9
    ACL_UINT64 = 10
    ACL_DOUBLE = 11
    ACL_BOOL = 12
    ACL_STRING = 13
    ACL_COMPLEX64 = 16
    ACL_COMPLEX128 = 17
    ACL_BF16 = 27
    ACL_INT4 = 29
    ACL_UINT1 = 30
    ACL_COMPLEX32 = 33
    ACL_HIFLOAT8 = 34
    ACL_FLOAT8_E5M2 = 35
    ACL_FLOAT8_E4M3FN = 36
    ACL_FLOAT8_E8M0 = 37
    ACL_FLOAT6_E3M2 = 38
    ACL_FLOAT6_E2M3 = 39
    ACL_FLOAT4_E2M1 = 40
    ACL_FLOAT4_E1M2 = 41


class aclFormat(enum.IntEnum):
    ACL_FORMAT_UNDEFINED = -1
    ACL_FORMAT_NCHW = 0
    ACL_FORMAT_NHWC = 1
    ACL_FORMAT_ND = 2
    ACL_FORMAT_NC1HWC0 = 3
    ACL_FORMAT_FRACTAL_Z = 4
    ACL_FORMAT_NC1HWC0_C04 = 12
    ACL_FORMAT_HWCN = 16
    ACL_FORMAT_NDHWC = 27
    ACL_FORMAT_FRACTAL_NZ = 29
    ACL_FORMAT_NCDHW = 30
    ACL_FORMAT_NDC1HWC0 = 32
    ACL_FRACTAL_Z_3D = 33
    ACL_FORMAT_NC = 35
    ACL_FORMAT_NCL = 47
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54


F = aclFormat
PRIVATE_FORMATS = frozenset({F.ACL_FORMAT_NC1HWC0, F.ACL_FORMAT_FRACTAL_Z, F.ACL_FORMAT_NC1HWC0_C04,
                             F.ACL_FORMAT_FRACTAL_NZ, F.ACL_FORMAT_NDC1HWC0, F.ACL_FRACTAL_Z_3D,
                             F.ACL_FORMAT_FRACTAL_NZ_C0_16, F.ACL_FORMAT_FRACTAL_NZ_C0_32,
                             F.ACL_FORMAT_FRACTAL_NZ_C0_2, F.ACL_FORMAT_FRACTAL_NZ_C0_4,
                             F.ACL_FORMAT_FRACTAL_NZ_C0_8})
#: the rank a non-ND base format implies (data_format.md); ND goes with any rank
FORMAT_RANK = {F.ACL_FORMAT_NC: 2, F.ACL_FORMAT_NCL: 3, F.ACL_FORMAT_NCHW: 4, F.ACL_FORMAT_NHWC: 4,
               F.ACL_FORMAT_HWCN: 4, F.ACL_FORMAT_NCDHW: 5, F.ACL_FORMAT_NDHWC: 5}
#: formats whose channel axis is the last dim (oneDNN's NXC)
CHANNELS_LAST_FORMATS = frozenset({F.ACL_FORMAT_NHWC, F.ACL_FORMAT_NDHWC})


@attrs.frozen
class DTypeInfo:
    """What one aclDataType is: its size, its NumPy dtype and the C type the kernels use."""
    acl: aclDataType
    itemsize: int
    numpy: np.dtype
    ctype: str
    is_float: bool


_T = aclDataType
_INFOS = [
    DTypeInfo(_T.ACL_FLOAT, 4, np.dtype(np.float32), "float", True),
    DTypeInfo(_T.ACL_FLOAT16, 2, np.dtype(np.float16), "__half", True),
    DTypeInfo(_T.ACL_BF16, 2, np.dtype(ml_dtypes.bfloat16), "__nv_bfloat16", True),
    DTypeInfo(_T.ACL_DOUBLE, 8, np.dtype(np.float64), "double", True),
    DTypeInfo(_T.ACL_INT8, 1, np.dtype(np.int8), "signed char", False),
    DTypeInfo(_T.ACL_UINT8, 1, np.dtype(np.uint8), "unsigned char", False),
    DTypeInfo(_T.ACL_INT16, 2, np.dtype(np.int16), "short", False),
    DTypeInfo(_T.ACL_UINT16, 2, np.dtype(np.uint16), "unsigned short", False),
    DTypeInfo(_T.ACL_INT32, 4, np.dtype(np.int32), "int", False),
    DTypeInfo(_T.ACL_UINT32, 4, np.dtype(np.uint32), "unsigned int", False),
    DTypeInfo(_T.ACL_INT64, 8, np.dtype(np.int64), "long long", False),
    DTypeInfo(_T.ACL_UINT64, 8, np.dtype(np.uint64), "unsigned long long", False),
    DTypeInfo(_T.ACL_BOOL, 1, np.dtype(np.bool_), "bool", False),
    DTypeInfo(_T.ACL_COMPLEX64, 8, np.dtype(np.complex64), "float2", False),
    DTypeInfo(_T.ACL_COMPLEX128, 16, np.dtype(np.complex128), "double2", False),
]
_BY_ACL = {i.acl: i for i in _INFOS}
_BY_NUMPY = {i.numpy: i.acl for i in _INFOS}


def dtype_info(dt) -> DTypeInfo | None:
    """The :class:`DTypeInfo` of an aclDataType (int or enum); ``None`` for types we cannot hold."""
    try:
        return _BY_ACL.get(aclDataType(dt))
    except ValueError:
        return None


def from_numpy_dtype(dt) -> aclDataType | None:
    return _BY_NUMPY.get(np.dtype(dt))
