#!/usr/bin/python3
"""The PyTorch round trip: PyTorch -> ONNX -> unlearn -> PyTorch.

testdata/resnet_small_train.onnx was exported from make_testdata.py's
ResNetSmall with training=TrainingMode.TRAINING, which keeps the state_dict
names. unlearned_del.onnx is what `make demo` wrote (DEL on the non-IID forget
set, out/demo/unlearned.onnx). This script

  1. runs `bin/unlearn export --model unlearned_del.onnx --out <tmp>` (run
     `make build` first),
  2. reads the safetensors file (a ten-line reader below; with the
     `safetensors` package, safetensors.torch.load_file does the same),
  3. loads it into a fresh ResNetSmall with load_state_dict (strict=False:
     num_batches_tracked is not in the ONNX graph; every other key must
     match), and
  4. writes the logits of the first 64 test images in eval mode
     (torch_logits.npy) and the sha256 of the safetensors file it read
     (expect.json).

cmd/unlearn/export_test.go exports the same model, checks that its file has
that sha256 (PyTorch read exactly these bytes) and that ONNX Runtime's
logits on the same images agree with PyTorch's (max |diff| <= 1e-5 * max(1, |logit|)).

Run from the repository root: /usr/bin/python3 testdata/roundtrip/make_roundtrip.py
"""
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
from make_testdata import ResNetSmall, read_idx  # noqa: E402

HERE = os.path.join(ROOT, "testdata", "roundtrip")
DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "F16": np.float16}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        arr = np.frombuffer(data[b:end], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        st = os.path.join(tmp, "u.safetensors")
        subprocess.run([os.path.join(ROOT, "bin", "unlearn"), "export", "--model",
                        os.path.join(HERE, "unlearned_del.onnx"), "--out", st], check=True)
        raw = open(st, "rb").read()
        sd = read_safetensors(st)
    model = ResNetSmall()
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert all(k.endswith("num_batches_tracked") for k in missing), missing
    model.eval()
    x = read_idx(os.path.join(ROOT, "testdata", "fashion", "t10k-images-idx3-ubyte.gz"))[:64]
    x = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    with torch.no_grad():
        logits = model(x).numpy()
    np.save(os.path.join(HERE, "torch_logits.npy"), logits)
    with open(os.path.join(HERE, "expect.json"), "w") as f:
        json.dump({"safetensors_sha256": hashlib.sha256(raw).hexdigest(), "images": 64,
                   "tensors": len(sd), "missing_in_file": sorted(missing)}, f, indent=1)
        f.write("\n")
    print("wrote torch_logits.npy", logits.shape, "and expect.json;", len(sd), "tensors")


if __name__ == "__main__":
    main()
