"""Where the data files live: inside the installed wheel (``aclnn_py/_data``) or in a source checkout."""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_DATA = PACKAGE_DIR / "_data"
_CHECKOUT = PACKAGE_DIR.parent


def _find(name: str) -> Path:
    for base in (_DATA, _CHECKOUT):
        p = base / name
        if p.is_dir():
            return p
    raise FileNotFoundError(f"aclnn_py data folder {name!r} not found under {_DATA} or {_CHECKOUT}")


def kernels_dir() -> Path:
    return _find("kernels")


def kernels_include_dir() -> Path:
    return kernels_dir() / "include"


def status_codes_dir() -> Path:
    return _find("status_codes")


def samples_dir() -> Path:
    return _find("samples")


def emulator_include_dir() -> Path:
    return PACKAGE_DIR / "emulator" / "include"
