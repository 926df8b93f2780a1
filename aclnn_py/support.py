"""What the registry says about itself: the live support table (``aclnn-py support``) and the op
reference tables of the README (``aclnn-py ops``, written into README.md by ``aclnn-py readme``).

*Supported*: the API exists (a registered op, or a function of ``aclnn_py.cudnn``). *Test Passed*:
the sample programs that exercise it (their ``APIS``) passed just now on the current device. The
cuDNN ops-train rows are the fixed list of the 21 APIs we implement; each lists the aclnn ops that
declare it (``OpDef.cudnn``). Every other row comes from the registry, grouped by ``OpDef.group``.
"""
from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

from .opdef import EXPORTS, REGISTRY

YES, NO = "☑", "✗"

CUDNN_OPS_TRAIN = [     # cuDNN 8.9.7 cudnn_ops_train, in PhOS's table order (the spec, not an op list)
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
CUDNN_TITLE = "PhOS Support: cuDNN 8.0 - Operations Training"


def groups() -> dict[str, list]:
    """Registered ops by support-table group, in registration order."""
    out: dict[str, list] = {}
    for reg in REGISTRY.values():
        out.setdefault(reg.opdef.group or reg.module, []).append(reg)
    return out


def _cudnn_supported(api: str) -> bool:
    try:
        from . import cudnn
    except ImportError:
        return False
    return callable(getattr(cudnn, api, None))


def _backing_ops(api: str) -> list[str]:
    return [f"aclnn{r.opdef.name}" for r in REGISTRY.values() if api in r.opdef.cudnn]


def _conformance() -> dict[str, bool]:
    """Run every sample once (quietly) and credit its APIS with the verdict."""
    from .samples_runner import load_sample, sample_paths
    passed: dict[str, bool] = {}
    for p in sample_paths():
        apis: list = []
        try:
            with redirect_stdout(io.StringIO()):
                mod = load_sample(p)
                apis = getattr(mod, "APIS", [])
                ok = mod.main() == 0
        except Exception:
            ok = False
        for api in apis:
            passed[api] = passed.get(api, True) and ok
    return passed


def support_rows(passed: dict[str, bool] | None = None):
    """(cuDNN rows [(index, api, supported, passed, aclnn ops)], {group: [(api, supported, passed)]})."""
    passed = _conformance() if passed is None else passed

    def mark(ok):
        return YES if ok else NO
    cudnn = []
    for idx, api in CUDNN_OPS_TRAIN:
        s = _cudnn_supported(api)
        cudnn.append((idx, api, mark(s), mark(s and passed.get(api, False)), _backing_ops(api)))
    tables = {g: [(f"aclnn{r.opdef.name}", YES, mark(passed.get(f"aclnn{r.opdef.name}", False))) for r in regs]
              for g, regs in groups().items()}
    return cudnn, tables


def format_support(fmt: str = "text", passed: dict[str, bool] | None = None) -> str:
    from .backends import get_backend
    cudnn, tables = support_rows(passed)
    out = []
    k = sum(r[2] == YES for r in cudnn)
    if fmt == "md":
        out += [f"### {CUDNN_TITLE} ({k}/{len(cudnn)})", "", "| Index | API | Supported | Test Passed | aclnn ops |",
                "|---|---|---|---|---|"]
        out += [f"| {i} | `{a}` | {s} | {t} | {', '.join(f'`{o}`' for o in ops)} |" for i, a, s, t, ops in cudnn]
        for g, rows in tables.items():
            out += ["", f"### {g} ({sum(r[1] == YES for r in rows)}/{len(rows)})", "", "| API | Supported | Test Passed |",
                    "|---|---|---|"]
            out += [f"| `{a}` | {s} | {t} |" for a, s, t in rows]
    else:
        out.append(f"{CUDNN_TITLE} ({k}/{len(cudnn)})")
        out += [f"  {i}  {a:<58} {s:^9} {t:^11} {', '.join(ops)}" for i, a, s, t, ops in cudnn]
        for g, rows in tables.items():
            out += ["", f"{g} ({sum(r[1] == YES for r in rows)}/{len(rows)})"]
            out += [f"  {a:<64} {s:^9} {t:^11}" for a, s, t in rows]
    out += ["", f"(Test Passed: live conformance checks on the {get_backend().name} backend)"]
    return "\n".join(out) + "\n"


def print_support(fmt: str = "text") -> int:
    print(format_support(fmt), end="")
    return 0


# the op reference ------------------------------------------------------------------------------

def _dtypes(p) -> str:
    if callable(p.dtypes):
        return (p.dtypes.__doc__ or "").strip().split(":")[-1].strip().rstrip(".") or p.dtypes.__name__
    names = sorted(n.name.removeprefix("ACL_") for n in p.dtypes)
    return "/".join(names)


def ops_markdown() -> str:
    """The README's op reference: per group, every op with its phase-1 arguments in CANN order, its
    data dtypes, ranks, in-place forms and what it computes — all from the registry."""
    out = []
    for g, regs in groups().items():
        out += [f"### {g}", "", "| API (phase-1 arguments, CANN order) | data dtypes | ranks | in place | computes |",
                "|---|---|---|---|---|"]
        for r in regs:
            op = r.opdef
            args = ", ".join(p.name for p in op.params)
            ref = next((p for p in op.tensors if p.name == op.ref_name), None)
            dts = _dtypes(ref) if ref is not None else "—"
            inplace = ", ".join(f"{p.name} = {a}" for p in op.tensors for a in p.alias) or "—"
            doc = op.doc.replace("|", "\\|").replace("\n", " ")
            out.append(f"| `aclnn{op.name}({args})` | {dts} | {op.ranks[0]}–{op.ranks[1]} | {inplace} | {doc} |")
        out.append("")
    extras = [name for name in EXPORTS if not any(name in r.opdef.apis for r in REGISTRY.values())]
    if extras:
        out += ["Other APIs of the ops modules: " + ", ".join(f"`{e}`" for e in extras) + ".", ""]
    return "\n".join(out)


_BLOCK = re.compile(r"(<!-- BEGIN generated by `aclnn-py readme`: (?P<what>[a-z]+) -->\n)(.*?)"
                    r"(<!-- END generated: (?P=what) -->)", re.S)


def samples_markdown() -> str:
    """The README's list of sample programs: file, first line of its docstring, the APIs it exercises."""
    from .samples_runner import load_sample, sample_paths
    rows = ["| sample | what it shows | APIs |", "|---|---|---|"]
    for p in sample_paths():
        with redirect_stdout(io.StringIO()):
            mod = load_sample(p)
        first = (mod.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
        rows.append(f"| `{p.name}` | {first} | {', '.join(f'`{a}`' for a in getattr(mod, 'APIS', []))} |")
    return "\n".join(rows) + "\n"


def readme_blocks(passed: dict[str, bool] | None = None) -> dict[str, str]:
    return {"ops": ops_markdown(), "samples": samples_markdown(), "support": format_support("md", passed)}


def update_readme(path: Path, check: bool = False, passed: dict[str, bool] | None = None) -> int:
    """Rewrite the generated blocks of ``path``; with ``check``, only report (exit 1) when stale."""
    text = path.read_text()
    blocks = readme_blocks(passed)
    new = _BLOCK.sub(lambda m: m.group(1) + blocks[m.group("what")] + m.group(4), text)
    if check:
        if new != text:
            print(f"{path}: generated tables are out of date; run `aclnn-py readme`")
            return 1
        return 0
    path.write_text(new)
    return 0
