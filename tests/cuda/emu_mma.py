#!/usr/bin/env python3
"""The printed mma.sync helpers (codegen/print_mma.c) against a plain product.

tests/cuda/emu/mma_sync.cu includes the helpers as `ir_golden mma-prelude`
prints them and checks every instruction kind on two warps with exact and
random data (see its header).  Modes:

  emu_mma.py --emu IR_GOLDEN
      g++ against the CPU stand-in (tests/cuda/emu/cuda_runtime.h): the
      program must PASS; against a stand-in whose A word order swaps rM
      and kHi, whose D column takes the wrong register bit, or whose B
      word comes from the wrong lane, it must FAIL.
  emu_mma.py --nvcc NVCC IR_GOLDEN [--all]
      nvcc -arch=sm_90a compiles every kind (ptxas accepts the printed
      PTX).  With --all, also each arch with the kinds the table gives it
      (sm_75, sm_80, sm_89), and ptxas must refuse a kind one arch below
      its own (m16n8k16.f16 and m16n8k8.bf16 on sm_75, m16n8k32.e4m3 on
      sm_80).  Exit 77 when NVCC is empty or missing.
  emu_mma.py --prepare IR_GOLDEN DIR
      writes DIR/mma_sync.cu and DIR/td_mma_prelude.cuh for a GPU run
      (tests/cuda/gpu-mma.sh).
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = os.path.join(HERE, "emu", "mma_sync.cu")
HEADER = os.path.join(HERE, "emu", "cuda_runtime.h")

# (what the mutant does, text in the stand-in, replacement)
MUTANTS = [
    ("A words in (kHi, rM) order",
     "a[row / 8 + 2 * kHi]", "a[2 * (row / 8) + kHi]"),
    ("D columns from the wrong register bit",
     "col = 2 * t + r % 2;", "col = 2 * t + (r / 2) % 2;"),
    ("B words from the lane of the wrong column",
     "w[4 * col + tt].b[kHi]", "w[4 * (7 - col) + tt].b[kHi]"),
]


def prelude(ir_golden, d):
    p = subprocess.run([ir_golden, "mma-prelude"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise SystemExit(f"FAIL ir_golden mma-prelude: {p.stderr}")
    # The helpers take 32-bit words, floats and ints only; the includes the
    # prelude requests for the operands' element types (cuda_fp16.h ...)
    # are the kernel's business, and the stand-in has none of them.
    text = "".join(l for l in p.stdout.splitlines(True)
                   if not l.startswith("#include"))
    with open(os.path.join(d, "td_mma_prelude.cuh"), "w") as f:
        f.write(text)


def load_emu():
    spec = importlib.util.spec_from_file_location(
        "td_emu", os.path.join(HERE, "emu.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_emu(emu, tmp, inc, name):
    with open(PROG) as f:
        src = emu.to_host(f.read())
    cpp = os.path.join(tmp, name + ".cpp")
    with open(cpp, "w") as f:
        f.write(src)
    exe = os.path.join(tmp, name + ".bin")
    p = subprocess.run(["g++"] + emu.CXXFLAGS + ["-I", inc, "-I", tmp, cpp,
                                                 "-o", exe],
                       capture_output=True, text=True)
    return exe if p.returncode == 0 else None, p.stderr


def run_emu(ir_golden):
    emu = load_emu()
    failed = 0
    with open(HEADER) as f:
        header = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        prelude(ir_golden, tmp)
        jobs = [("the stand-in", HERE + "/emu", "good", True)]
        for k, (what, old, new) in enumerate(MUTANTS):
            if old not in header:
                print(f"FAIL the stand-in no longer holds {old!r}")
                return 1
            d = os.path.join(tmp, f"mut{k}")
            os.makedirs(d)
            with open(os.path.join(d, "cuda_runtime.h"), "w") as f:
                f.write(header.replace(old, new))
            jobs.append((f"a stand-in with {what}", d, f"mut{k}", False))
        for label, inc, name, want_pass in jobs:
            exe, err = build_emu(emu, tmp, inc, name)
            if exe is None:
                print(f"FAIL g++ ({label}):\n{err[:2000]}")
                failed += 1
                continue
            try:
                p = subprocess.run([exe], capture_output=True, text=True,
                                   timeout=120)
            except subprocess.TimeoutExpired:
                print(f"FAIL {label}: timeout")
                failed += 1
                continue
            last = (p.stdout.strip().splitlines() or [""])[-1]
            passed = p.returncode == 0 and last.startswith("PASS")
            if want_pass and not passed:
                print(f"FAIL {label}:\n{p.stdout}{p.stderr}")
                failed += 1
            elif not want_pass and (p.returncode != 1 or
                                    not last.startswith("FAIL")):
                print(f"FAIL {label}: the program did not fail:\n{p.stdout}"
                      f"{p.stderr}")
                failed += 1
            else:
                print(f"ok   {label}: {last}")
                if want_pass:
                    sys.stdout.write(p.stdout)
    print("PASS" if not failed else f"FAIL ({failed})")
    return 1 if failed else 0


def run_nvcc(nvcc, ir_golden, every):
    if not nvcc or not os.path.exists(nvcc):
        print("SKIP: no nvcc")
        return 77
    # (label, arch, defines, must compile)
    jobs = [("every kind on sm_90a", "sm_90a", [], True)]
    if every:
        jobs += [
            ("the sm_75 kinds on sm_75", "sm_75", ["-DTD_MMA_MAX_SM=75"], True),
            ("the sm_80 kinds on sm_80", "sm_80", ["-DTD_MMA_MAX_SM=80"], True),
            ("the sm_89 kinds on sm_89", "sm_89", ["-DTD_MMA_MAX_SM=89"], True),
            ("m16n8k16.f16 on sm_75", "sm_75", ["-DTD_MMA_ONLY=1"], False),
            ("m16n8k8.bf16 on sm_75", "sm_75", ["-DTD_MMA_ONLY=2"], False),
            ("m16n8k32.e4m3 on sm_80", "sm_80", ["-DTD_MMA_ONLY=9"], False),
        ]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        prelude(ir_golden, tmp)
        for label, arch, defs, ok in jobs:
            p = subprocess.run([nvcc, f"-arch={arch}", "-Werror",
                                "all-warnings", "-I", tmp] + defs +
                               ["-c", PROG, "-o",
                                os.path.join(tmp, "x.o")],
                               capture_output=True, text=True)
            if (p.returncode == 0) != ok:
                failed += 1
                print(f"FAIL {label}: nvcc exited {p.returncode}"
                      f"{' (it must refuse)' if not ok else ''}:\n"
                      f"{p.stderr[:2000]}")
            else:
                print(f"ok   {label}"
                      + ("" if ok else f": {p.stderr.strip().splitlines()[0]}"))
    print("PASS" if not failed else f"FAIL ({failed})")
    return 1 if failed else 0


def main():
    a = sys.argv[1:]
    if len(a) == 2 and a[0] == "--emu":
        return run_emu(a[1])
    if len(a) in (3, 4) and a[0] == "--nvcc":
        return run_nvcc(a[1], a[2], a[3:] == ["--all"])
    if len(a) == 3 and a[0] == "--prepare":
        os.makedirs(a[2], exist_ok=True)
        prelude(a[1], a[2])
        shutil.copy(PROG, a[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
