"""aclnn-py: an Ascend-style (CANN aclnn) two-phase operator runtime for cuDNN 8 ops-train.

Every op is a pair::

    workspace_size, executor, ret = aclnnXxxGetWorkspaceSize(<inputs>, <attrs>, <outputs>)
    ret = aclnnXxx(workspace, workspace_size, executor, stream)

The kernels are CUDA C (``kernels/``), run by CuPy on NVIDIA GPUs and by the host emulator
(the same sources compiled by g++) everywhere else.
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import acl
from .dtypes import aclDataType, aclFormat
from .errors import get_recent_err_msg
from .raw import RawKernel, RawModule
from .status import AclError, AclnnError, AclnnStatus, CudnnStatus, check
from .tensor import *  # noqa: F401,F403  the meta API
from .tensor import __all__ as _tensor_all
from .executor import (aclDestroyAclOpExecutor, aclSetAclOpExecutorRepeatable, aclSetInputTensorAddr,
                       aclSetOutputTensorAddr, aclSetTensorAddr, aclOpExecutor)
from .ops import *  # noqa: F401,F403  every aclnnXxxGetWorkspaceSize / aclnnXxx pair
from .ops import __all__ as _ops_all

# enum members at top level, as C users write them: ACL_FLOAT, ACL_FORMAT_NCHW, ACLNN_SUCCESS ...
globals().update({m.name: m for e in (aclDataType, aclFormat, AclnnStatus, AclError) for m in e})

__all__ = ["acl", "aclDataType", "aclFormat", "get_recent_err_msg", "RawKernel", "RawModule", "AclError",
           "AclnnError", "AclnnStatus", "CudnnStatus", "check", "aclOpExecutor", "aclSetAclOpExecutorRepeatable",
           "aclDestroyAclOpExecutor", "aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr",
           *_tensor_all, *_ops_all]
