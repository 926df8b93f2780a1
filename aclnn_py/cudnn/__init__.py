"""``aclnn_py.cudnn`` — the cuDNN 8.9.7 ops-train face (and the ops_infer functions that build its inputs).

cuDNN's names verbatim; C argument order and the header's parameter names; a C output pointer is
not an argument but a returned value (values first, the status last: ``handle, st = cudnnCreate()``);
device pointers are ints (``acl.rt.malloc``), None is NULL; alpha/beta are Python numbers and every
result is blended ``dst = alpha·result + beta·dst`` (beta == 0: dst is not used). Statuses follow
cuDNN's Returns lists; a failed call writes nothing and ``acl.get_recent_err_msg()`` says why.
Every compute call is phase 1 + phase 2 of aclnn-py ops, enqueued on the handle's stream.

Each module of this package is one area (handle, tensors, batch_norm, ...); its ``__all__`` is the
public surface, collected here, with every enum member as a module constant.
"""
import importlib as _importlib
import pkgutil as _pkgutil

from ._enums import *  # noqa: F401,F403  the IntEnums and #define constants
from ._enums import CONSTANTS as _CONSTANTS, ENUMS as _ENUMS

globals().update(_CONSTANTS)
__all__ = [e.__name__ for e in _ENUMS] + list(_CONSTANTS) + [
    n for n in dir(_importlib.import_module(f"{__name__}._enums")) if n.startswith("CUDNN_") and n.isupper()]
for _m in _pkgutil.iter_modules(__path__):
    if not _m.name.startswith("_"):
        _mod = _importlib.import_module(f"{__name__}.{_m.name}")
        for _n in _mod.__all__:
            globals()[_n] = getattr(_mod, _n)
        __all__ += list(_mod.__all__)
__all__ = sorted(set(__all__))
