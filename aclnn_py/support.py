"""``aclnn-py support``: the live support table, in the form of PhOS's cuDNN 8 ops-train table.

*Supported*: the API exists and its phase 1 accepts a valid call. *Test Passed*: its conformance
check — the sample program that exercises it, comparing with a NumPy reference — passed just now
on the current device. APIs not implemented stay in the table with ✗.
"""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import aclnn_py

YES, NO = "☑", "✗"

CUDNN_OPS_TRAIN = [
    (2000, "cudnnActivationBackward"), (2001, "cudnnBatchNormalizationBackward"),
    (2002, "cudnnBatchNormalizationBackwardEx"), (2003, "cudnnBatchNormalizationForwardTraining"),
    (2004, "cudnnBatchNormalizationForwardTrainingEx"), (2005, "cudnnDivisiveNormalizationBackward"),
    (2006, "cudnnDropoutBackward"), (2007, "cudnnGetBatchNormalizationBackwardExWorkspaceSize"),
    (2008, "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize"),
    (2009, "cudnnGetBatchNormalizationTrainingExReserveSpaceSize"),
    (2010, "cudnnGetNormalizationBackwardWorkspaceSize"), (2011, "cudnnGetNormalizationForwardTrainingWorkspaceSize"),
    (2012, "cudnnGetNormalizationTrainingReserveSpaceSize"), (2013, "cudnnLRNCrossChannelBackward"),
    (2014, "cudnnNormalizationBackward"), (2015, "cudnnNormalizationForwardTraining"),
    (2016, "cudnnOpsTrainVersionCheck"), (2017, "cudnnPoolingBackward"), (2018, "cudnnSoftmaxBackward"),
    (2019, "cudnnSpatialTfGridGeneratorBackward"), (2020, "cudnnSpatialTfSamplerBackward"),
]

ACLNN_BATCH_NORM = ["aclnnBatchNorm", "aclnnBatchNormBackward", "aclnnBatchNormStats",
                    "aclnnBatchNormGatherStatsWithCounts", "aclnnBatchNormElemt", "aclnnBatchNormReduceBackward",
                    "aclnnBatchNormElemtBackward"]
ONEDNN = ["aclnnBatchNormTrainingBackward"]
FUSED = ["aclnnBatchNormActivation", "aclnnBatchNormActivationBackward"]


def _supported(api: str) -> bool:
    return hasattr(aclnn_py, api) or hasattr(aclnn_py, f"{api}GetWorkspaceSize") or \
        hasattr(getattr(aclnn_py, "cudnn", None), api)


def _conformance() -> dict[str, bool]:
    """Run every sample once (quietly) and credit its APIS with the verdict."""
    from .samples_runner import load_sample, sample_paths
    passed: dict[str, bool] = {}
    for p in sample_paths():
        buf = io.StringIO()
        try:
            with redirect_stdout(buf):
                mod = load_sample(p)
                ok = mod.main() == 0
            apis = getattr(mod, "APIS", [])
        except Exception:
            ok, apis = False, []
        for api in apis:
            passed[api] = passed.get(api, True) and ok
    return passed


def _table(title, rows, fmt, indexed):
    out = []
    if fmt == "md":
        out.append(f"### {title}\n")
        out.append("| Index | API | Supported | Test Passed |" if indexed else "| API | Supported | Test Passed |")
        out.append("|---|---|---|---|" if indexed else "|---|---|---|")
        for idx, api, s, t in rows:
            out.append(f"| {idx} | `{api}` | {s} | {t} |" if indexed else f"| `{api}` | {s} | {t} |")
    else:
        out.append(title)
        for idx, api, s, t in rows:
            out.append(f"  {str(idx) + '  ' if indexed else ''}{api:<58} {s:^9} {t:^11}")
    return "\n".join(out) + "\n"


def support_rows(passed: dict[str, bool] | None = None):
    passed = _conformance() if passed is None else passed

    def row(idx, api):
        s = _supported(api)
        return idx, api, YES if s else NO, YES if s and passed.get(api) else NO
    return ([row(i, a) for i, a in CUDNN_OPS_TRAIN], [row(None, a) for a in ACLNN_BATCH_NORM],
            [row(None, a) for a in ONEDNN], [row(None, a) for a in FUSED])


def print_support(fmt: str = "text") -> int:
    from .backends import get_backend
    cudnn, bn, onednn, fused = support_rows()
    k = sum(1 for r in cudnn if r[2] == YES)
    print(_table(f"PhOS Support: cuDNN 8.0 - Operations Training ({k}/{len(cudnn)})", cudnn, fmt, True))
    k = sum(1 for r in bn if r[2] == YES)
    print(_table(f"aclnn BatchNorm family (SyncBatchNorm building blocks) ({k}/{len(bn)})", bn, fmt, False))
    print(_table("oneDNN graph BatchNormTrainingBackward", onednn, fmt, False))
    print(_table("Fused batch norm + add + activation (cuDNN *Ex)", fused, fmt, False))
    print(f"(Test Passed: live conformance checks on the {get_backend().name} backend)")
    return 0
