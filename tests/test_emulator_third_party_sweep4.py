"""Fourth realism sweep: more public CUDA kernels (tests/third_party_kernels/, origins in its README) run
unchanged through aclnn_py.RawModule on the emulator, each result checked against NumPy. A kernel the
emulator cannot run must fail with a clear error; one that runs must give the right numbers."""
from __future__ import annotations

import io
import statistics
import warnings
from pathlib import Path

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.emulator import CompileException
from aclnn_py.status import AclError
from harness import sync_ok as ok  # the device synchronises without an error

DIR = Path(__file__).parent / "third_party_kernels"
pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator run")


def src(name):
    return (DIR / name).read_text()


def _cd(a, b):
    return (a + b - 1) // b


def bf16_bits(x):
    """float32 -> bfloat16 bit patterns, round to nearest even (as __float2bfloat16 / a (bf16) cast does)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def bf16_val(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16(x):
    """x rounded to bfloat16, as float32."""
    return bf16_val(bf16_bits(x))


def assert_bf16_close(got_bits, want, ulps=1, atol=0.0, err_msg=""):
    """bf16 results within `ulps` units in the last place (2^-8 relative) of a float64/float32 reference."""
    got = bf16_val(got_bits).astype(np.float64)
    want = np.asarray(want, np.float64)
    tol = ulps * np.abs(want) * 2.0 ** -7 + atol
    bad = np.abs(got - want) > tol
    assert not bad.any(), (f"{err_msg}: {bad.sum()} of {bad.size} off, first at {np.argwhere(bad)[0]}: "
                           f"{got[bad][:5]} vs {want[bad][:5]}")


# ---------------------------------------------------------------- cupy/cupy tests/cupy_tests/core_tests/test_raw.py

CUPY = "cupy_test_raw/"


def _cupy_helper(d, kernel, dtype):
    """TestRaw._helper: x1 = arange(100), x2 = ones, grid (10,), block (10,), N ** 2 = 100 (a Python int)."""
    n = 10
    x1 = np.arange(n * n, dtype=dtype)
    x2 = np.ones(n * n, dtype=dtype)
    py = d.zeros(n * n, dtype)
    kernel((n,), (n,), (d.up(x1), d.up(x2), py, n ** 2))
    ok()
    return x1, x2, d.down(py, n * n, dtype)


def test_cupy_raw_kernel_and_module(d):
    """test_basic / test_module / test_compiler_flag: _test_source1 as a RawKernel, _test_source2's two kernels in one
    module, _test_source3 with -DPRECISION=2 (double)."""
    x1, x2, y = _cupy_helper(d, A.RawKernel(src(CUPY + "test_source1.cu"), "test_sum"), np.float32)
    np.testing.assert_array_equal(y, x1 + x2)
    mod2 = A.RawModule(code=src(CUPY + "test_source2.cu"))
    x1, x2, y = _cupy_helper(d, mod2.get_function("test_sum"), np.float32)
    np.testing.assert_array_equal(y, x1 + x2)
    x1, x2, y = _cupy_helper(d, mod2.get_function("test_multiply"), np.float32)
    np.testing.assert_array_equal(y, x1 * x2)
    mod3 = A.RawModule(code=src(CUPY + "test_source3.cu"), options=("-DPRECISION=2",))
    x1, x2, y = _cupy_helper(d, mod3.get_function("test_sum"), np.float64)
    np.testing.assert_array_equal(y, x1 + x2)
    x1, x2, y = _cupy_helper(d, mod3.get_function("test_multiply"), np.float64)
    np.testing.assert_array_equal(y, x1 * x2)


def test_cupy_raw_invalid_compiler_flag():
    """test_invalid_compiler_flag: -DPRECISION=3 reaches the source's #error: a CompileException with its text."""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src(CUPY + "test_source3.cu"), options=("-DPRECISION=3",)).get_function("test_sum")
    assert "precision not supported" in str(e.value), str(e.value)


