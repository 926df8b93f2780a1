"""One module per op family; importing this package registers every op."""
from .batch_norm import *  # noqa: F401,F403
from .batch_norm import __all__ as _bn

__all__ = [*_bn]
