"""Prints the compact dispatcher error of one permute_layout probe (the
table's rows with whitespace squeezed).  Usage: python permute_why.py NAME"""
import re, sys
sys.argv, name = sys.argv[:1], sys.argv[1]
import permute_probe as P  # runs nothing when argv is empty? (it runs all: guard below)
import tvm
f = P.CASES[name]()
tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
try:
    with tgt:
        tvm.tirx.transform.LowerTIRx()(tvm.IRModule({"main": f}))
    print("lowered")
except Exception as e:
    for l in str(e).splitlines():
        l = re.sub(r"\s+", " ", l)
        if l.strip("|+- "):
            print(l[:240])
