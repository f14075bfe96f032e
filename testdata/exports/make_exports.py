#!/usr/bin/python3
"""One small CNN exported from PyTorch the common ways (issue 29).

Trains a small CNN with BatchNormalization (1x28x28 -> 10 classes) for one
short epoch on the bundled Fashion-MNIST subset (testdata/fashion) and exports
the same weights as

  a_default_fixed_batch.onnx   torch.onnx.export(model.eval(), x1, f): the
                               most common call. The dummy's batch of 1 is
                               fixed in the graph, and constant folding folds
                               BatchNormalization into Conv.
  b_eval_dynamic.onnx          eval export with dynamic_axes (BN folded too).
  c_preserve_dynamic.onnx      training=TrainingMode.PRESERVE,
                               do_constant_folding=False, dynamic_axes: the
                               README's recipe; BN kept, eval statistics.
  d_training_dynamic.onnx      training=TrainingMode.TRAINING, dynamic_axes.
                               PyTorch runs the model in training mode while
                               tracing, which moves the BN running statistics
                               by one step on the dummy batch before they are
                               written.
  e_fixed_batch_view.onnx      the default export of a copy whose forward
                               flattens with x.view(1, -1): the Reshape's
                               constant shape hard-codes the batch, so the
                               tool must refuse it (cmd/unlearn bad-input
                               matrix).

and writes reference.json: PyTorch's float32 eval-mode accuracy of these
weights on the bundled train (4,000) and test (1,000) splits, with the counts
of correct examples, which the tool's "before" accuracy of b and c must equal
(cmd/unlearn/exports_test.go).

Run from the repository root (Debian python3-torch 1.13, python3-onnx):
    /usr/bin/python3 testdata/exports/make_exports.py
"""
import copy
import gzip
import json
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "testdata", "exports")
FASHION = os.path.join(ROOT, "testdata", "fashion")


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


def load(split):
    x = read_idx(os.path.join(FASHION, split + "-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(FASHION, split + "-labels-idx1-ubyte.gz"))
    # The tool feeds pixel/255 as float32 (testdata/fashion/README.md).
    x = torch.from_numpy(x.astype(np.float32) / np.float32(255)).unsqueeze(1)
    return x, torch.from_numpy(y.astype(np.int64))


class SmallCNN(nn.Module):
    def __init__(self, view_one=False):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 7 * 7, 10)
        self.view_one = view_one

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        if self.view_one:
            x = x.view(1, -1)  # hard-codes the batch of 1
        else:
            x = torch.flatten(x, 1)
        return self.fc(x)


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        correct = 0
        for i in range(0, len(x), 500):
            correct += int((model(x[i:i + 500]).argmax(1) == y[i:i + 500]).sum())
    return correct


def export(model, x, name, **kw):
    # Every export starts from its own copy, so that the TRAINING export's
    # change to the running statistics reaches no other file.
    path = os.path.join(HERE, name)
    torch.onnx.export(copy.deepcopy(model).eval(), x, path, **kw)
    print(f"{name}: {os.path.getsize(path)} bytes")


def main():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    xtr, ytr = load("train")
    xte, yte = load("t10k")

    model = SmallCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    perm = torch.randperm(len(xtr))
    for i in range(0, len(xtr), 64):
        b = perm[i:i + 64]
        opt.zero_grad()
        F.cross_entropy(model(xtr[b]), ytr[b]).backward()
        opt.step()
    model.eval()

    tr, te = accuracy(model, xtr, ytr), accuracy(model, xte, yte)
    ref = {
        "torch": torch.__version__,
        "model": "SmallCNN: conv3x3(8)+BN+ReLU+maxpool, conv3x3(16)+BN+ReLU+maxpool, flatten, linear(10)",
        "train": {"correct": tr, "n": len(xtr), "accuracy": tr / len(xtr)},
        "test": {"correct": te, "n": len(xte), "accuracy": te / len(xte)},
        "note": "PyTorch eval mode, float32, pixel/255; the weights of every export (d's BN running statistics moved by its trace)",
    }
    with open(os.path.join(HERE, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    print(json.dumps(ref))

    dyn = {"input": {0: "batch"}, "logits": {0: "batch"}}
    names = {"input_names": ["input"], "output_names": ["logits"]}
    x1 = xtr[:1]
    x2 = xtr[:2]
    export(model, x1, "a_default_fixed_batch.onnx")
    export(model, x2, "b_eval_dynamic.onnx", opset_version=17, dynamic_axes=dyn, **names)
    export(model, x2, "c_preserve_dynamic.onnx", training=torch.onnx.TrainingMode.PRESERVE,
           do_constant_folding=False, opset_version=17, dynamic_axes=dyn, **names)
    export(model, x2, "d_training_dynamic.onnx", training=torch.onnx.TrainingMode.TRAINING,
           do_constant_folding=False, opset_version=17, dynamic_axes=dyn, **names)
    view = SmallCNN(view_one=True)
    view.load_state_dict(model.state_dict())
    export(view, x1, "e_fixed_batch_view.onnx")


if __name__ == "__main__":
    main()
