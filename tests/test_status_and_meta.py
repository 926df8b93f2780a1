"""Status codes (files, enums, README agree), dtypes/formats, and the meta API."""
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import aclnn_py as A
from aclnn_py.dtypes import aclDataType, aclFormat, dtype_info
from aclnn_py.status import AclError, AclnnStatus, CudnnStatus, check, load_status_table

ROOT = Path(__file__).resolve().parent.parent

# values from the CANN / cuDNN headers (shared reference aclnn.md §1, cudnn.md §2), written out again
# here on purpose: a test that reads the same file as the code could not fail
EXPECTED_ACLNN = {"ACLNN_SUCCESS": 0, "ACLNN_ERR_PARAM_NULLPTR": 161001, "ACLNN_ERR_PARAM_INVALID": 161002,
                  "ACLNN_ERR_RUNTIME_ERROR": 361001, "ACLNN_ERR_INNER": 561000,
                  "ACLNN_ERR_INNER_INFERSHAPE_ERROR": 561001, "ACLNN_ERR_INNER_TILING_ERROR": 561002,
                  "ACLNN_ERR_INNER_FIND_KERNEL_ERROR": 561003, "ACLNN_ERR_INNER_CREATE_EXECUTOR": 561101,
                  "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR": 561102, "ACLNN_ERR_INNER_NULLPTR": 561103,
                  "ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE": 561104, "ACLNN_ERR_INNER_KEY_CONFLICT": 561105,
                  "ACLNN_ERR_INNER_INVALID_IMPL_MODE": 561106, "ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND": 561107,
                  "ACLNN_ERR_INNER_LOAD_JSON_FAILED": 561108, "ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND": 561109,
                  "ACLNN_ERR_INNER_JSON_FORMAT_INVALID": 561110, "ACLNN_ERR_INNER_JSON_DTYPE_INVALID": 561111,
                  "ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND": 561112, "ACLNN_ERR_INNER_OP_FILE_INVALID": 561113,
                  "ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND": 561114, "ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH": 561115,
                  "ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE": 561116, "ACLNN_ERR_INNER_INPUT_JSON_IS_NULL": 561117,
                  "ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID": 561118, "ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID": 561119}
EXPECTED_ACL = {"ACL_SUCCESS": 0, "ACL_ERROR_INVALID_PARAM": 100000, "ACL_ERROR_UNINITIALIZE": 100001,
                "ACL_ERROR_REPEAT_INITIALIZE": 100002, "ACL_ERROR_INVALID_FILE": 100003,
                "ACL_ERROR_REPEAT_FINALIZE": 100037, "ACL_ERROR_BAD_ALLOC": 200000,
                "ACL_ERROR_RT_PARAM_INVALID": 107000, "ACL_ERROR_RT_INVALID_DEVICEID": 107001,
                "ACL_ERROR_RT_CONTEXT_NULL": 107002, "ACL_ERROR_RT_STREAM_CONTEXT": 107003,
                "ACL_ERROR_RT_INVALID_MEMORY_TYPE": 107016, "ACL_ERROR_RT_INVALID_HANDLE": 107017,
                "ACL_ERROR_RT_MEMORY_ALLOCATION": 207001, "ACL_ERROR_RT_MEMORY_FREE": 207002,
                "ACL_ERROR_RT_INTERNAL_ERROR": 507000, "ACL_ERROR_RT_AICORE_EXCEPTION": 507015,
                "ACL_ERROR_RT_EVENT_NOT_COMPLETE": 507006}
CUDNN = ["SUCCESS", "NOT_INITIALIZED", "ALLOC_FAILED", "BAD_PARAM", "INTERNAL_ERROR", "INVALID_VALUE",
         "ARCH_MISMATCH", "MAPPING_ERROR", "EXECUTION_FAILED", "NOT_SUPPORTED", "LICENSE_ERROR",
         "RUNTIME_PREREQUISITE_MISSING", "RUNTIME_IN_PROGRESS", "RUNTIME_FP_OVERFLOW", "VERSION_MISMATCH"]


