"""Host CUDA emulator: the project's CUDA C++ kernels compiled by g++ and run on the CPU.

``compile_module(code, options=..., name_expressions=...)`` mirrors CuPy's ``RawModule``;
``module.get_function(name).launch(grid, block, params, shared_mem)`` mirrors ``cuLaunchKernel``
(``params`` are the raw bytes of each argument). See ``compiler.py`` and ``include/cuda_emu.h``.
"""

from .compiler import (
    CompileException,
    GlobalPointer,
    cooperative_max_blocks,
    set_allocation_resolver,
    set_bounds_check,
    set_watchdog,
    watchdog_seconds,
    EmulatorError,
    Function,
    KernelError,
    Module,
    cache_dir,
    compile_log,
    compile_module,
    compiler_info,
)

__all__ = [
    "CompileException",
    "GlobalPointer",
    "cooperative_max_blocks",
    "set_allocation_resolver",
    "set_bounds_check",
    "set_watchdog",
    "watchdog_seconds",
    "EmulatorError",
    "Function",
    "KernelError",
    "Module",
    "cache_dir",
    "compile_log",
    "compile_module",
    "compiler_info",
]