def test_cupy_raw_dynamic_parallelism_is_a_clear_compile_error():
    """_test_source4 launches test_kernel_inner<<<1, inner_blk>>> from device code: with or without -dc, a
    CompileException saying dynamic parallelism is not supported (CuPy's test without -dc expects a CompileException
    too)."""
    for opts in ((), ("-dc",)):
        with pytest.raises(CompileException) as e:
            A.RawKernel(src(CUPY + "test_source4.cu"), "test_kernel", options=opts).compile()
        assert "dynamic parallelism" in str(e.value), str(e.value)


def test_cupy_raw_compile_kernel_and_module_log(d):
    """test_compile_kernel / test_compile_module: _test_compile_src with -DOP=+ compiled with a log_stream, which gets
    the warning about the unused `int j;` as NVRTC writes one; then the kernel adds."""
    kern = A.RawKernel(src(CUPY + "test_compile_src.cu"), "test_op", options=("-DOP=+",))
    log = io.StringIO()
    kern.compile(log_stream=log)
    assert "warning" in log.getvalue(), log.getvalue()
    x1, x2, y = _cupy_helper(d, kern, np.float32)
    np.testing.assert_array_equal(y, x1 + x2)
    mod = A.RawModule(code=src(CUPY + "test_compile_src.cu"), options=("-DOP=*",))
    log = io.StringIO()
    mod.compile(log_stream=log)
    assert "warning" in log.getvalue() and "j" in log.getvalue(), log.getvalue()
    x1, x2, y = _cupy_helper(d, mod.get_function("test_op"), np.float32)
    np.testing.assert_array_equal(y, x1 * x2)


def test_cupy_raw_div_and_raw_pointer(d):
    """_test_source5's test_div (float / (float + 1.0), a double division rounded to float) and test_cast's my_func
    taking void* (test_raw_pointer: 3.0 * 1 - 8.0 = -5)."""
    x1, x2, y = _cupy_helper(d, A.RawModule(code=src(CUPY + "test_source5.cu")).get_function("test_div"), np.float32)
    np.testing.assert_array_equal(y, (x1.astype(np.float64) / (x2.astype(np.float64) + 1.0)).astype(np.float32))
    p = d.up(np.ones(100))
    A.RawModule(code=src(CUPY + "test_cast.cu")).get_function("my_func")((1,), (100,), (p, 100))
    ok()
    np.testing.assert_array_equal(d.down(p, 100, np.float64), np.full(100, -5.0))


def test_cupy_raw_const_memory(d):
    """test_const_memory: __constant__ float some_array[100] set with get_global, multiply_by_const<<<1, 100>>>."""
    mod = A.RawModule(code=src(CUPY + "test_const_mem.cu"))
    ker = mod.get_function("multiply_by_const")
    data = np.arange(100, dtype=np.float32) * np.float32(0.5)
    mod.get_global("some_array").copy_from_host(data.ctypes.data, data.nbytes)
    p = d.up(np.full(100, 3, np.float32))
    ker((1,), (100,), (p, np.int32(100)))
    ok()
    np.testing.assert_array_equal(d.down(p, 100, np.float32), data * 3)


def test_cupy_raw_cucomplex_without_translation_is_nvrtcs_compile_error():
    """_test_cuComplex without translate_cucomplex: test_addf_scalar passes cuComplex values to the double cuCadd, which
    NVRTC / nvcc reject too (no conversion from float2 to double2); CuPy's tests always translate."""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src(CUPY + "test_cuComplex.cu")).get_function("test_add")
    msg = str(e.value)
    assert "test_addf_scalar" in msg and "cuDoubleComplex" in msg, msg


def test_cupy_raw_cucomplex_translated_needs_cupy():
    """test_cuFloatComplex / test_cuDoubleComplex: translate_cucomplex=True swaps <cuComplex.h> for CuPy's bridge onto
    <cupy/complex.cuh>; CuPy is not installed: a CompileException saying to install it."""
    pytest.importorskip("numpy")
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed")
    except ImportError:
        pass
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src(CUPY + "test_cuComplex.cu"), translate_cucomplex=True).get_function("test_add")
    msg = str(e.value)
    assert "cupy/complex.cuh" in msg and "install CuPy" in msg, msg


