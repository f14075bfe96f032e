#!/usr/bin/env python3
"""The small CNN of make_exports.py exported by PyTorch's default exporter on
PyTorch 2.9 and later (torch.export + ONNX Script, "dynamo"), for the tool's
tests.

PyTorch 2.9 made dynamo=True the default of torch.onnx.export, so README's
recipe, copied as it is onto a current PyTorch, no longer runs the
TorchScript exporter that wrote a_..e_ here. This script takes the weights
of c_preserve_dynamic.onnx (the state_dict names are its initializers' names),
loads them into the same SmallCNN and exports them with README's call minus
nothing (no dynamo=False), as a user on a current PyTorch would:

  f_dynamo_default.onnx   (and f_dynamo_default.onnx.data when the exporter
                          writes the weights as external data)

and dynamo.json: the versions of torch, onnx and onnxscript, what the
exporter warned, the file's opsets, IR version, op types and external data,
PyTorch's eval-mode counts of correct examples on the bundled splits (equal
to reference.json's when the weights loaded right), and ONNX Runtime's
largest logit difference to PyTorch's on the test split when onnxruntime is
installed. If the export fails, dynamo.json records the error instead.
cmd/unlearn/exports_test.go (TestDynamoExport) runs the tool on the file.

This Debian's PyTorch (1.13) has no such exporter: the script needs
PyTorch >= 2.9 with onnxscript, as the GPU machines' Python environment has
(the device tool; no GPU is used):

    python3 testdata/exports/make_dynamo.py --out "$OUT"

then copy $OUT's files into testdata/exports/.
"""
import argparse
import collections
import io
import json
import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "testdata", "exports")
sys.path.insert(0, HERE)


def version_tuple(v):
    out = []
    for part in v.split("+")[0].split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


def describe(path):
    """Opsets, IR version, op types and external data of an ONNX file."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    ext = [t.name for t in m.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    return {
        "ir_version": m.ir_version,
        "opset_import": {o.domain or "ai.onnx": o.version for o in m.opset_import},
        "producer": f"{m.producer_name} {m.producer_version}",
        "op_types": dict(sorted(collections.Counter(n.op_type for n in m.graph.node).items())),
        "initializers": sorted(t.name for t in m.graph.initializer),
        "external_initializers": len(ext),
        "inputs": [i.name for i in m.graph.input],
        "outputs": [o.name for o in m.graph.output],
        "functions": len(m.functions),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=HERE, help="folder to write f_dynamo_default.onnx and dynamo.json into")
    p.add_argument("--check-only", action="store_true",
                   help="load the weights and count PyTorch's correct examples, export nothing (runs on PyTorch 1.13)")
    p.add_argument("--dry-run", action="store_true",
                   help="run the export on any PyTorch (an older one exports with TorchScript), into --out, to check the script")
    a = p.parse_args()

    import numpy as np
    import onnx
    import onnx.numpy_helper
    import torch
    from make_exports import SmallCNN, accuracy, load

    torch.set_num_threads(2)
    src = onnx.load(os.path.join(HERE, "c_preserve_dynamic.onnx"))
    weights = {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy()) for t in src.graph.initializer}
    model = SmallCNN()
    state = model.state_dict()
    missing = [k for k in state if k not in weights and not k.endswith("num_batches_tracked")]
    if missing:
        sys.exit(f"make_dynamo.py: c_preserve_dynamic.onnx lacks {missing}")
    model.load_state_dict({k: weights.get(k, v) for k, v in state.items()})
    model.eval()

    xtr, ytr = load("train")
    xte, yte = load("t10k")
    with open(os.path.join(HERE, "reference.json")) as f:
        ref = json.load(f)
    tr, te = accuracy(model, xtr, ytr), accuracy(model, xte, yte)
    doc = {
        "torch": torch.__version__,
        "onnx": onnx.__version__,
        "pytorch_correct": {"train": tr, "test": te},
        "reference_json_correct": {"train": ref["train"]["correct"], "test": ref["test"]["correct"]},
    }
    try:
        import onnxscript
        doc["onnxscript"] = onnxscript.__version__
    except ImportError:
        doc["onnxscript"] = None
    if a.check_only:
        print(json.dumps(doc, indent=1))
        return
    if a.dry_run and os.path.abspath(a.out) == HERE:
        sys.exit("make_dynamo.py: --dry-run writes into another folder than testdata/exports (--out)")
    if version_tuple(torch.__version__) < (2, 9) and not a.dry_run:
        sys.exit(f"make_dynamo.py: PyTorch {torch.__version__} exports with TorchScript by default; "
                 "this file is for PyTorch 2.9 and later (see the docstring)")

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "f_dynamo_default.onnx")
    x = xtr[:2]
    caught = io.StringIO()
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            # README's recipe exactly, on a PyTorch whose default exporter is dynamo.
            torch.onnx.export(model.eval(), x, path,
                              training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False,
                              opset_version=17, input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
        except Exception as e:  # the finding is the error itself
            doc["error"] = f"{type(e).__name__}: {e}"[:4000]
        for w in ws:
            print(f"{w.category.__name__}: {w.message}", file=caught)
    doc["warnings"] = caught.getvalue().splitlines()[:40]
    if "error" not in doc:
        doc["file"] = describe(path)
        doc["files"] = sorted(f for f in os.listdir(a.out) if f.startswith("f_dynamo_default"))
        try:
            import onnxruntime as ort
            s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            got = s.run(None, {s.get_inputs()[0].name: xte.numpy()})[0]
            with torch.no_grad():
                want = model(xte).numpy()
            doc["onnxruntime"] = {"version": ort.__version__,
                                  "max_abs_logit_diff": float(np.abs(got - want).max()),
                                  "test_correct": int((got.argmax(1) == yte.numpy()).sum())}
        except ImportError:
            doc["onnxruntime"] = None
    with open(os.path.join(a.out, "dynamo.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
