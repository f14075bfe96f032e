#!/usr/bin/python3
"""Export regimes/archs/vgg_cnn.onnx: the untrained template of a plain
VGG-style CNN for 28x28 grey images (Fashion-MNIST), the suite's second
architecture beside testdata/resnet_small_train.onnx (issue 30).

Run from the repository root with Debian's Python (python3-torch,
python3-onnx, python3-numpy):

    /usr/bin/python3 regimes/archs/make_vgg_cnn.py

The export follows testdata/make_testdata.py's export_train: training-mode
export (BatchNormalization nodes kept, no constant folding, so every
initializer keeps its state_dict name), opset 17, a dynamic batch axis, and
the running statistics written back after export (tracing moves them by one
momentum step). The weights are PyTorch's fresh initialisation with a fixed
seed; the experiments train the template from scratch per seed
(`architecture:`), which re-initialises every parameter anyway, so only the
graph matters.

Architecture (141,418 parameters): three conv-BN-ReLU stages with max-pool
(32 | 64, 64 | 128 channels, as VGG-11's first stages: one conv at full
resolution, which keeps a training step about 1.6x the small ResNet's
multiply-adds; 28 -> 14 -> 7 -> 3) and a linear head on the flattened
128x3x3 features.
"""
import copy
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

torch.set_num_threads(2)
HERE = os.path.dirname(os.path.abspath(__file__))
DYN = {"input": {0: "batch"}, "logits": {0: "batch"}}


def block(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


class VGGCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            *block(1, 32), nn.MaxPool2d(2),                    # 28 -> 14
            *block(32, 64), *block(64, 64), nn.MaxPool2d(2),   # 14 -> 7
            *block(64, 128), nn.MaxPool2d(2),                  # 7 -> 3
        )
        self.classifier = nn.Sequential(nn.Flatten(1), nn.Linear(128 * 3 * 3, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def export_train(model, path, opset):
    """testdata/make_testdata.py's export_train (see its docstring)."""
    dummy = torch.zeros(2, 1, 28, 28)
    torch.onnx.export(copy.deepcopy(model), dummy, path, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=opset,
                      input_names=["input"], output_names=["logits"], dynamic_axes=DYN)
    m = onnx.load(path)
    sd = model.state_dict()
    patched = 0
    for init in m.graph.initializer:
        want = sd[init.name].detach().numpy()
        have = numpy_helper.to_array(init)
        if not np.array_equal(want, have):
            assert "running_" in init.name, init.name
            init.CopyFrom(numpy_helper.from_array(want.astype(have.dtype), init.name))
            patched += 1
    onnx.save(m, path)
    return patched


def main():
    torch.manual_seed(0)
    model = VGGCNN()
    n = sum(p.numel() for p in model.parameters())
    path = os.path.join(HERE, "vgg_cnn.onnx")
    patched = export_train(model, path, 17)
    onnx.checker.check_model(onnx.load(path))
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(f"{path}: {n} parameters, {os.path.getsize(path)} bytes, {patched} running stats patched, ops {ops}")


if __name__ == "__main__":
    main()
