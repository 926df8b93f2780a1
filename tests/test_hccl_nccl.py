"""``aclnn_py.hccl`` on the real NCCL engine (marker ``cuda``: skipped without a GPU).

One GPU holds one NCCL rank (NCCL refuses two ranks on one device), so these runs are single-rank:
every reduction is the identity, and what they prove is the part a fake cannot: real
``ncclCommInitRank`` from our root info, each collective × dtype reaching NCCL with the right
pointers, element count and datatype (the sentinel past ``count`` must survive and the first
``count`` elements must arrive bit for bit), stream order against our own copies, and statuses for
what NCCL cannot do. The op mapping and the multi-rank arithmetic are checked with a fake ``nccl``
and with real MPI ranks in tests/test_hccl.py.
"""
import numpy as np
import pytest

from aclnn_py import acl
import aclnn_py.hccl as hccl

pytestmark = pytest.mark.cuda

D = hccl.HcclDataType
NP = {D.HCCL_DATA_TYPE_INT8: np.int8, D.HCCL_DATA_TYPE_UINT8: np.uint8, D.HCCL_DATA_TYPE_INT32: np.int32,
      D.HCCL_DATA_TYPE_UINT32: np.uint32, D.HCCL_DATA_TYPE_INT64: np.int64, D.HCCL_DATA_TYPE_UINT64: np.uint64,
      D.HCCL_DATA_TYPE_FP16: np.float16, D.HCCL_DATA_TYPE_FP32: np.float32, D.HCCL_DATA_TYPE_FP64: np.float64,
      D.HCCL_DATA_TYPE_BFP16: "bfloat16"}
OPS = [hccl.HCCL_REDUCE_SUM, hccl.HCCL_REDUCE_PROD, hccl.HCCL_REDUCE_MAX, hccl.HCCL_REDUCE_MIN]
COUNT, SPARE = 1000, 24          # elements the collective moves; sentinel elements after them


def np_dtype(d):
    import ml_dtypes
    t = NP[d]
    return np.dtype(ml_dtypes.bfloat16) if t == "bfloat16" else np.dtype(t)


@pytest.fixture(scope="module")
def comm():
    assert hccl.engine_name() == "NCCL (CuPy)"
    info, ret = hccl.HcclGetRootInfo()
    assert ret == 0, acl.get_recent_err_msg()
    c, ret = hccl.HcclCommInitRootInfo(1, info, 0)
    assert ret == 0, acl.get_recent_err_msg()
    yield c
    assert hccl.HcclCommDestroy(c) == 0


class Buf:
    """A device buffer of ``n`` elements of ``dt`` uploaded from ``host``."""

    def __init__(self, host):
        self.host = np.ascontiguousarray(host)
        self.ptr, ret = acl.rt.malloc(self.host.nbytes, 0)
        assert ret == 0
        assert acl.rt.memcpy(self.ptr, self.host.nbytes, self.host.ctypes.data, self.host.nbytes, 1) == 0

    def read(self):
        out = np.empty_like(self.host)
        assert acl.rt.memcpy(out.ctypes.data, out.nbytes, self.ptr, out.nbytes, 2) == 0
        return out

    def free(self):
        acl.rt.free(self.ptr)


def values(dt, n, seed):
    rng = np.random.default_rng(seed)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dt)
    return rng.standard_normal(n).astype(dt)


def sentinel(dt, n):
    return np.full(n, 77, dt)


def run(api, comm, stream, *args):
    ret = getattr(hccl, api)(*args, comm, stream)
    assert ret == 0, f"{api}: {ret} {acl.get_recent_err_msg()}"
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()


@pytest.mark.parametrize("dtype", list(NP), ids=lambda d: D(d).name[15:])
@pytest.mark.parametrize("op", OPS, ids=lambda o: hccl.HcclReduceOp(o).name[12:])
def test_all_reduce_and_reduce_move_exactly_count_elements(comm, stream, dtype, op):
    dt = np_dtype(dtype)
    x = values(dt, COUNT + SPARE, seed=int(dtype) * 10 + int(op))
    send, recv = Buf(x), Buf(sentinel(dt, COUNT + SPARE))
    try:
        run("HcclAllReduce", comm, stream, send.ptr, recv.ptr, COUNT, dtype, op)
        got = recv.read()
        assert got[:COUNT].tobytes() == x[:COUNT].tobytes()           # one rank: the identity, bit for bit
        assert got[COUNT:].tobytes() == sentinel(dt, SPARE).tobytes()  # nothing past count
        recv2 = Buf(sentinel(dt, COUNT + SPARE))
        run("HcclReduce", comm, stream, send.ptr, recv2.ptr, COUNT, dtype, op, 0)
        got = recv2.read()
        assert got[:COUNT].tobytes() == x[:COUNT].tobytes()
        assert got[COUNT:].tobytes() == sentinel(dt, SPARE).tobytes()
        recv2.free()
    finally:
        send.free()
        recv.free()


