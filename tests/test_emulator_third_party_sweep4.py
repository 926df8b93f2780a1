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


# ---------------------------------------------------------------- karpathy/llm.c @ f1e2ace6 dev/cuda

LLMC = ("-I", str(DIR / "llmc"))


def _llmc(name):
    return A.RawModule(code=src(name), options=LLMC)


@pytest.mark.parametrize("block", [32, 128])
def test_llmc_encoder_forward(d, block):
    """encoder_forward.cu (floatX = bf16): kernels 1 (a thread per (b, t)), 2 (per (b, t, c)) and 3 (x128: 8 bf16 per
    thread, load128cs / store128) as the launchers size them, B = 2, T = 16, C = 64, V = 50; the sum of two bf16
    rounded once to bf16 (exact reference)."""
    mod = _llmc("llmc_encoder_forward.cu")
    rng = np.random.default_rng(410)
    B, T, C, V = 2, 16, 64, 50
    inp = rng.integers(0, V, (B, T)).astype(np.int32)
    wte = bf16_bits(rng.standard_normal((V, C), dtype=np.float32))
    wpe = bf16_bits(rng.standard_normal((T, C), dtype=np.float32))
    want = bf16_bits(bf16_val(wte)[inp] + bf16_val(wpe)[None])
    args = lambda po: (po, d.up(inp), d.up(wte), d.up(wpe), np.int32(B), np.int32(T), np.int32(C))
    for k, grid in ((1, _cd(B * T, block)), (2, _cd(B * T * C, block)), (3, _cd(B * T * C, block * 8))):
        po = d.up(np.full(B * T * C, 0xFFFF, np.uint16))
        mod.get_function(f"encoder_forward_kernel{k}")((grid,), (block,), args(po))
        ok()
        np.testing.assert_array_equal(d.down(po, B * T * C, np.uint16).reshape(B, T, C), want, err_msg=f"kernel{k}")


def test_llmc_encoder_backward(d):
    """encoder_backward.cu (float): kernel1 (float atomicAdd into dwte / dwpe, block 256) and kernel2 (a thread per
    channel looping over B * T); B = 4, T = 32, C = 96, V = 20 with many repeated tokens. dout holds multiples of 1/8
    below 2^10: every order of the sums is exact."""
    mod = _llmc("llmc_encoder_backward.cu")
    rng = np.random.default_rng(411)
    B, T, C, V = 4, 32, 96, 20
    inp = rng.integers(0, V, (B, T)).astype(np.int32)
    dout = (rng.integers(-64, 64, (B, T, C)) / 8).astype(np.float32)
    want_te = np.zeros((V, C), np.float64)
    np.add.at(want_te, inp.ravel(), dout.reshape(B * T, C))
    want_pe = dout.sum(0)
    for k, block, grid in ((1, 256, _cd(B * T * C, 256)), (2, 32, _cd(C, 32))):
        pte, ppe = d.zeros(V * C, np.float32), d.zeros(T * C, np.float32)
        mod.get_function(f"encoder_backward_kernel{k}")((grid,), (block,), (pte, ppe, d.up(dout), d.up(inp), np.int32(B),
                                                                             np.int32(T), np.int32(C)))
        ok()
        np.testing.assert_array_equal(d.down(pte, V * C, np.float32).reshape(V, C), want_te, err_msg=f"kernel{k}")
        np.testing.assert_array_equal(d.down(ppe, T * C, np.float32).reshape(T, C), want_pe, err_msg=f"kernel{k}")


def _gelu32(x):
    """gelu_forward's float arithmetic in float32, in its order (GELU_SCALING_FACTOR = sqrtf(2.0f / M_PI))."""
    f = np.float32
    s = f(np.sqrt(np.float64(f(2.0 / np.pi))))
    cube = f(0.044715) * x * x * x
    return f(0.5) * x * (f(1.0) + np.tanh(s * (x + cube)))


def test_llmc_gelu_forward(d):
    """gelu_forward.cu (bf16): kernel1 (one element per thread) and kernel2 (x128, 8 per thread), block 128, N = 8192;
    the float tanh-GELU of bf16 inputs rounded to bf16: within one bf16 ulp of the float32 replay (tanhf may differ
    in its last float bit)."""
    mod = _llmc("llmc_gelu_forward.cu")
    rng = np.random.default_rng(412)
    n = 8192
    x = bf16_bits(rng.standard_normal(n, dtype=np.float32) * 3)
    want = _gelu32(bf16_val(x))
    for k, grid in ((1, _cd(n, 128)), (2, _cd(n, 128 * 8))):
        po = d.up(np.full(n, 0xFFFF, np.uint16))
        mod.get_function(f"gelu_forward_kernel{k}")((grid,), (128,), (po, d.up(x), np.int32(n)))
        ok()
        got = d.down(po, n, np.uint16)
        assert_bf16_close(got, want, atol=2e-6, err_msg=f"kernel{k}")   # (1 + tanh cancels for x < -4)


