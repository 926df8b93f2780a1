"""Interop (issue 14 item 5): ``__cuda_array_interface__`` v3 (stream, bfloat16 ``<V2``), DLPack both
ways with the stream protocol. Runs on the emulator; the ``cuda`` tests repeat it with CuPy on a GPU."""
import ml_dtypes
import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.backends import get_backend

BF16 = np.dtype(ml_dtypes.bfloat16)


def _device_copy(a: np.ndarray) -> int:
    p, ret = acl.rt.malloc(a.nbytes, 0)
    assert ret == 0
    assert acl.rt.memcpy(p, a.nbytes, a.ctypes.data, a.nbytes, 1) == 0
    return p


def _read(ptr: int, n: int, dt) -> np.ndarray:
    out = np.empty(n, dt)
    assert acl.rt.memcpy(out.ctypes.data, out.nbytes, ptr, out.nbytes, 2) == 0
    return out


class Cai:
    def __init__(self, ptr, shape, typestr, descr=None, stream=None, version=3, dtype=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "version": version, "strides": None, "stream": stream}
        if descr is not None:
            self.__cuda_array_interface__["descr"] = descr
        if dtype is not None:
            self.dtype = dtype


def test_cai_bfloat16_typestr_v2_is_accepted():
    x = np.arange(8, dtype=np.float32).astype(BF16)
    p = _device_copy(x)
    for obj in (Cai(p, (8,), "<V2", [("", "<V2")]),                  # CuPy 14 / ml_dtypes export
                Cai(p, (8,), "|V2", [("bfloat16", "|V2")]),           # named in descr
                Cai(p, (8,), "|V2", dtype="bfloat16")):               # the object's own dtype says it
        t, ret = A.from_array(obj)
        assert ret == 0, acl.get_recent_err_msg()
        assert t.data_type == A.ACL_BF16 and t.view_dims == (8,)
        A.aclDestroyTensor(t)
    bad, ret = A.from_array(Cai(p, (8,), "|V2", [("", "|V2")]))      # an anonymous 2-byte blob: refused
    assert bad is None and ret == A.ACLNN_ERR_PARAM_INVALID
    assert acl.rt.free(p) == 0


def test_cai_stream_zero_and_masks_are_refused():
    p = _device_copy(np.zeros(4, np.float32))
    assert A.from_array(Cai(p, (4,), "<f4", stream=0))[1] == A.ACLNN_ERR_PARAM_INVALID
    obj = Cai(p, (4,), "<f4")
    obj.__cuda_array_interface__["mask"] = object()
    assert A.from_array(obj)[1] == A.ACLNN_ERR_PARAM_INVALID
    assert acl.rt.free(p) == 0


class Producer:
    """A DLPack producer that records the consumer's stream (the protocol's ``stream=`` argument)."""

    def __init__(self, arr):
        self.arr, self.streams = arr, []

    def __dlpack__(self, stream=None, max_version=None, **kw):
        self.streams.append(stream)
        return self.arr.__dlpack__(max_version=max_version) if max_version else self.arr.__dlpack__()

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


@pytest.mark.skipif(get_backend().name != "host", reason="host buffers: the emulator")
def test_dlpack_import_from_numpy_and_stream_protocol():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    prod = Producer(a)
    t, ret = A.from_array(prod)
    assert ret == 0, acl.get_recent_err_msg()
    assert prod.streams == [None]                     # host memory: no stream (producer synchronises)
    assert t.view_dims == (3, 2) and t.strides == (4, 2)
    back = np.from_dlpack(t)                          # and out again: the same elements, no copy
    assert np.array_equal(back, a)
    assert back.ctypes.data == a.ctypes.data
    A.aclDestroyTensor(t)


@pytest.mark.skipif(get_backend().name != "host", reason="CPU tensors: the emulator")
def test_dlpack_bfloat16_both_ways_with_pytorch():
    torch = pytest.importorskip("torch")
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4).to(torch.bfloat16)[:, :, 1::2]
    t, ret = A.from_array(x)
    assert ret == 0, acl.get_recent_err_msg()
    assert t.data_type == A.ACL_BF16 and t.view_dims == (2, 3, 2) and t.strides == (12, 4, 2)
    y = torch.from_dlpack(t)
    assert y.dtype == torch.bfloat16 and torch.equal(y, x) and y.data_ptr() == x.data_ptr()
    A.aclDestroyTensor(t)
    del y


def test_dlpack_export_of_device_memory_roundtrips():
    x = np.arange(6, dtype=np.float32)
    p = _device_copy(x)
    t = A.aclCreateTensor([2, 3], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_ND, [2, 3], p)
    t2, ret = A.from_array(t)                        # our own capsule, consumed by us
    assert ret == 0 and t2.view_dims == (2, 3) and t2.addr == p
    assert np.array_equal(_read(t2.addr, 6, np.float32), x)
    A.aclDestroyTensor(t2)
    assert acl.rt.free(p) == 0


@pytest.mark.cuda
def test_cupy_interop_on_a_gpu():
    """With CuPy: bf16 and f32 arrays in through CAI and DLPack, out through DLPack, on the GPU."""
    cp = pytest.importorskip("cupy")
    for dt in (np.float32, BF16):
        x = cp.arange(16, dtype=cp.float32).astype(dt).reshape(4, 4)
        for src in (x, Producer(x)):
            t, ret = A.from_array(src)
            assert ret == 0, acl.get_recent_err_msg()
            assert t.addr == x.data.ptr
            y = cp.from_dlpack(t)
            assert bool((y.astype(cp.float32) == x.astype(cp.float32)).all())
            A.aclDestroyTensor(t)
        if isinstance(src, Producer):
            assert src.streams and src.streams[0] == 1           # the legacy default stream


@pytest.mark.cuda
def test_pytorch_cuda_interop_on_a_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    for dt in (torch.float32, torch.bfloat16):
        x = torch.arange(16, device="cuda", dtype=torch.float32).to(dt).reshape(4, 4)
        t, ret = A.from_array(x)
        assert ret == 0, acl.get_recent_err_msg()
        y = torch.from_dlpack(t)
        assert torch.equal(y, x)
        A.aclDestroyTensor(t)
