#!/usr/bin/python3
"""Two small graphs for the training build's shape inference (issue 45, item 14).

  window_pad.onnx   a 3-layer PyTorch model with the window partition of
                    torchvision's swin_t: an NHWC feature map padded to a
                    multiple of the window with pads computed from its shape
                    (pad = (w - W % w) % w, F.pad), then viewed as windows
                    with sizes computed from Shape nodes. PyTorch 1.13 exports
                    the pads as Shape -> Gather -> Mod -> Sub -> Mod ->
                    Concat -> Reshape [-1, 2] -> Slice (step -1) -> Transpose
                    -> Reshape -> Pad, and the windows as Reshapes whose
                    targets are Concats of Gathers of Shapes. Random weights,
                    PRESERVE recipe, opset 17, dynamic batch, logits
                    [batch, 10]. The tool's shape inference must follow this
                    pattern by itself (swin_t failed with "the logits must
                    have rank 2 [N, C], got rank -1").
  lost_rank.onnx    built with onnx.helper: x [batch, 4, 6] flattened, MatMul
                    and Add to scores [batch, 10], then a Reshape whose
                    target is Concat(Gather(Shape(scores), [0]),
                    ReduceProd(Unique(Gather(Shape(scores), [1])))) =
                    [batch, 10]: no shape rule can tell its length (Unique
                    has none), so the inference loses the rank there, at the
                    logits, which the graph declares [batch, 10]. The
                    declared output type gives the rank back.

Run from the repository root (Debian python3-torch 1.13, python3-onnx):
    /usr/bin/python3 testdata/shapes/make_shapes.py
"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


class WindowPad(torch.nn.Module):
    """Conv stem, swin_t's padded window partition, a Linear, a head."""

    def __init__(self, window=3):
        super().__init__()
        self.window = window
        self.stem = torch.nn.Conv2d(3, 8, 4, stride=4)
        self.mix = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = self.stem(x).permute(0, 2, 3, 1)  # [B, H, W, C]
        B, H, W, C = x.shape
        w = self.window
        pad_r = (w - W % w) % w
        pad_b = (w - H % w) % w
        x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        _, pH, pW, _ = x.shape
        x = x.view(B, pH // w, w, pW // w, w, C).permute(0, 1, 3, 2, 4, 5)
        x = x.reshape(B * (pH // w) * (pW // w), w * w, C)
        x = torch.relu(self.mix(x))
        x = x.reshape(B, -1, C).mean(1)
        return self.head(x)


def window_pad():
    torch.manual_seed(45)
    m = WindowPad().eval()
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(m, x, os.path.join(HERE, "window_pad.onnx"),
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False,
                      opset_version=17, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})


def lost_rank():
    rng = np.random.default_rng(45)
    w = numpy_helper.from_array(rng.standard_normal((24, 10)).astype(np.float32) * 0.2, "fc.weight")
    b = numpy_helper.from_array(np.zeros(10, np.float32), "fc.bias")
    i0 = numpy_helper.from_array(np.array([0], np.int64), "idx0")
    i1 = numpy_helper.from_array(np.array([1], np.int64), "idx1")
    nodes = [
        helper.make_node("Flatten", ["input"], ["flat"], name="flatten", axis=1),
        helper.make_node("MatMul", ["flat", "fc.weight"], ["mm"], name="fc_matmul"),
        helper.make_node("Add", ["mm", "fc.bias"], ["scores"], name="fc_add"),
        helper.make_node("Shape", ["scores"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "idx0"], ["batch"], name="gather_batch", axis=0),
        helper.make_node("Gather", ["shape", "idx1"], ["classes"], name="gather_classes", axis=0),
        helper.make_node("Unique", ["classes"], ["uniq"], name="unique", sorted=1),
        helper.make_node("ReduceProd", ["uniq"], ["prod"], name="prod", keepdims=1),
        helper.make_node("Concat", ["batch", "prod"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["scores", "target"], ["logits"], name="reshape_by_shape"),
    ]
    g = helper.make_graph(
        nodes, "lost_rank",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 4, 6])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        [w, b, i0, i1])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_shapes.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "lost_rank.onnx"))


if __name__ == "__main__":
    window_pad()
    lost_rank()