def test_llmc_gelu_backward(d):
    """gelu_backward.cu (bf16): gelu_backward1 / gelu_backward2 (x128), block 256, N = 8192: local gradient (tanhf,
    coshf) times dout, rounded to bf16; reference in float64 from the same bf16 inputs, within one bf16 ulp."""
    mod = _llmc("llmc_gelu_backward.cu")
    rng = np.random.default_rng(413)
    n = 8192
    x = bf16_bits(rng.standard_normal(n, dtype=np.float32) * 2)
    dy = bf16_bits(rng.standard_normal(n, dtype=np.float32))
    xv = bf16_val(x).astype(np.float64)
    s = np.sqrt(np.float64(np.float32(2.0 / np.pi)))
    a = s * (xv + 0.044715 * xv ** 3)
    grad = 0.5 * (1 + np.tanh(a)) + xv * 0.5 / np.cosh(a) ** 2 * s * (1 + 3 * 0.044715 * xv * xv)
    want = grad * bf16_val(dy)
    for name, grid in (("gelu_backward1", _cd(n, 256)), ("gelu_backward2", _cd(n, 256 * 8))):
        po = d.up(np.full(n, 0xFFFF, np.uint16))
        mod.get_function(name)((grid,), (256,), (po, d.up(x), d.up(dy), np.int32(n)))
        ok()
        assert_bf16_close(d.down(po, n, np.uint16), want, atol=1e-6, err_msg=name)


def test_llmc_residual_forward(d):
    """residual_forward.cu (bf16): kernel1 and kernel2 (x128), block 512, N = 3 * 4096: bf16 + bf16 in float, rounded
    to bf16 (exact reference)."""
    mod = _llmc("llmc_residual_forward.cu")
    rng = np.random.default_rng(414)
    n = 3 * 4096
    a, b = (bf16_bits(rng.standard_normal(n, dtype=np.float32)) for _ in range(2))
    want = bf16_bits(bf16_val(a) + bf16_val(b))
    for k, grid in ((1, _cd(n, 512)), (2, _cd(n, 512 * 8))):
        po = d.up(np.full(n, 0xFFFF, np.uint16))
        mod.get_function(f"residual_forward_kernel{k}")((grid,), (512,), (po, d.up(a), d.up(b), np.int32(n)))
        ok()
        np.testing.assert_array_equal(d.down(po, n, np.uint16), want, err_msg=f"kernel{k}")


def test_llmc_crossentropy_forward_and_softmax_backward(d):
    """crossentropy_forward.cu kernel1 (-logf(probs[target])) and crossentropy_softmax_backward.cu kernel1
    (dlogits += (p - [v == target]) * dloss), B = 4, T = 8, V = 100, block 128."""
    rng = np.random.default_rng(415)
    B, T, V = 4, 8, 100
    logits = rng.standard_normal((B, T, V))
    probs = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).astype(np.float32)
    tgt = rng.integers(0, V, (B, T)).astype(np.int32)
    pl = d.up(np.full(B * T, np.nan, np.float32))
    _llmc("llmc_crossentropy_forward.cu").get_function("crossentropy_forward_kernel1")(
        (_cd(B * T, 128),), (128,), (pl, d.up(probs), d.up(tgt), np.int32(B), np.int32(T), np.int32(V)))
    ok()
    want = -np.log(np.take_along_axis(probs, tgt[..., None], -1)[..., 0].astype(np.float64))
    np.testing.assert_allclose(d.down(pl, B * T, np.float32).reshape(B, T), want, rtol=2e-7, atol=0)
    dloss = rng.standard_normal((B, T)).astype(np.float32)
    dl0 = rng.standard_normal((B, T, V)).astype(np.float32)
    pd = d.up(dl0)
    _llmc("llmc_crossentropy_softmax_backward.cu").get_function("crossentropy_softmax_backward_kernel1")(
        (_cd(B * T * V, 128),), (128,), (pd, d.up(dloss), d.up(probs), d.up(tgt), np.int32(B), np.int32(T), np.int32(V)))
    ok()
    ind = (np.arange(V) == tgt[..., None]).astype(np.float32)
    np.testing.assert_array_equal(d.down(pd, B * T * V, np.float32).reshape(B, T, V),
                                  dl0 + (probs - ind) * dloss[..., None])