def test_cupy_raw_cxx_template_needs_cupy():
    """test_template_specialization: test_cxx_template includes <cupy/complex.cuh>; without CuPy a CompileException
    saying to install it (before any name expression is looked at)."""
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed")
    except ImportError:
        pass
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src(CUPY + "test_cxx_template.cu"),
                    name_expressions=["my_sqrt<int>", "my_sqrt<float>", "my_sqrt<complex<double>>", "my_func"]
                    ).get_function("my_func")
    assert "install CuPy" in str(e.value), str(e.value)


@pytest.mark.parametrize("n,block", [(10, 64), (10, 256), (100, 64), (100, 256), (1000, 256)])
def test_cupy_raw_grid_sync(d, n, block):
    """TestRawGridSync: _test_grid_sync as a cooperative RawKernel, grid (n * n + block - 1) // block; 1000 x 1000 is
    over the emulator's cooperative limit: reduced with CuPy's warning, the grid-stride loops still cover it."""
    kern = A.RawKernel(src(CUPY + "test_grid_sync.cu"), "test_grid_sync", enable_cooperative_groups=True)
    x1 = np.arange(n * n, dtype=np.float32)
    x2 = np.ones(n * n, np.float32)
    py = d.zeros(n * n, np.float32)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kern((_cd(n * n, block),), (block,), (d.up(x1), d.up(x2), py, np.int32(n * n)))
    ok()
    assert any("grid size will be reduced" in str(x.message) for x in w) == (n == 1000)
    np.testing.assert_array_equal(d.down(py, n * n, np.float32), x1 + x2)


NAME_EXPRS = ["multi_param<float, double>", "multi_param<float,double>", "ptr_param<float *>", "ptr_param<float*>",
              "non_type_param<float, (int)3>", "non_type_param<float, 3>", "ptr_param<unsigned long>",
              "ptr_param<size_t>", "enum_param<(mylib::Tag)1>", "enum_param<mylib::Tag::B>"]


def test_cupy_raw_name_expression_spellings(d):
    """TestRawNameExpressionCache: every spelling of _test_name_expr_cache's templates (spaces, casts, size_t, an enum
    class value) is found by the name it was given; a kernel not named is 'named symbol not found'."""
    for ne in NAME_EXPRS:
        mod = A.RawModule(code=src(CUPY + "test_name_expr_cache.cu"), name_expressions=[ne], options=("-std=c++17",))
        f = mod.get_function(ne)
        f((1,), (1,), (np.uint64(0),) if ne.startswith("ptr_param") else ())
        ok()
    mod = A.RawModule(code=src(CUPY + "test_bare_cubin_cache.cu"), name_expressions=["bare_cubin_probe<float, double>"],
                      options=("-std=c++17",))
    mod.get_function("bare_cubin_probe<float, double>")((1,), (1,), ())
    ok()
    mod = A.RawModule(code=src(CUPY + "test_name_expr_cache.cu"), name_expressions=["ptr_param<float>"])
    with pytest.raises(Exception, match="named symbol not found"):
        mod.get_function("ptr_param<double>")


@pytest.mark.parametrize("jitify", [False, True])
def test_cupy_raw_std_code(d, jitify):
    """TestRawJitify._helper2: std_code's shift<int> (std::enable_if from <type_traits>), name expression, 256 threads.
    NVRTC without Jitify cannot open <type_traits>; the emulator's g++ can (more lenient, same numbers)."""
    mod = A.RawModule(code=src(CUPY + "std_code.cu"), jitify=jitify, name_expressions=("shift<int>",))
    a = np.random.default_rng(400).integers(0, 8, 256).astype(np.int32)
    p = d.up(a)
    mod.get_function("shift<int>")((1,), (256,), (p, 256))
    ok()
    np.testing.assert_array_equal(d.down(p, 256, np.int32), a + 100)
