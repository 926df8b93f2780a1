"""Handles, streams, versions and errors: cudnnCreate/Destroy/SetStream/GetStream, cudnnGetVersion,
cudnnGetErrorString, cudnnQueryRuntimeError, the version checks."""
from __future__ import annotations

from .. import acl
from ..acl._state import as_int, resolve_stream, state
from ._core import (SUCCESS, CudnnFail, api, bad, cudnnContext, enum_arg, handle_of)
from ._enums import (CUDNN_MAJOR, CUDNN_MAX_DEVICE_VERSION, CUDNN_MINOR, CUDNN_OPS_INFER_MAJOR,
                     CUDNN_OPS_INFER_MINOR, CUDNN_OPS_INFER_PATCH, CUDNN_OPS_TRAIN_MAJOR, CUDNN_OPS_TRAIN_MINOR,
                     CUDNN_OPS_TRAIN_PATCH, CUDNN_PATCHLEVEL, CUDNN_VERSION, cudnnErrQueryMode_t, cudnnStatus_t,
                     libraryPropertyType)

__all__ = ["cudnnCreate", "cudnnDestroy", "cudnnSetStream", "cudnnGetStream", "cudnnGetVersion",
           "cudnnGetMaxDeviceVersion", "cudnnGetCudartVersion", "cudnnGetProperty", "cudnnGetErrorString",
           "cudnnQueryRuntimeError", "cudnnOpsTrainVersionCheck", "cudnnOpsInferVersionCheck"]

NOT_INITIALIZED = cudnnStatus_t.CUDNN_STATUS_NOT_INITIALIZED


@api(None)
def cudnnCreate():
    """``handle, st = cudnnCreate()``. Needs ``acl.init()``; like the CUDA runtime, device 0 is made
    current when no device is set yet. The handle starts on the default stream."""
    if not state.initialized:
        raise CudnnFail(NOT_INITIALIZED, "the runtime is not initialised: call acl.init() (and "
                                         "acl.rt.set_device(id)) before cudnnCreate")
    if state.current_device() is None and acl.rt.set_device(0) != 0:
        raise CudnnFail(NOT_INITIALIZED, "no device could be made current (acl.rt.set_device(0) failed)")
    return cudnnContext(), SUCCESS


@api()
def cudnnDestroy(handle):
    """Releases the handle's scratch memory (after the work queued on it)."""
    handle_of(handle).release()
    return SUCCESS


@api()
def cudnnSetStream(handle, streamId):
    """Later calls on ``handle`` are enqueued on acl stream ``streamId`` (None or 0: the default stream)."""
    h = handle_of(handle)
    _, st = resolve_stream("cudnnSetStream", streamId)
    if st:
        bad(f"streamId {streamId!r} is not a live acl stream")
    h.stream = None if streamId is None or as_int(streamId) == 0 else streamId
    return SUCCESS


@api(None)
def cudnnGetStream(handle):
    """``stream, st``: the handle's acl stream (None = the default stream)."""
    return handle_of(handle).stream, SUCCESS


def cudnnGetVersion():
    """8907: the cuDNN version this face follows (cudnn_version.h's CUDNN_VERSION)."""
    return CUDNN_VERSION


def cudnnGetMaxDeviceVersion():
    return CUDNN_MAX_DEVICE_VERSION


def cudnnGetCudartVersion():
    """The CUDA runtime version CuPy runs on (e.g. 12080); 0 on the host emulator."""
    try:
        import cupy
        return int(cupy.cuda.runtime.runtimeGetVersion())
    except Exception:
        return 0


@api(None)
def cudnnGetProperty(type):          # noqa: A002  (the header's parameter name)
    """``value, st`` for MAJOR_VERSION / MINOR_VERSION / PATCH_LEVEL."""
    t = enum_arg(type, libraryPropertyType, "type")
    return {0: CUDNN_MAJOR, 1: CUDNN_MINOR, 2: CUDNN_PATCHLEVEL}[int(t)], SUCCESS


def cudnnGetErrorString(status):
    """cuDNN's string for a status: its enumerator name; ``CUDNN_UNKNOWN_STATUS`` otherwise."""
    try:
        return cudnnStatus_t(int(status)).name
    except (TypeError, ValueError, OverflowError):
        return "CUDNN_UNKNOWN_STATUS"


@api(None)
def cudnnQueryRuntimeError(handle, mode, tag=None):
    """``rstatus, st``: the face records no asynchronous numerical errors (SPATIAL_PERSISTENT runs the
    same kernels as SPATIAL), so ``rstatus`` is SUCCESS; BLOCKING waits for the handle's stream first.
    ``tag`` must be NULL (as in cuDNN 8)."""
    h = handle_of(handle)
    m = enum_arg(mode, cudnnErrQueryMode_t, "mode")
    if tag is not None:
        bad("tag must be NULL")
    if m == cudnnErrQueryMode_t.CUDNN_ERRQUERY_BLOCKING:
        acl.rt.synchronize_stream(h.stream)
    return SUCCESS, SUCCESS


def _version_check(lib: tuple[int, int, int]):
    if lib != (CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL):
        return cudnnStatus_t.CUDNN_STATUS_VERSION_MISMATCH
    return SUCCESS


def cudnnOpsTrainVersionCheck():
    """SUCCESS when ops_train's version equals the library's (8.9.7), else VERSION_MISMATCH."""
    return _version_check((CUDNN_OPS_TRAIN_MAJOR, CUDNN_OPS_TRAIN_MINOR, CUDNN_OPS_TRAIN_PATCH))


def cudnnOpsInferVersionCheck():
    return _version_check((CUDNN_OPS_INFER_MAJOR, CUDNN_OPS_INFER_MINOR, CUDNN_OPS_INFER_PATCH))
