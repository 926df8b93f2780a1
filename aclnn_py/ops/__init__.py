"""One module per op family; importing this package imports every family module, which registers its ops.

The public names are derived from the registry (``aclnn_py.opdef.EXPORTS``): every generated
``aclnnXxxGetWorkspaceSize`` / ``aclnnXxx`` pair and each ``@export``-ed hand-written API.
"""
import importlib as _importlib
import pkgutil as _pkgutil

from ..opdef import EXPORTS as _EXPORTS

for _m in _pkgutil.iter_modules(__path__):
    if not _m.name.startswith("_"):
        _importlib.import_module(f"{__name__}.{_m.name}")

globals().update(_EXPORTS)
__all__ = list(_EXPORTS)
