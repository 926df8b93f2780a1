"""Activation formulas stay accurate where naive ones lose everything: FLOAT results in the tails
(softplus, GELU, SiLU, sigmoid for large |x|, ELU near 0) within a relative error, not just the
op database's absolute tolerance; the broadcast kernel on shapes whose coalesced geometry varies."""
from __future__ import annotations

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py.opdef import OPS
from harness import call_op, release
from opdb.activation import SPECS, make, reference_of, scalar

SEED = 20261125

# op, attrs (None: defaults), x values (all results normal floats), max relative error
TAILS = [
    ("Softplus", None, [-80.0, -40.0, -17.0, -1e-3, 19.9], 2e-6),          # naive log(1 + e^x) is 0 at -80
    ("Softplus", {"beta": scalar(2.0), "threshold": scalar(100.0)}, [45.0, 49.0, -40.0], 2e-6),  # e^(βx) > FLT_MAX
    ("Gelu", None, [-10.0, -8.0, -5.0, -1e-4, 1e-4], 1e-5),                # naive ½x(1 + erf) is 0 at -10
    ("GeluV2", {"approximate": 1}, [-9.0, -6.0, -3.0, -1e-4], 2e-5),        # tanh form without 1 + tanh cancellation
    ("GeluV2", {"approximate": 0}, [-10.0, -7.5], 1e-5),
    ("Sigmoid", None, [-85.0, -60.0, -20.0, 20.0], 2e-6),
    ("Silu", None, [-87.0, -60.0, -1e-5, 1e-5], 2e-6),
    ("Mish", None, [-80.0, -30.0, -1e-5, 1e-5], 5e-6),
    ("Elu", None, [-1e-7, -1e-5, -1e-3], 2e-6),                            # naive e^x − 1 loses all digits at -1e-7
    ("Selu", None, [-1e-7, -1e-5], 2e-6),
    ("SiluBackward", None, [-80.0, -40.0, 30.0], 5e-6),
    ("GeluBackward", None, [-9.0, -6.0], 2e-5),
    ("GeluBackwardV2", {"approximate": "tanh"}, [-8.0, -5.0, 1e-4], 2e-5),
    ("SoftplusBackward", None, [-80.0, -40.0], 2e-6),
    ("MishBackward", None, [-60.0, -20.0], 1e-5),
    ("EluBackward", None, [-1e-6, -50.0], 2e-6),
]


@pytest.mark.parametrize("name,attrs,xs,rtol", TAILS, ids=[f"{t[0]}-{i}" for i, t in enumerate(TAILS)])
def test_tail_relative_accuracy(name, attrs, xs, rtol):
    rng = np.random.default_rng(SEED)
    x = np.asarray(xs, np.float64)
    at = SPECS[name]["attrs"]()
    at.update(attrs or {})
    s = make(name, rng, x.shape, A.ACL_FLOAT, values=x, attrs=at)
    if SPECS[name]["kind"] == "bwd":
        s.tensors["grad_output"].values = np.ones_like(x)
    out = SPECS[name]["out"]
    res = call_op(OPS[name], s)
    try:
        assert res.status1 == 0 and res.status2 == 0, res.message
        exp = reference_of(name)(s)[out]
        got = res.outputs[out].astype(np.float64)
        assert np.all(np.abs(exp) > 1e-37), "pick points whose results are normal floats"
        rel = np.abs(got - exp) / np.abs(exp)
        assert rel.max() <= rtol, f"{name}: relative error {rel.max():.3g} at x = {x[rel.argmax()]}: got " \
                                  f"{got[rel.argmax()]!r}, expected {exp[rel.argmax()]!r}"
    finally:
        release(res)


@pytest.mark.parametrize("gshape,xshape", [((2, 1, 3, 1), (1, 4, 1, 5)), ((7,), (3, 1)), ((1, 1, 1), (2, 3, 4)),
                                           ((2, 3, 4), (1, 1, 1)), ((6, 1, 1, 2), (6, 5, 1, 2)), ((3, 1, 2, 1, 2), (3, 2, 2, 2, 2))])
def test_broadcast_geometries(gshape, xshape):
    """Coalescing of broadcast dims: every pattern of size-1 dims on either side gives NumPy's answer."""
    rng = np.random.default_rng(SEED)
    s = make("GeluBackward", rng, xshape, A.ACL_FLOAT, gshape=gshape)
    res = call_op(OPS["GeluBackward"], s)
    try:
        assert res.status1 == 0 and res.status2 == 0, res.message
        np.testing.assert_allclose(res.outputs["grad_input"], reference_of("GeluBackward")(s)["grad_input"],
                                   rtol=1e-5, atol=1e-6)
    finally:
        release(res)