def test_enums_match_reference_values():
    assert {m.name: int(m) for m in AclnnStatus} == EXPECTED_ACLNN
    for name, value in EXPECTED_ACL.items():
        assert AclError[name] == value
    assert [m.name for m in CudnnStatus] == [f"CUDNN_STATUS_{n}" for n in CUDNN]
    assert [int(m) for m in CudnnStatus] == list(range(15))


def test_readme_table_files_and_enums_agree():
    readme = (ROOT / "README.md").read_text()
    for stem, enum in (("aclnn_status", AclnnStatus), ("acl_error", AclError), ("cudnn_status", CudnnStatus)):
        rows = load_status_table(stem)
        assert [(n, v) for n, v, _ in rows] == [(m.name, int(m)) for m in enum]
        for name, value, _ in rows:
            assert re.search(rf"\|\s*`?{name}`?\s*\|\s*{value}\s*\|", readme), f"README lacks {name} = {value}"


def test_check_helper():
    assert check((5, 0)) == 5
    assert check(0) is None
    A.acl.rt.free(1234)
    with pytest.raises(A.AclnnError) as e:
        check(A.acl.rt.free(1234))
    assert e.value.status == AclError.ACL_ERROR_RT_MEMORY_FREE and "acl.rt.free" in str(e.value)


def test_dtypes_and_formats():
    assert aclDataType.ACL_BF16 == 27 and aclDataType.ACL_DOUBLE == 11 and aclDataType.ACL_FLOAT4_E1M2 == 41
    assert aclFormat.ACL_FORMAT_NCL == 47 and aclFormat.ACL_FRACTAL_Z_3D == 33 and aclFormat.ACL_FORMAT_NDHWC == 27
    bf = dtype_info(A.ACL_BF16)
    assert bf.itemsize == 2 and bf.numpy == np.dtype(ml_dtypes.bfloat16) and bf.ctype == "__nv_bfloat16"
    assert dtype_info(A.ACL_FLOAT16).ctype == "__half" and dtype_info(A.ACL_FLOAT).ctype == "float"
    assert dtype_info(A.ACL_INT32).numpy == np.int32
    assert dtype_info(A.ACL_HIFLOAT8) is None


def test_tensor_meta_api():
    t = A.aclCreateTensor([2, 3, 4], A.ACL_FLOAT, None, 5, A.ACL_FORMAT_NCL, [40], 0x1000)
    assert A.aclGetViewShape(t) == ([2, 3, 4], 0)
    assert A.aclGetViewStrides(t) == ([12, 4, 1], 0)
    assert A.aclGetViewOffset(t) == (5, 0)
    assert A.aclGetStorageShape(t) == ([40], 0)
    assert A.aclGetFormat(t) == (A.ACL_FORMAT_NCL, 0)
    assert A.aclGetDataType(t) == (A.ACL_FLOAT, 0)
    assert A.aclGetRawTensorAddr(t) == (0x1000, 0)
    assert A.aclSetRawTensorAddr(t, 0x2000) == 0 and t.addr == 0x2000
    for getter in (A.aclGetViewShape, A.aclGetViewStrides, A.aclGetViewOffset, A.aclGetStorageShape,
                   A.aclGetFormat, A.aclGetDataType):
        assert getter(None)[1] == A.ACLNN_ERR_PARAM_NULLPTR
    assert A.aclDestroyTensor(t) == 0
    assert A.aclDestroyTensor(None) == 0
    assert A.aclCreateTensor([2, 3], A.ACL_FLOAT, [1], 0, A.ACL_FORMAT_ND, [6], 0) is None   # strides length
    assert "strides" in A.get_recent_err_msg()
    assert A.aclCreateTensor([2, -3], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_ND, [6], 0) is None
    assert A.aclCreateTensor([2], 999, None, 0, A.ACL_FORMAT_ND, [2], 0) is None
    tt = A.aclCreateTensor([4, 2], A.ACL_FLOAT, [1, 4], 0, A.ACL_FORMAT_ND, [2, 4], 0x1000)  # a transpose view
    assert A.aclGetViewStrides(tt) == ([1, 4], 0)


