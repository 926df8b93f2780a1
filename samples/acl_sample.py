"""What every sample shares, as the C++ samples share CHECK_RET and CreateAclTensor.

Each sample in this folder imports these four helpers and is otherwise a standalone program in
CANN's order; run one with ``python samples/02_batch_norm.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl

__all__ = ["CHECK_RET", "CHECK_CUDNN", "create_acl_tensor", "to_device", "to_host", "run", "Verdicts"]


def CHECK_RET(ok, what):
    if not ok:
        raise RuntimeError(f"{what} failed: {acl.get_recent_err_msg()}")


def CHECK_CUDNN(st, what):
    """The cuDNN samples' check: any status but CUDNN_STATUS_SUCCESS stops the program."""
    from aclnn_py import cudnn
    CHECK_RET(st == cudnn.CUDNN_STATUS_SUCCESS, f"{what} ({cudnn.cudnnGetErrorString(st)})")


def to_device(host: np.ndarray) -> int:
    """malloc + memcpy: a device copy of ``host`` (a cuDNN program's cudaMalloc + cudaMemcpy)."""
    dev, ret = acl.rt.malloc(max(host.nbytes, 1), acl.rt.ACL_MEM_MALLOC_HUGE_FIRST)
    CHECK_RET(ret == 0, "aclrtMalloc")
    CHECK_RET(acl.rt.memcpy(dev, host.nbytes, acl.util.numpy_to_ptr(np.ascontiguousarray(host)), host.nbytes,
                            acl.rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0, "aclrtMemcpy")
    return dev


class Verdicts:
    """``check(name, got, ref, tol)`` prints a line per comparison with a float64 reference; ``ok`` is
    whether every one passed."""

    def __init__(self, width: int = 44):
        self.ok, self.width = True, width

    def __call__(self, name, got, ref, tol):
        err = np.abs(np.asarray(got, np.float64) - ref).max()
        good = bool(np.allclose(got, ref, rtol=tol, atol=tol))
        self.ok &= good
        print(f"{name:<{self.width}} max |error| vs float64: {err:.2e} -> {'PASS' if good else 'FAIL'}")


def create_acl_tensor(host: np.ndarray, dtype, fmt=A.ACL_FORMAT_ND):
    """malloc + memcpy + aclCreateTensor, like the C++ samples' CreateAclTensor."""
    size = host.nbytes
    dev, ret = acl.rt.malloc(size, acl.rt.ACL_MEM_MALLOC_HUGE_FIRST)
    CHECK_RET(ret == 0, "aclrtMalloc")
    ret = acl.rt.memcpy(dev, size, acl.util.numpy_to_ptr(np.ascontiguousarray(host)), size,
                        acl.rt.ACL_MEMCPY_HOST_TO_DEVICE)
    CHECK_RET(ret == 0, "aclrtMemcpy")
    t = A.aclCreateTensor(host.shape, dtype, None, 0, fmt, host.shape, dev)
    CHECK_RET(t is not None, "aclCreateTensor")
    return t, dev


def to_host(dev, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    ret = acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, dev, out.nbytes, acl.rt.ACL_MEMCPY_DEVICE_TO_HOST)
    CHECK_RET(ret == 0, "copy result from device to host")
    return out


def run(name, ws_size, executor, stream):
    """Workspace, phase 2, synchronize."""
    workspace = None
    if ws_size > 0:
        workspace, ret = acl.rt.malloc(ws_size, acl.rt.ACL_MEM_MALLOC_HUGE_FIRST)
        CHECK_RET(ret == 0, "allocate workspace")
    CHECK_RET(getattr(A, name)(workspace, ws_size, executor, stream) == 0, name)
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")
    if workspace is not None:
        CHECK_RET(acl.rt.free(workspace) == 0, "free workspace")
