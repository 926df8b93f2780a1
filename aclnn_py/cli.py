"""``aclnn-py``: samples, support table, device info, benchmarks."""
from __future__ import annotations

import argparse
import sys


def cmd_info(args) -> int:
    import numpy as np

    from . import __version__
    from . import acl
    from .backends import get_backend
    from ._paths import kernels_dir

    be = get_backend()
    print(f"aclnn-py {__version__} (numpy {np.__version__}, python {sys.version.split()[0]})")
    acl.init()
    n, ret = acl.rt.get_device_count()
    print(f"devices: {n} ({be.name})")
    info = be.info()
    for k, v in info.items():
        print(f"{k}: {v}")
    if be.name != "cuda":        # the CUDA backend's info already has them: NVRTC, driver, CuPy, fit
        from .toolkit import cuda_report
        for k, v in cuda_report().as_info().items():
            print(f"{k}: {v}")
    print(f"kernels: {kernels_dir()}")
    acl.finalize()
    if getattr(args, "check", False):
        from .doctor import report
        return report()
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="aclnn-py", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    inf = sub.add_parser("info", help="devices, backend, compiler, CuPy / NVRTC / driver versions and whether "
                                      "they fit, kernel cache")
    inf.add_argument("--check", action="store_true", help="then run the doctor (see `aclnn-py doctor`)")
    sub.add_parser("doctor", help="check driver, CuPy, NVRTC, headers; build and run every kernel file on both "
                                  "backends and compare; a verdict and a fix per item")
    sp = sub.add_parser("samples", help="run every sample on the default device")
    sp.add_argument("names", nargs="*", help="run only these samples (file stems)")
    su = sub.add_parser("support", help="print the live support table")
    su.add_argument("--format", choices=("text", "md"), default="text")
    sub.add_parser("ops", help="the op reference tables (markdown), from the registry")
    rd = sub.add_parser("readme", help="regenerate README.md's generated tables (ops, live support table)")
    rd.add_argument("--check", action="store_true", help="exit 1 if they are out of date, write nothing")
    rd.add_argument("--path", default=None, help="the README (default: the checkout's README.md)")
    sub.add_parser("bench", help="run the benchmarks (host overhead; GPU kernels when a GPU is present)")
    args = p.parse_args(argv)
    if args.cmd == "info":
        return cmd_info(args)
    if args.cmd == "doctor":
        from .doctor import report
        return report()
    if args.cmd == "samples":
        from .samples_runner import run_samples
        return run_samples(args.names)
    if args.cmd == "support":
        from .support import print_support
        return print_support(args.format)
    if args.cmd == "ops":
        from .support import ops_markdown
        print(ops_markdown(), end="")
        return 0
    if args.cmd == "readme":
        from pathlib import Path

        from .support import update_readme
        path = Path(args.path) if args.path else Path(__file__).resolve().parent.parent / "README.md"
        return update_readme(path, check=args.check)
    if args.cmd == "bench":
        from .bench import main as bench_main
        return bench_main()
    return 2


if __name__ == "__main__":
    sys.exit(main())