def test_scalars_and_arrays():
    v = np.float32(1.5)
    s = A.aclCreateScalar(v, A.ACL_FLOAT16)
    v += 1  # copied at creation
    assert s.value == np.float16(1.5) and s.value.dtype == np.float16
    assert A.aclCreateScalar(None, A.ACL_FLOAT) is None
    assert A.aclDestroyScalar(s) == 0
    ia = A.aclCreateIntArray([1, 2, 3])
    assert A.aclGetIntArraySize(ia) == (3, 0) and list(ia) == [1, 2, 3]
    fa = A.aclCreateFloatArray([0.5, 1.0])
    assert A.aclGetFloatArraySize(fa) == (2, 0)
    ba = A.aclCreateBoolArray([True, False, True])
    assert list(ba) == [True, False, True]
    assert A.aclGetBoolArraySize(None)[1] == A.ACLNN_ERR_PARAM_NULLPTR
    for d, a in ((A.aclDestroyIntArray, ia), (A.aclDestroyFloatArray, fa), (A.aclDestroyBoolArray, ba)):
        assert d(a) == 0
    t1 = A.aclCreateTensor([2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_ND, [2], 0x1000)
    t2 = A.aclCreateTensor([3], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_ND, [3], 0x2000)
    tl = A.aclCreateTensorList([t1, t2])
    assert A.aclGetTensorListSize(tl) == (2, 0)
    assert A.aclDestroyTensorList(tl) == 0
    assert t1.destroyed and t2.destroyed   # the list's destroy destroys its tensors


def test_from_array_interop_registers_extent():
    """Runs on both backends: the array is device memory (acl.rt.malloc) seen through a
    ``__cuda_array_interface__`` with negative and step strides, read back with memcpy; the NumPy
    (host buffer) variant only where host buffers are device memory (the emulator)."""
    from aclnn_py.acl.memory import registry
    from aclnn_py.backends import get_backend
    base = np.arange(24, dtype=np.float32)
    p, ret = A.acl.rt.malloc(base.nbytes, 0)
    assert ret == 0
    assert A.acl.rt.memcpy(p, base.nbytes, base.ctypes.data, base.nbytes, 1) == 0
    x = base.reshape(2, 3, 4)[:, ::-1, ::2]                              # negative and step strides

    class DeviceView:
        __cuda_array_interface__ = {"shape": x.shape, "typestr": "<f4", "strides": x.strides, "version": 3,
                                    "data": (p + (x.ctypes.data - base.ctypes.data), False), "stream": None}
    for obj in ([DeviceView()] + ([x] if get_backend().name == "host" else [])):
        t, ret = A.from_array(obj)
        assert ret == 0, A.acl.get_recent_err_msg()
        assert t.view_dims == (2, 3, 2) and t.strides == (12, -4, 2) and t.format == A.ACL_FORMAT_NCL
        lo, hi = t.element_span()
        assert registry.find(t.addr + lo * 4, (hi - lo + 1) * 4) is not None
        # the view reads exactly x's elements through (addr, offset, strides)
        storage = np.empty(hi + 1, np.float32)
        assert A.acl.rt.memcpy(storage.ctypes.data, storage.nbytes, t.addr, storage.nbytes, 2) == 0
        view = np.lib.stride_tricks.as_strided(storage[t.offset:], t.view_dims, [s * 4 for s in t.strides])
        assert np.array_equal(view, x)
        assert A.aclDestroyTensor(t) == 0
    assert A.acl.rt.free(p) == 0
    if get_backend().name == "host":
        t2, ret = A.from_array(np.zeros(3, np.complex64))
        assert ret == 0 and t2.data_type == A.ACL_COMPLEX64
        A.aclDestroyTensor(t2)
    bad, ret = A.from_array(object())
    assert bad is None and ret == A.ACLNN_ERR_PARAM_INVALID
