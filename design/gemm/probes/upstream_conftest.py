# Makes the upstream tests' bare "cuda" target mean sm_100a (no GPU here: TVM
# would otherwise pick sm_50), so the compile-only paths run as on a B200.
import os
import tvm
_Orig = tvm.target.Target
_ARCH = os.environ.get("PROBE_ARCH", "sm_100a")
class _T(_Orig):
    def __init__(self, target, host=None):
        if target == "cuda":
            target = {"kind": "cuda", "arch": _ARCH}
        super().__init__(target, host) if host is not None else super().__init__(target)
tvm.target.Target = _T
