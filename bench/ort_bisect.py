#!/usr/bin/env python3
"""Find the first node of an ONNX graph whose run fails on a device.

Runs truncated copies of GRAPH with bench/ortrun (each in its own process,
so a crash inside ONNX Runtime is an exit code, not the end of the search):
copy K asks for every typed value the first K+1 nodes compute (file order,
which the tool's encoder keeps topological), so it runs exactly those
nodes. A binary search over K finds the first node at fault, which is
printed with its inputs' types and shapes (from ONNX's shape inference).
bench/gpu_check.sh diagnose uses it on the training graph that
`bin/trainstep -dump` writes.

  bench/ort_bisect.py GRAPH [--runner bin/ortrun] [--device cuda] [--batch 8]

Exit status 0 when the whole graph runs, 1 after naming the node at fault.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import shape_inference


def value_types(model):
    """name -> ValueInfoProto for every value with a known element type
    and a rank above 0."""
    inferred = shape_inference.infer_shapes(model)
    g = inferred.graph
    out = {}
    for vi in list(g.value_info) + list(g.output) + list(g.input):
        t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        # Scalars (rank 0) stay inner values: onnxruntime_go makes no
        # output tensor without dimensions; their consumers still run.
        if t is not None and t.elem_type and not (t.HasField("shape") and len(t.shape.dim) == 0):
            out[vi.name] = vi
    return out


def describe(vi):
    if vi is None:
        return "?"
    t = vi.type.tensor_type
    dims = [d.dim_param or str(d.dim_value) for d in t.shape.dim] if t.HasField("shape") else ["?"]
    return f"{onnx.TensorProto.DataType.Name(t.elem_type).lower()}[{','.join(dims)}]"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph")
    p.add_argument("--runner", default="bin/ortrun")
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--timeout", type=int, default=120)
    a = p.parse_args()
    model = onnx.load(a.graph)
    types = value_types(model)
    nodes = list(model.graph.node)
    produced = set()
    tmp = tempfile.mkdtemp(prefix="ort_bisect.")
    outs_upto = []
    for n in nodes:
        for o in n.output:
            if o and o in types:
                produced.add(o)
        outs_upto.append(len(produced))
    order = []
    seen = set()
    for n in nodes:
        order.extend(o for o in n.output if o and o in types and o not in seen and not seen.add(o))

    def runs(k, tag):
        m = onnx.ModelProto()
        m.CopyFrom(model)
        del m.graph.output[:]
        m.graph.output.extend(types[o] for o in order[:outs_upto[k]])
        path = os.path.join(tmp, f"upto{k}.onnx")
        onnx.save(m, path)
        try:
            r = subprocess.run([a.runner, "-model", path, "-device", a.device, "-batch", str(a.batch)],
                               capture_output=True, text=True, timeout=a.timeout)
            ok, why = r.returncode == 0, f"exit {r.returncode}"
            if not ok:
                lines = [ln for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
                why += ": " + (next((ln for ln in lines if "SIGSEGV" in ln or "error" in ln.lower()), lines[0] if lines else ""))[:300]
        except subprocess.TimeoutExpired:
            ok, why = False, f"no answer in {a.timeout} s"
        os.remove(path)
        print(f"ort_bisect: {tag}: nodes 0..{k} ({outs_upto[k]} outputs): {'runs' if ok else why}", flush=True)
        return ok

    last = len(nodes) - 1
    if runs(last, "all"):
        print(f"ort_bisect: every node of {a.graph} runs on {a.device}")
        return 0
    lo, hi = 0, last  # invariant: hi fails; nodes before lo run
    if not runs(0, "first"):
        hi = 0
    while lo < hi:
        mid = (lo + hi) // 2
        if runs(mid, "bisect"):
            lo = mid + 1
        else:
            hi = mid
    n = nodes[hi]
    ins = ", ".join(f"{i} {describe(types.get(i))}" for i in n.input if i)
    outs = ", ".join(f"{o} {describe(types.get(o))}" for o in n.output if o)
    attrs = ", ".join(f"{at.name}={onnx.helper.get_attribute_value(at)}" for at in n.attribute)
    print(f"ort_bisect: the first node at fault on {a.device}: #{hi} {n.op_type} {n.name!r} ({n.domain or 'ai.onnx'})")
    print(f"ort_bisect:   inputs {ins}")
    print(f"ort_bisect:   outputs {outs}")
    print(f"ort_bisect:   attributes {attrs or 'none'}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
