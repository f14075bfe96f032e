#!/usr/bin/python3
"""Export the two models of the training-step benchmark (bench/train_step.sh)
into bench/models/ (ignored by git): untrained weights, fixed seed.

  resnet18_cifar.onnx  torchvision's ResNet-18 adapted CIFAR-style: 1 input
                       channel, 3x3 stem with stride 1, no max-pool, 10
                       classes; 28x28 input
  vit_small.onnx       testdata/make_testdata.py's ViTSmall (patch 7, dim 64,
                       4 heads, 2 blocks), 28x28 input

Both in the recommended training export (TrainingMode.TRAINING, no constant
folding, opset 17, dynamic batch), as testdata/make_testdata.py does. The
PyTorch side of the benchmark (bench/train_step.py) rebuilds the same modules
with build(name); it does not read these files.

Run with Debian's Python: /usr/bin/python3 bench/make_models.py [outdir]
"""
import copy
import inspect
import os
import sys
import warnings

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20250101
MODELS = ["resnet18", "vit_small"]
FILES = {"resnet18": "resnet18_cifar.onnx", "vit_small": "vit_small.onnx"}


def resnet18_cifar():
    try:
        import torchvision
    except ImportError:  # a GPU machine's PyTorch without torchvision (bench/gpu_check.sh)
        return _resnet18_plain()
    m = torchvision.models.resnet18(num_classes=10)
    m.conv1 = nn.Conv2d(1, 64, kernel_size=3, stride=1, padding=1, bias=False)
    m.maxpool = nn.Identity()
    return m


class _Block(nn.Module):
    """torchvision's BasicBlock."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + (x if self.downsample is None else self.downsample(x)))


def _resnet18_plain():
    """The same network as resnet18_cifar() without torchvision (same layers,
    shapes and initialisation scheme; not the same random draws): the step's
    cost is the same, which is all the benchmark reads."""
    layers = [nn.Conv2d(1, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [_Block(cin, cout, stride), _Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    m = nn.Sequential(*layers)
    for mod in m.modules():
        if isinstance(mod, nn.Conv2d):
            nn.init.kaiming_normal_(mod.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(mod, nn.BatchNorm2d):
            nn.init.ones_(mod.weight)
            nn.init.zeros_(mod.bias)
    return m


def vit_small():
    sys.path.insert(0, os.path.join(HERE, "..", "testdata"))
    threads = torch.get_num_threads()
    import make_testdata  # sets torch.set_num_threads(2) on import
    torch.set_num_threads(threads)
    return make_testdata.ViTSmall()


def build(name):
    """The named model, freshly initialised with the fixed seed."""
    torch.manual_seed(SEED)
    if name == "resnet18":
        return resnet18_cifar()
    if name == "vit_small":
        return vit_small()
    raise ValueError(f"unknown model {name!r}; want one of {MODELS}")


def export(name, path):
    model = build(name)
    model.train()
    dummy = torch.zeros(2, 1, 28, 28)
    # PyTorch 2.9 and later default to the dynamo exporter; these models are
    # made with the TorchScript one (the only one of Debian's PyTorch 1.13).
    kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(copy.deepcopy(model), dummy, path, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, opset_version=17,
                          input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, **kw)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "models")
    os.makedirs(out, exist_ok=True)
    for name in MODELS:
        path = os.path.join(out, FILES[name])
        export(name, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
