"""Negative control for sample 11's checks: with the backward all-reduce skipped, every rank of a
run with ≥ 2 ranks must see its check fail. Prints ``control: detected`` (exit 0) or ``control: MISSED``."""
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "samples"))
import importlib.util  # noqa: E402

from aclnn_py import acl  # noqa: E402
import aclnn_py.hccl as hccl  # noqa: E402

spec = importlib.util.spec_from_file_location("sample11", Path(sys.path[0]) / "11_sync_batch_norm_distributed.py")
sample = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sample)


def main():
    from mpi4py import MPI
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    w = MPI.COMM_WORLD
    info = w.bcast(hccl.HcclGetRootInfo()[0] if w.rank == 0 else None)
    comm, ret = hccl.HcclCommInitRootInfo(w.size, info, w.rank)
    assert ret == 0
    ok_real, _ = sample.run_case(comm, stream, w.rank, w.size, sample.A.ACL_FLOAT, sample.A.ACL_FORMAT_NCHW, 11)
    real = sample.hccl.HcclAllReduce
    sample.hccl = type(sys)("no_allreduce")
    sample.hccl.__dict__.update(hccl.__dict__)
    sample.hccl.HcclAllReduce = lambda *a: 0          # the backward sums stay local
    ok_broken, worst = sample.run_case(comm, stream, w.rank, w.size, sample.A.ACL_FLOAT, sample.A.ACL_FORMAT_NCHW, 11)
    assert real is hccl.HcclAllReduce
    print(f"rank {w.rank}: control: real run {'PASS' if ok_real else 'FAIL'}; without the all-reduce "
          f"{'detected' if not ok_broken else 'MISSED'} (worst {worst:.1f} of the tolerance)", flush=True)
    hccl.HcclCommDestroy(comm)
    return 0 if ok_real and not ok_broken else 1


if __name__ == "__main__":
    sys.exit(main())