@pytest.mark.parametrize("dtype", list(NP), ids=lambda d: D(d).name[15:])
def test_gather_scatter_broadcast_move_exactly_count_elements(comm, stream, dtype):
    dt = np_dtype(dtype)
    x = values(dt, COUNT + SPARE, seed=int(dtype))
    send = Buf(x)
    try:
        for api, extra in (("HcclAllGather", ()), ("HcclReduceScatter", (hccl.HCCL_REDUCE_SUM,))):
            recv = Buf(sentinel(dt, COUNT + SPARE))
            run(api, comm, stream, send.ptr, recv.ptr, COUNT, dtype, *extra)
            got = recv.read()
            assert got[:COUNT].tobytes() == x[:COUNT].tobytes(), api
            assert got[COUNT:].tobytes() == sentinel(dt, SPARE).tobytes(), api
            recv.free()
        run("HcclBroadcast", comm, stream, send.ptr, COUNT, dtype, 0)      # in place, root's data
        assert send.read().tobytes() == x.tobytes()
        run("HcclBarrier", comm, stream)
    finally:
        send.free()


@pytest.mark.parametrize("dtype", [D.HCCL_DATA_TYPE_INT16, D.HCCL_DATA_TYPE_UINT16, D.HCCL_DATA_TYPE_INT128])
def test_a_dtype_nccl_lacks_is_not_support_and_writes_nothing(comm, stream, dtype):
    x = np.arange(64, dtype=np.int64)
    send, recv = Buf(x), Buf(np.full(64, 5, np.int64))
    try:
        ret = hccl.HcclAllReduce(send.ptr, recv.ptr, 16, dtype, hccl.HCCL_REDUCE_SUM, comm, stream)
        assert ret == hccl.HCCL_E_NOT_SUPPORT
        msg = acl.get_recent_err_msg()           # read once: reading it clears it, as in pyACL
        assert "NCCL has no" in msg or "is not supported" in msg, msg
        assert acl.rt.synchronize_stream(stream) == 0
        assert (recv.read() == 5).all()
    finally:
        send.free()
        recv.free()


def test_collectives_are_stream_ordered_with_our_copies(comm, stream):
    """An async upload, the all-reduce and an async download on one stream, one synchronize at the
    end: the all-reduce must see the upload and the download must see the all-reduce. 64 MiB so the
    copies take long enough to be overtaken if the order were not kept."""
    n = 16 << 20
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    send, _ = acl.rt.malloc(x.nbytes, 0)
    recv, _ = acl.rt.malloc(x.nbytes, 0)
    assert acl.rt.memset(recv, x.nbytes, 0, x.nbytes) == 0
    out = np.zeros_like(x)
    try:
        for _ in range(2):
            assert acl.rt.memcpy_async(send, x.nbytes, x.ctypes.data, x.nbytes, 1, stream) == 0
            assert hccl.HcclAllReduce(send, recv, n, hccl.HCCL_DATA_TYPE_FP32, hccl.HCCL_REDUCE_SUM,
                                      comm, stream) == 0
            assert acl.rt.memcpy_async(out.ctypes.data, out.nbytes, recv, out.nbytes, 2, stream) == 0
            assert acl.rt.synchronize_stream(stream) == 0
            assert np.array_equal(out, x)
            x = -x
    finally:
        acl.rt.free(send)
        acl.rt.free(recv)


def test_bad_arguments_are_statuses_on_nccl_too(comm, stream):
    send, _ = acl.rt.malloc(256, 0)
    try:
        F32, SUM = hccl.HCCL_DATA_TYPE_FP32, hccl.HCCL_REDUCE_SUM
        assert hccl.HcclAllReduce(send, send, 1 << 20, F32, SUM, comm, stream) == hccl.HCCL_E_PARA   # past the buffer
        assert hccl.HcclAllReduce(send, 0, 16, F32, SUM, comm, stream) == hccl.HCCL_E_PTR
        assert hccl.HcclAllReduce(send, send, 16, F32, 9, comm, stream) == hccl.HCCL_E_PARA
        assert hccl.HcclReduce(send, send, 16, F32, SUM, 1, comm, stream) == hccl.HCCL_E_PARA        # root 1 of 1
        assert hccl.HcclAllReduce(send, send, 16, F32, SUM, 0xDEAD, stream) == hccl.HCCL_E_PARA
        assert hccl.HcclGetRankSize(comm) == (1, 0) and hccl.HcclGetRankId(comm) == (0, 0)
        assert hccl.HcclGetCommAsyncError(comm) == (hccl.HCCL_SUCCESS, 0)
        assert acl.rt.synchronize_stream(stream) == 0
    finally:
        acl.rt.free(send)