def _ln_ref(x, w, b):
    x = x.astype(np.float64)
    m = x.mean(-1)
    v = ((x - m[..., None]) ** 2).mean(-1)
    s = 1 / np.sqrt(v + 1e-5)
    return (x - m[..., None]) * s[..., None] * w + b, m, s


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_llmc_layernorm_forward(d, k):
    """layernorm_forward.cu (float) kernels 1..6 launched as layernorm_forwardK does with block_size 128 (kernel 2:
    mean_kernel and rstd_kernel <<<N, 128, 128 * 4>>> then normalization_kernel; 3/4: a warp per row with cg::reduce;
    5: a block per row; 6: dim3(32, 4) with (2 + 4) * C floats of dynamic shared memory), B = 4, T = 24, C = 192."""
    mod = A.RawModule(code=src("llmc_layernorm_forward.cu"), options=LLMC)
    rng = np.random.default_rng(416 + k)
    B, T, C, bs = 4, 24, 192, 128
    N = B * T
    x = (rng.standard_normal((N, C)) * 2 + 0.5).astype(np.float32)
    w, bias = rng.standard_normal(C).astype(np.float32), rng.standard_normal(C).astype(np.float32)
    po, pm, pr = (d.up(np.full(n, np.nan, np.float32)) for n in (N * C, N, N))
    px, pw, pb = d.up(x), d.up(w), d.up(bias)
    args = (po, pm, pr, px, pw, pb, np.int32(N), np.int32(C))
    if k == 1:
        mod.get_function("layernorm_forward_kernel1")((_cd(N, bs),), (bs,), args)
    elif k == 2:
        mod.get_function("mean_kernel")((N,), (bs,), (pm, px, np.int32(N), np.int32(C), np.int32(bs)), shared_mem=bs * 4)
        mod.get_function("rstd_kernel")((N,), (bs,), (pr, px, pm, np.int32(N), np.int32(C), np.int32(bs)),
                                        shared_mem=bs * 4)
        mod.get_function("normalization_kernel")((_cd(N * C, 256),), (256,), (po, px, pm, pr, pw, pb, np.int32(B),
                                                                              np.int32(T), np.int32(C)))
    elif k in (3, 4):
        mod.get_function(f"layernorm_forward_kernel{k}")((_cd(N * 32, bs),), (bs,), args)
    elif k == 5:
        mod.get_function("layernorm_forward_kernel5")((N,), (bs,), args)
    else:
        by = bs // 32
        mod.get_function("layernorm_forward_kernel6")((_cd(N, by),), (32, by), args, shared_mem=(2 + by) * C * 4)
    ok()
    want, m, s = _ln_ref(x, w, bias)
    np.testing.assert_allclose(d.down(pm, N, np.float32), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d.down(pr, N, np.float32), s, rtol=1e-5)
    np.testing.assert_allclose(d.down(po, N * C, np.float32).reshape(N, C), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_llmc_fused_residual_forward(d, k):
    """fused_residual_forward.cu (bf16) versions 1..6 as fused_residual_forwardK launches them with block_size 256: 1 is
    residual_forward_kernel1 + layernorm_forward_kernel1; 2 a thread per row; 3/4/5 dim3(32, 8) (5 with (2 + 8) * C bf16
    of dynamic shared memory); 6 dim3(32, 1, 8) over a grid of 4 blocks (a grid-stride loop over rows, two
    __syncthreads per row). N = 256 rows of C = 256. Residual: bf16(a + b) exact; normed, mean, rstd (bf16): within one
    bf16 ulp of a float64 layer norm of that residual."""
    mod = _llmc("llmc_fused_residual_forward.cu")
    rng = np.random.default_rng(430 + k)
    N, C, bs = 256, 256, 256   # N a multiple of 256: versions 2..5 test `idx > N`, so idx == N would run past
    a, b = (bf16_bits(rng.standard_normal((N, C), dtype=np.float32) + 0.3) for _ in range(2))
    w = bf16_bits(rng.standard_normal(C, dtype=np.float32))
    bias = bf16_bits(rng.standard_normal(C, dtype=np.float32))
    bufs = [d.up(np.full(n, 0xFFFF, np.uint16)) for n in (N * C, N * C, N, N)]
    args = tuple(bufs) + (d.up(a), d.up(b), d.up(w), d.up(bias), np.int32(N), np.int32(C))
    if k == 1:
        mod.get_function("residual_forward_kernel1")((_cd(N * C, bs),), (bs,), (bufs[0], args[4], args[5], np.int32(N * C)))
        mod.get_function("layernorm_forward_kernel1")((_cd(N, bs),), (bs,), (bufs[1], bufs[2], bufs[3], bufs[0]) + args[6:])
    elif k == 2:
        mod.get_function("fused_residual_forward2")((_cd(N, bs),), (bs,), args)
    elif k == 3:
        mod.get_function("fused_residual_forward3")((_cd(N, 8),), (32, 8), args)
    elif k == 4:
        mod.get_function("fused_residual_forward_kernel4")((_cd(N, 8),), (32, 8), args)
    elif k == 5:
        mod.get_function("fused_residual_forward_kernel5")((_cd(N, 8),), (32, 8), args, shared_mem=(2 + 8) * C * 2)
    else:
        wpt = max(1, C // 8 // 32)
        bz = max(1, (bs // 32) // wpt)
        by = max(1, (bs // 32) // bz)
        mod.get_function("fused_residual_forward_kernel6")((4,), (32, by, bz), args,
                                                           shared_mem=(2 + bz) * C * 2 + 64 * 4 * bz)
    ok()
    res = bf16_bits(bf16_val(a) + bf16_val(b))
    got = [d.down(p, n, np.uint16) for p, n in zip(bufs, (N * C, N * C, N, N))]
    np.testing.assert_array_equal(got[0].reshape(N, C), res)
    want, m, s = _ln_ref(bf16_val(res), bf16_val(w).astype(np.float64), bf16_val(bias).astype(np.float64))
    assert_bf16_close(got[2], m, atol=1e-3, err_msg="mean")
    assert_bf16_close(got[3], s, err_msg="rstd")
    assert_bf16_close(got[1].reshape(N, C), want, ulps=2, atol=2e-2, err_msg="normed")


def _attn_ref(inp, B, T, C, NH):
    """Causal self-attention of a (B, T, 3C) QKV input in float64: preatt (masked -inf), att, out (B, T, C)."""
    hs = C // NH
    x = inp.astype(np.float64).reshape(B, T, 3, NH, hs)
    q, k, v = (x[:, :, i].transpose(0, 2, 1, 3) for i in range(3))        # (B, NH, T, hs)
    pre = q @ k.transpose(0, 1, 3, 2) / np.sqrt(np.float32(hs))
    mask = np.tril(np.ones((T, T), bool))
    pre = np.where(mask, pre, -np.inf)
    att = np.exp(pre - pre.max(-1, keepdims=True))
    att /= att.sum(-1, keepdims=True)
    out = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    return pre, att, out, (q, k, v)


def test_llmc_attention_forward(d):
    """attention_forward.cu (float path): version 1 (attention_query_key_kernel1, attention_softmax_kernel1,
    attention_value_kernel1, block 256), version 2 (permute_kernel, the flash-attention attention_forward_kernel2
    <<<(B, NH), 32, sram>>> with its l / m scratch set as attention_forward2 does, unpermute_kernel), scale_kernel +
    softmax_forward_kernel4 <<<B*NH*T, 256, 2 * 256 / 32 * 4>>> and softmax_forward_kernel5 (online softmax, a warp per
    row, float4 loads) on the raw scores, and attention_forward_fused1 (a warp per query, cg::reduce; blocks of 4
    warps). B = 2, T = 64, C = 64, NH = 4; float64 reference."""
    mod = _llmc("llmc_attention_forward.cu")
    rng = np.random.default_rng(440)
    B, T, C, NH = 2, 64, 64, 4
    hs = C // NH
    inp = rng.standard_normal((B, T, 3 * C)).astype(np.float32)
    pre, att, out, (q, k, v) = _attn_ref(inp, B, T, C, NH)
    pin = d.up(inp)
    i32 = np.int32
    tol = dict(rtol=2e-5, atol=2e-6)
    # version 1
    ppre, patt, pout = d.zeros(B * NH * T * T, np.float32), d.zeros(B * NH * T * T, np.float32), d.zeros(B * T * C, np.float32)
    mod.get_function("attention_query_key_kernel1")((_cd(B * NH * T * T, 256),), (256,), (ppre, pin, i32(B), i32(T), i32(C), i32(NH)))
    mod.get_function("attention_softmax_kernel1")((_cd(B * T * NH, 256),), (256,), (patt, ppre, i32(B), i32(T), i32(NH)))
    mod.get_function("attention_value_kernel1")((_cd(B * T * NH, 256),), (256,), (pout, patt, pin, i32(B), i32(T), i32(C), i32(NH)))
    ok()
    got_pre = d.down(ppre, B * NH * T * T, np.float32).reshape(B, NH, T, T)
    np.testing.assert_allclose(got_pre, pre, **tol)
    np.testing.assert_allclose(d.down(patt, B * NH * T * T, np.float32).reshape(B, NH, T, T), att, **tol)
    np.testing.assert_allclose(d.down(pout, B * T * C, np.float32).reshape(B, T, C), out, **tol)
    # version 2: flash attention on (B, NH, T, hs) tensors
    pq, pk, pv = (d.zeros(B * T * C, np.float32) for _ in range(3))
    mod.get_function("permute_kernel")((_cd(B * T * C, 256),), (256,), (pq, pk, pv, pin, i32(B), i32(T), i32(NH), i32(hs)))
    ok()
    for p, want in ((pq, q), (pk, k), (pv, v)):
        np.testing.assert_array_equal(d.down(p, B * T * C, np.float32).reshape(B, NH, T, hs), want)
    Bc = Br = 32
    pl = d.zeros(B * NH * T, np.float32)
    pm = d.up(np.full(B * NH * T, 0xF0F0F0F0, np.uint32))          # cudaMemset(m, -10000.0f, ...): bytes 0xF0
    po = d.zeros(B * T * C, np.float32)
    sram = (2 * Bc * hs + Br * hs + Bc * Br) * 4
    mod.get_function("attention_forward_kernel2")((B, NH), (Br,), (pq, pk, pv, i32(T), i32(hs), i32(_cd(T, Bc)), i32(_cd(T, Br)),
                                                                   i32(Bc), i32(Br), np.float32(1.0 / np.sqrt(hs)), pl, pm, po),
                                                  shared_mem=sram)
    pu = d.zeros(B * T * C, np.float32)
    mod.get_function("unpermute_kernel")((_cd(B * T * C, 256),), (256,), (po, pu, i32(B), i32(T), i32(NH), i32(hs)))
    ok()
    np.testing.assert_allclose(d.down(pu, B * T * C, np.float32).reshape(B, T, C), out, rtol=1e-4, atol=1e-5)
    # scale_kernel + softmax_forward_kernel4, and softmax_forward_kernel5, on the raw scores q.k
    raw = (q @ k.transpose(0, 1, 3, 2)).astype(np.float32)
    scale = np.float32(1.0 / np.sqrt(np.float32(hs)))
    pr = d.up(raw)
    mod.get_function("scale_kernel")((_cd(B * NH * T * T, 256),), (256,), (pr, scale, i32(B), i32(NH), i32(T)))
    pa4 = d.zeros(B * NH * T * T, np.float32)
    mod.get_function("softmax_forward_kernel4")((B * NH * T,), (256,), (pa4, pr, i32(B * NH * T), i32(T)),
                                                shared_mem=2 * 256 // 32 * 4)
    pa5 = d.zeros(B * NH * T * T, np.float32)
    mod.get_function("softmax_forward_kernel5")((_cd(B * NH * T * 32, 256),), (256,), (pa5, scale, d.up(raw), i32(B * NH), i32(T)))
    ok()
    sraw = np.where(np.tril(np.ones((T, T), bool)), raw.astype(np.float64) * scale, -np.inf)
    want = np.exp(sraw - sraw.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(d.down(pa4, B * NH * T * T, np.float32).reshape(B, NH, T, T), want, **tol)
    np.testing.assert_allclose(d.down(pa5, B * NH * T * T, np.float32).reshape(B, NH, T, T), want, **tol)
    # attention_forward_fused1: a warp per (b, t, h), 4 warps per block
    ppre, patt, pout = (d.zeros(n, np.float32) for n in (B * NH * T * T, B * NH * T * T, B * T * C))
    mod.get_function("attention_forward_fused1")((_cd(T, 4), NH, B), (128,), (pout, ppre, patt, pin, i32(B), i32(T), i32(C), i32(NH)))
    ok()
    low = np.broadcast_to(np.tril(np.ones((T, T), bool)), (B, NH, T, T))
    np.testing.assert_allclose(d.down(ppre, B * NH * T * T, np.float32).reshape(B, NH, T, T)[low], pre[low], **tol)
    np.testing.assert_allclose(d.down(patt, B * NH * T * T, np.float32).reshape(B, NH, T, T)[low], att[low], **tol)
    np.testing.assert_allclose(d.down(pout, B * T * C, np.float32).reshape(B, T, C), out, **tol)


# ---------------------------------------------------------------- NVIDIA/cuda-samples @ c94ff366

def test_cs_matrix_mul_nvrtc(d):
    """matrixMul_nvrtc: the template matrixMulCUDA<BLOCK_SIZE> behind extern "C" matrixMulCUDA_block16 / _block32
    (cooperative_groups::sync), grid (wB / bs, hA / bs) as the sample launches it; products of small integers: exact."""
    mod = A.RawModule(code=src("cs_matrix_mul_nvrtc.cu"))
    rng = np.random.default_rng(450)
    for bs in (16, 32):
        hA, wA, wB = 2 * bs, 5 * bs, 3 * bs
        a = rng.integers(-8, 8, (hA, wA)).astype(np.float32)
        b = rng.integers(-8, 8, (wA, wB)).astype(np.float32)
        pc = d.up(np.full(hA * wB, np.nan, np.float32))
        mod.get_function(f"matrixMulCUDA_block{bs}")((wB // bs, hA // bs), (bs, bs),
                                                      (pc, d.up(a), d.up(b), np.int32(wA), np.int32(wB)))
        ok()
        np.testing.assert_array_equal(d.down(pc, hA * wB, np.float32).reshape(hA, wB), a @ b, err_msg=f"block {bs}")


def test_cs_vector_add_nvrtc_and_thread_migration(d):
    """vectorAdd_nvrtc (50000 elements, 256 per block) and threadMigration's kernelFunction (input[t] = 32 - t, one
    block of 32 as the sample's worker threads launch it)."""
    mod = A.RawModule(code=src("cs_vector_add_nvrtc.cu"))
    rng = np.random.default_rng(451)
    n = 50000
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    pc = d.zeros(n, np.float32)
    mod.get_function("vectorAdd")((_cd(n, 256),), (256,), (d.up(a), d.up(b), pc, np.int32(n)))
    ok()
    np.testing.assert_array_equal(d.down(pc, n, np.float32), a + b)
    p = d.up(np.full(32, -1, np.int32))
    A.RawModule(code=src("cs_thread_migration.cu")).get_function("kernelFunction")((1,), (32,), (p,))
    ok()
    np.testing.assert_array_equal(d.down(p, 32, np.int32), 32 - np.arange(32))


def test_cs_clock_nvrtc(d):
    """clock_nvrtc: extern "C" timedReduction<<<64, 256, 2 * 256 * 4>>> (clock_t timers): each block's minimum of the
    512 inputs, start and end stamps ordered."""
    mod = A.RawModule(code=src("cs_clock_nvrtc.cu"))
    rng = np.random.default_rng(452)
    nb, nt = 64, 256
    x = rng.random(2 * nt).astype(np.float32)
    po, pt = d.up(np.full(nb, np.nan, np.float32)), d.zeros(2 * nb, np.int64)
    mod.get_function("timedReduction")((nb,), (nt,), (d.up(x), po, pt), shared_mem=2 * nt * 4)
    ok()
    np.testing.assert_array_equal(d.down(po, nb, np.float32), np.full(nb, x.min()))
    t = d.down(pt, 2 * nb, np.int64)
    assert (t[nb:] >= t[:nb]).all(), t


def test_cs_inline_ptx_nvrtc(d):
    """inlinePTX_nvrtc: sequence_gpu (asm mov.u32 %laneid) over N = 1000, 256 per block: i % 32."""
    mod = A.RawModule(code=src("cs_inline_ptx_nvrtc.cu"))
    n = 1000
    p = d.up(np.full(n, -1, np.int32))
    mod.get_function("sequence_gpu")((_cd(n, 256),), (256,), (p, np.int32(n)))
    ok()
    np.testing.assert_array_equal(d.down(p, n, np.int32), np.arange(n) % 32)


def test_cs_simple_assert_nvrtc_is_reported(d):
    """simpleAssert_nvrtc: extern "C" testKernel<<<2, 32>>>(60): assert(gtid < N) fails in threads 60..63, reported at
    synchronize naming the assertion; with N = 64 it passes."""
    k = A.RawModule(code=src("cs_simple_assert_nvrtc.cu")).get_function("testKernel")
    k((2,), (32,), (np.int32(64),))
    ok()
    k((2,), (32,), (np.int32(60),))
    assert acl.rt.synchronize_device() == AclError.ACL_ERROR_RT_AICORE_EXCEPTION
    msg = acl.get_recent_err_msg()
    assert "gtid < N" in msg, msg
    k((2,), (32,), (np.int32(64),))
    ok()


def test_cs_binomial_options_nvrtc(d):
    """binomialOptions_nvrtc: its own (older) binomialOptionsKernel<<<optN, 128>>> (16 nodes per thread, an exchange
    through __shared__ call_exchange with two __syncthreads per step, __expf), the static __constant__ d_OptionData and
    __device__ d_CallValue read by name with get_global as the sample's cuModuleGetGlobal does; headers found with -I.
    Option data prepared as binomialOptions_gpu.cpp does; reference: the same tree in float64."""
    mod = A.RawModule(code=src("cs_binomial_options_nvrtc/binomialOptions_kernel.cu"),
                      options=("-I", str(DIR / "cs_binomial_options_nvrtc")))
    rng = np.random.default_rng(453)
    opt, steps = 5, 2048
    S, X, Tm = rng.uniform(5, 30, opt), rng.uniform(1, 100, opt), rng.uniform(0.25, 10, opt)
    S[:2], X[:2] = [30, 25], [20, 20]
    R, V = 0.06, 0.10
    dt = Tm / steps
    vDt = V * np.sqrt(dt)
    u, dn = np.exp(vDt), np.exp(-vDt)
    pu = (np.exp(R * dt) - dn) / (u - dn)
    Df = np.exp(-R * dt)
    rec = np.stack([S, X, vDt, pu * Df, (1 - pu) * Df], 1).astype(np.float32)
    k = mod.get_function("binomialOptionsKernel")
    mod.get_global("d_OptionData").copy_from_host(rec.ctypes.data, rec.nbytes)
    k((opt,), (128,), ())
    ok()
    out = np.empty(opt, np.float32)
    mod.get_global("d_CallValue").copy_to_host(out.ctypes.data, out.nbytes)
    r = rec.astype(np.float64)
    want = np.empty(opt)
    for i in range(opt):
        call = np.maximum(r[i, 0] * np.exp(r[i, 2] * (2.0 * np.arange(steps + 1) - steps)) - r[i, 1], 0)
        for _ in range(steps):
            call = r[i, 3] * call[1:] + r[i, 4] * call[:-1]
        want[i] = call[0]
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    assert (want > 1).sum() >= 2


def test_cs_quasirandom_generator_nvrtc(d):
    """quasirandomGenerator_nvrtc: extern "C" quasirandomGeneratorKernel<<<128, dim3(128, 3)>>> over the (non-static)
    __constant__ c_Table (set with get_global; random here) and inverseCNDKernel<<<128, 128>>> (Moro, __logf)."""
    mod = A.RawModule(code=src("cs_quasirandom_nvrtc/quasirandomGenerator_kernel.cu"),
                      options=("-I", str(DIR / "cs_quasirandom_nvrtc")))
    rng = np.random.default_rng(454)
    table = rng.integers(0, 2**31, (3, 31), dtype=np.uint32)
    mod.get_global("c_Table").copy_from_host(table.ctypes.data, table.nbytes)
    n, seed = 20000, (1 << 30) | 777
    po = d.zeros(3 * n, np.float32)
    mod.get_function("quasirandomGeneratorKernel")((128,), (128, 3), (po, np.uint32(seed), np.uint32(n)))
    ok()
    data = seed + np.arange(n, dtype=np.uint64)
    res = np.zeros((3, n), np.uint64)
    for bit in range(31):
        on = ((data >> np.uint64(bit)) & np.uint64(1)).astype(bool)
        res[:, on] ^= table[:, bit:bit + 1].astype(np.uint64)
    want = ((res + 1) & 0xFFFFFFFF).astype(np.float32) * np.float32(1.0 / np.float32(0x80000001))
    np.testing.assert_array_equal(d.down(po, 3 * n, np.float32).reshape(3, n), want)
    m = 4096
    pz = d.zeros(m, np.float32)
    mod.get_function("inverseCNDKernel")((128,), (128,), (pz, np.uint32(m)))
    ok()
    u = ((np.arange(m, dtype=np.uint64) + 1) * ((2**32 - 1) // (m + 1))).astype(np.uint32)
    nd = statistics.NormalDist()
    want = np.array([nd.inv_cdf(v) for v in (u.astype(np.float64) + 0.5) / 4294967295.0])
    np.testing.assert_allclose(d.down(pz, m, np.float32), want, rtol=1e-5, atol=1e-6)


def test_cs_ocean_fft_kernels(d):
    """oceanFFT_kernel.cu (its <cufft.h> include kept: the emulator provides cuFFT's types): generateSpectrumKernel
    (h0 mirrored, complex_exp of +-w t), updateHeightmapKernel(_y) (sign correction) and calculateSlopeKernel, 8x8
    blocks over a 64 x 64 mesh as the sample's wrappers launch them; float64 reference (cosf / sinf / sqrtf)."""
    mod = A.RawModule(code=src("cs_ocean_fft.cu"))
    rng = np.random.default_rng(455)
    W = H = 64
    inw = W + 1
    h0 = rng.standard_normal((H + 1, inw, 2)).astype(np.float32)
    t, patch = np.float32(1.7), np.float32(100.0)
    pht = d.zeros(W * H * 2, np.float32)
    grid = (W // 8, H // 8)
    mod.get_function("generateSpectrumKernel")(grid, (8, 8), (d.up(h0), pht, np.uint32(inw), np.uint32(W), np.uint32(H),
                                                              t, patch))
    ok()
    y, x = np.mgrid[0:H, 0:W]
    kx = (-W / 2.0 + x) * (2.0 * np.float32(np.pi) / patch)
    ky = (-W / 2.0 + y) * (2.0 * np.float32(np.pi) / patch)
    w = np.sqrt(9.81 * np.sqrt(kx * kx + ky * ky))
    hk = h0[y, x, 0] + 1j * h0[y, x, 1]
    hmk = h0[H - y, W - x, 0] - 1j * h0[H - y, W - x, 1]
    ht = hk * np.exp(1j * w * t) + hmk * np.exp(-1j * w * t)
    got = d.down(pht, W * H * 2, np.float32).reshape(H, W, 2)
    np.testing.assert_allclose(got[..., 0], ht.real, rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(got[..., 1], ht.imag, rtol=1e-4, atol=2e-5)
    sign = np.where((x + y) & 1, -1.0, 1.0).astype(np.float32)
    for name, comp in (("updateHeightmapKernel", 0), ("updateHeightmapKernel_y", 1)):
        ph = d.zeros(W * H, np.float32)
        mod.get_function(name)(grid, (8, 8), (ph, pht, np.uint32(W)))
        ok()
        np.testing.assert_array_equal(d.down(ph, W * H, np.float32).reshape(H, W), got[..., comp] * sign)
    hmap = rng.standard_normal((H, W)).astype(np.float32)
    ps = d.up(np.full(W * H * 2, np.nan, np.float32))
    mod.get_function("calculateSlopeKernel")(grid, (8, 8), (d.up(hmap), ps, np.uint32(W), np.uint32(H)))
    ok()
    want = np.zeros((H, W, 2), np.float32)
    want[1:-1, 1:-1, 0] = hmap[1:-1, 2:] - hmap[1:-1, :-2]
    want[1:-1, 1:-1, 1] = hmap[2:, 1:-1] - hmap[:-2, 1:-1]
    np.testing.assert_array_equal(d.down(ps, W * H * 2, np.float32).reshape(H, W, 2), want)


def test_cs_stereo_disparity_is_a_clear_compile_error():
    """stereoDisparity: its __usad4 (inline PTX vabsdiff4.u32.u32.u32.add) now compiles; the kernel reads both images
    with tex2D<unsigned int> on cudaTextureObject_t: the CompileException says textures are not supported."""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src("cs_stereo_disparity.cu")).get_function("stereoDisparityKernel")
    msg = str(e.value)
    assert "textures and surfaces" in msg and "vabsdiff4" not in msg, msg


def test_cs_simple_surface_write_is_a_clear_compile_error():
    """simpleSurfaceWrite: surfaceWriteKernel (surf2Dwrite on a cudaSurfaceObject_t) and transformKernel (tex2D):
    the CompileException says textures and surfaces are not supported."""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src("cs_simple_surface_write.cu")).get_function("surfaceWriteKernel")
    assert "textures and surfaces" in str(e.value), str(e.value)


def test_cs_hs_optical_flow_jacobi_and_add(d):
    """HSOpticalFlow: JacobiIteration<32, 6> (volatile __shared__ tiles with clamped halos loaded by the first two thread
    rows, cg::sync) as SolveForUpdate launches it, 100 x 50 image with stride iAlignUp(100) = 128, ten iterations
    ping-ponging (du, dv); AddKernel<<<iDivUp(n, 256), 256>>>. Replayed in float32 in the kernel's order: bit-exact."""
    mod = A.RawModule(code=src("cs_hs_optical_flow.cu"), name_expressions=["JacobiIteration<32, 6>"])
    rng = np.random.default_rng(456)
    w, h, s = 100, 50, 128
    f = np.float32
    Ix, Iy, Iz = (rng.standard_normal((h, s)).astype(f) for _ in range(3))
    du, dv = np.zeros((h, s), f), np.zeros((h, s), f)
    alpha = f(0.2)
    bufs = [d.up(du), d.up(dv), d.up(du), d.up(dv)]
    pix, piy, piz = d.up(Ix), d.up(Iy), d.up(Iz)
    k = mod.get_function("JacobiIteration<32, 6>")
    xs, ys = np.arange(w), np.arange(h)
    L, R = np.maximum(xs - 1, 0), np.minimum(xs + 1, w - 1)
    D, U = np.maximum(ys - 1, 0), np.minimum(ys + 1, h - 1)
    for it in range(10):
        a, b = (0, 2) if it % 2 == 0 else (2, 0)
        k((_cd(w, 32), _cd(h, 6)), (32, 6), (bufs[a], bufs[a + 1], pix, piy, piz, np.int32(w), np.int32(h), np.int32(s),
                                             alpha, bufs[b], bufs[b + 1]))
        u, v = du[:h, :w], dv[:h, :w]
        sumU = (u[:, L] + u[:, R] + u[U, :] + u[D, :]) * f(0.25)
        sumV = (v[:, L] + v[:, R] + v[U, :] + v[D, :]) * f(0.25)
        ix, iy, iz = Ix[:, :w], Iy[:, :w], Iz[:, :w]
        frac = (ix * sumU + iy * sumV + iz) / (ix * ix + iy * iy + alpha)
        du, dv = du.copy(), dv.copy()
        du[:, :w], dv[:, :w] = sumU - ix * frac, sumV - iy * frac
    ok()
    np.testing.assert_array_equal(d.down(bufs[0], h * s, f).reshape(h, s)[:, :w], du[:, :w])
    np.testing.assert_array_equal(d.down(bufs[1], h * s, f).reshape(h, s)[:, :w], dv[:, :w])
    n = h * s
    po = d.zeros(n, f)
    mod.get_function("AddKernel")((_cd(n, 256),), (256,), (pix, piy, np.int32(n), po))
    ok()
    np.testing.assert_array_equal(d.down(po, n, f).reshape(h, s), Ix + Iy)
