#!/usr/bin/python3
"""Generate the committed Fashion-MNIST subset, the small ONNX models, the demo
forget sets and oracle, and the PyTorch reference outputs used by the Go tests.

Run from the repository root with Debian's Python (python3-torch 1.13,
python3-torchvision, python3-onnx 1.12, python3-numpy):

    /usr/bin/python3 testdata/make_testdata.py

Needs Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist/) and
nothing from the network. Runs on 2 threads (torch.set_num_threads(2)) and
takes about 1.5 minutes on the 2-core development machine. Everything is seeded;
re-running with the same torch build and thread count reproduces the files
(bit-identical on the same machine; other CPUs may differ in the last bits of
the trained weights, see testdata/README.md).

Writes (paths relative to testdata/; see testdata/README.md for details):
  fashion/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz, fashion/README.md,
  fashion/train_indices.txt
  resnet_small_fused.onnx, resnet_small_train.onnx, vgg_small.onnx,
  vit_small.onnx, vit_small_op13.onnx, vit_small_untrained_op13.onnx
  demo/forget_nonIID.txt, demo/forget_iid.txt, demo/oracle_resnet_small.onnx
  ref/batch.npz, ref/<M>_logits.npz, ref/<M>_grads_eval.npz,
  ref/<M>_grads_train.npz, ref/<M>_del_scores.npz,
  ref/resnet_small_train_bnstats.npz, ref/manifest.json
Other files in testdata/ (svc/, ref/optim.json, ...) belong to other scripts
and are left alone.
"""
import copy
import gzip
import json
import math
import os
import struct
import sys
import time
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

torch.set_num_threads(2)
warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = "/usr/share/datasets/fashion-mnist"
SEED = 20250101
DYN = {"input": {0: "batch"}, "logits": {0: "batch"}}

# ---------------------------------------------------------------- data


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


def write_idx(path, arr):
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    hdr = bytes([0, 0, 0x08, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    # mtime=0 and no file name in the gzip header: byte-identical reruns
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
            f.write(hdr + arr.tobytes())


def make_subset():
    tr_x = read_idx(f"{SRC}/train-images-idx3-ubyte.gz")
    tr_y = read_idx(f"{SRC}/train-labels-idx1-ubyte.gz")
    te_x = read_idx(f"{SRC}/t10k-images-idx3-ubyte.gz")
    te_y = read_idx(f"{SRC}/t10k-labels-idx1-ubyte.gz")
    # stratified: the first 400 training images of each class, in original order
    idx = np.sort(np.concatenate([np.flatnonzero(tr_y == c)[:400] for c in range(10)]))
    out = os.path.join(HERE, "fashion")
    os.makedirs(out, exist_ok=True)
    write_idx(f"{out}/train-images-idx3-ubyte.gz", tr_x[idx])
    write_idx(f"{out}/train-labels-idx1-ubyte.gz", tr_y[idx])
    write_idx(f"{out}/t10k-images-idx3-ubyte.gz", te_x[:1000])
    write_idx(f"{out}/t10k-labels-idx1-ubyte.gz", te_y[:1000])
    with open(f"{out}/train_indices.txt", "w") as f:
        f.write("# Fashion-MNIST subset: line k (0-based, after this header) = index in Debian's\n")
        f.write("# train-images-idx3-ubyte.gz of training example k of this subset.\n")
        f.write("# Selection: the first 400 examples of each class, sorted by original index.\n")
        f.write("".join(f"{i}\n" for i in idx))
    with open(f"{out}/README.md", "w") as f:
        f.write(FASHION_README.format(
            counts=", ".join(str(int((tr_y[idx] == c).sum())) for c in range(10)),
            tcounts=", ".join(str(int((te_y[:1000] == c).sum())) for c in range(10)),
            first=int(idx[0]), last=int(idx[-1])))
    to_t = lambda x: torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    return (to_t(tr_x[idx]), torch.from_numpy(tr_y[idx].astype(np.int64)),
            to_t(te_x[:1000]), torch.from_numpy(te_y[:1000].astype(np.int64)), idx)


FASHION_README = """# Fashion-MNIST subset (test fixture)

Made by `testdata/make_testdata.py` from Debian's `dataset-fashion-mnist`
(/usr/share/datasets/fashion-mnist/, the original Zalando files), same IDX
gzip format and file names. Fashion-MNIST is MIT-licensed (Zalando Research).

| file | content |
|---|---|
| train-images-idx3-ubyte.gz / train-labels-idx1-ubyte.gz | 4000 training examples: the first 400 of each class of the original training set, kept in original order (original indices {first}..{last}) |
| t10k-images-idx3-ubyte.gz / t10k-labels-idx1-ubyte.gz | the first 1000 examples of the original test set (original indices 0..999) |
| train_indices.txt | '#' header, then one line per subset training example: its index in the original 60,000-example training set |

Per-class counts, training: {counts}; test: {tcounts}.
Labels: 0 T-shirt/top, 1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt,
7 Sneaker, 8 Bag, 9 Ankle boot. Pixels are uint8; the models take them as
float32 pixel/255 (no mean/std normalisation).
"""

# ---------------------------------------------------------------- models


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        sc = x if self.downsample is None else self.downsample(x)
        return F.relu(out + sc)


class ResNetSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = BasicBlock(16, 16, 1)
        self.layer2 = BasicBlock(16, 32, 2)
        self.layer3 = BasicBlock(32, 64, 2)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def fold_bn(model):
    """The BN-folded twin of a ResNetSmall: every Conv followed by a BN gets
    W*s and bias beta-mean*s with s = gamma/sqrt(var+eps); the BNs become
    Identity. Its parameters are what the default eval export stores."""
    m = copy.deepcopy(model).eval()
    pairs = [("conv1", "bn1")]
    for b in ("layer1", "layer2", "layer3"):
        pairs += [(f"{b}.conv1", f"{b}.bn1"), (f"{b}.conv2", f"{b}.bn2")]
        if getattr(m, b).downsample is not None:
            pairs.append((f"{b}.downsample.0", f"{b}.downsample.1"))
    for cname, bname in pairs:
        conv, bn = m.get_submodule(cname), m.get_submodule(bname)
        s = bn.weight.detach() / torch.sqrt(bn.running_var + bn.eps)
        new = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                        conv.padding, groups=conv.groups, bias=True)
        with torch.no_grad():
            new.weight.copy_(conv.weight * s.reshape(-1, 1, 1, 1))
            new.bias.copy_(bn.bias - bn.running_mean * s)
        parent, _, leaf = cname.rpartition(".")
        setattr(m.get_submodule(parent) if parent else m, leaf, new)
        parent, _, leaf = bname.rpartition(".")
        setattr(m.get_submodule(parent) if parent else m, leaf, nn.Identity())
    return m


class SE(nn.Module):
    """Squeeze-excitation: GAP -> 1x1 conv -> ReLU -> 1x1 conv -> gate -> scale."""

    def __init__(self, c, r, gate):
        super().__init__()
        self.fc1 = nn.Conv2d(c, r, 1)
        self.fc2 = nn.Conv2d(r, c, 1)
        self.gate = gate

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(F.relu(self.fc1(s))))


class VGGSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),       # 0-2   28x28
            nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),      # 3-5   28x28
            nn.MaxPool2d(3, 2, 1),                                                           # 6     14x14, overlapping
            nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False), nn.BatchNorm2d(32), nn.ReLU6(),  # 7-9 depthwise
            nn.Conv2d(32, 64, 1, bias=False), nn.BatchNorm2d(64), nn.Hardswish(),            # 10-12 pointwise
            SE(64, 16, nn.Hardsigmoid()),                                                    # 13
            nn.AvgPool2d(2),                                                                 # 14    7x7
            nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),                  # 15-17 (conv with bias)
            SE(64, 16, nn.Sigmoid()),                                                        # 18
            nn.AvgPool2d(2),                                                                 # 19    3x3
        )
        self.classifier = nn.Sequential(
            nn.Flatten(1), nn.Linear(64 * 9, 64), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class Attention(nn.Module):
    """Hand-written multi-head self-attention (separate q/k/v Linear layers)."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, D = x.shape
        h = self.heads
        q = self.q(x).reshape(B, T, h, D // h).transpose(1, 2)
        k = self.k(x).reshape(B, T, h, D // h).transpose(1, 2)
        v = self.v(x).reshape(B, T, h, D // h).transpose(1, 2)
        a = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(D // h)), dim=-1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(B, T, D)
        return self.proj(o)


class Block(nn.Module):
    """Pre-norm transformer encoder block. torch_mha: nn.MultiheadAttention
    (packed in_proj_weight) instead of the hand-written Attention."""

    def __init__(self, dim, heads, mlp, torch_mha):
        super().__init__()
        self.torch_mha = torch_mha
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True) if torch_mha else Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp)
        self.fc2 = nn.Linear(mlp, dim)

    def forward(self, x):
        y = self.norm1(x)
        y = self.attn(y, y, y, need_weights=False)[0] if self.torch_mha else self.attn(y)
        x = x + y
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))  # exact (erf) GELU


class ViTSmall(nn.Module):
    def __init__(self, dim=64, heads=4, mlp=128):
        super().__init__()
        self.patch = nn.Conv2d(1, dim, 7, 7)  # 28x28 -> 4x4 = 16 tokens
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, 17, dim) * 0.02)
        self.blocks = nn.Sequential(Block(dim, heads, mlp, True), Block(dim, heads, mlp, False))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.blocks(x)
        return self.head(self.norm(x[:, 0]))


# ---------------------------------------------------------------- training

RECIPES = {  # SGD momentum 0.9, batch 128, cosine LR per step to 0
    "resnet_small": dict(epochs=8, lr=0.05, wd=5e-4),
    "vgg_small": dict(epochs=8, lr=0.05, wd=5e-4),
    "vit_small": dict(epochs=12, lr=0.03, wd=1e-4),
}


def train(model, x, y, epochs, lr, wd, seed):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=wd)
    n = len(x)
    steps = epochs * math.ceil(n / 128)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)))
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=g)
        for i in range(0, n, 128):
            b = perm[i:i + 128]
            opt.zero_grad()
            F.cross_entropy(model(x[b]), y[b]).backward()
            opt.step()
            sched.step()
    return model.eval()


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    pred = torch.cat([model(x[i:i + 500]).argmax(1) for i in range(0, len(x), 500)])
    return float((pred == y).float().mean())


# ---------------------------------------------------------------- export


def export_train(model, path, opset):
    """The recommended export: TrainingMode.TRAINING, no constant folding, so
    every initializer keeps its state_dict name and BN keeps its node.
    Tracing runs ONE train-mode forward on the dummy input, which moves the
    BN running stats by one momentum-0.1 step towards the dummy batch's
    statistics, and the exporter writes the *updated* buffers of the module
    it traced (the deepcopy only protects `model`). We therefore overwrite
    the running_mean/running_var initializers with the true values after
    export and check every initializer against the state_dict."""
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


def export_eval(model, path, opset):
    """The default export (eval mode, constant folding on)."""
    torch.onnx.export(copy.deepcopy(model).eval(), torch.zeros(2, 1, 28, 28), path, opset_version=opset,
                      input_names=["input"], output_names=["logits"], dynamic_axes=DYN)


def initializer_map(path, twin):
    """Map every float initializer of the ONNX file to a parameter of the
    PyTorch module `twin` that computes the same function: by name, or by
    value (exact, or as the transpose for onnx::MatMul_N weights). Returns
    {onnx name: (param name, transposed)} and the list of unmatched names."""
    m = onnx.load(path)
    params = dict(twin.named_parameters())
    out, other = {}, []
    for init in m.graph.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype != np.float32:
            other.append(init.name)
            continue
        if init.name in params:
            assert np.array_equal(params[init.name].detach().numpy(), a), init.name
            out[init.name] = (init.name, False)
            continue
        hit = None
        for pn, p in params.items():
            v = p.detach().numpy()
            if v.shape == a.shape and np.allclose(v, a, rtol=1e-5, atol=1e-6):
                hit = (pn, False)
            elif v.ndim == 2 and v.T.shape == a.shape and np.array_equal(v.T, a):
                hit = (pn, True)
            if hit:
                break
        if hit:
            out[init.name] = hit
            p = params[hit[0]]
            if not hit[1] and not np.array_equal(p.detach().numpy(), a):
                # BN-folded weights: use the exported values bit for bit
                with torch.no_grad():
                    p.copy_(torch.from_numpy(a))
        else:
            other.append(init.name)
    return out, other


def onnx_summary(path):
    m = onnx.load(path)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    bn = [n for n in m.graph.node if n.op_type == "BatchNormalization"]
    bn_desc = None
    if bn:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in bn[0].attribute}
        bn_desc = {"outputs": len(bn[0].output), "attributes": {k: (round(v, 6) if isinstance(v, float) else v)
                                                                for k, v in attrs.items()}}
    idents = [(n.input[0], n.output[0]) for n in m.graph.node if n.op_type == "Identity"]
    return {
        "opset": m.opset_import[0].version,
        "inputs": [i.name for i in m.graph.input],
        "outputs": [o.name for o in m.graph.output],
        "initializers": [(i.name, list(i.dims)) for i in m.graph.initializer],
        "ops": ops, "batchnorm": bn_desc, "identity": idents,
        "bytes": os.path.getsize(path),
    }


# ---------------------------------------------------------------- references


def grads(twin, mapping, x, y, train_mode):
    """d mean-CE / d initializer, keyed by ONNX initializer name. Computed in
    float64 from the float32 weights, so that the reference is the exact
    gradient rounded once to float32 and the Go parity tests measure our own
    float32 error, not the sum of ours and PyTorch's."""
    m = copy.deepcopy(twin).double()
    x = x.double()
    m.train(train_mode)
    if train_mode:  # dropout would be random: disable it for reference grads
        for mod in m.modules():
            if isinstance(mod, nn.Dropout):
                mod.p = 0.0
    m.zero_grad()
    F.cross_entropy(m(x), y).backward()
    p = dict(m.named_parameters())
    out = {}
    for name, (pn, tr) in mapping.items():
        g = p[pn].grad.detach()
        out[name] = (g.t() if tr else g).contiguous().numpy().astype(np.float32)
    return out


def del_scores(twin, mapping, x, y, ids):
    """s_j = |sum_batches theta_j * g_j|, eval mode, forget-set batches of 128
    in ids order (the last batch is smaller)."""
    m = copy.deepcopy(twin).double().eval()  # float64, as in grads()
    x = x.double()
    p = dict(m.named_parameters())
    acc = {pn: torch.zeros_like(v) for pn, v in p.items()}
    for i in range(0, len(ids), 128):
        b = torch.as_tensor(ids[i:i + 128])
        m.zero_grad()
        F.cross_entropy(m(x[b]), y[b]).backward()
        for pn, v in p.items():
            acc[pn] += v.detach() * v.grad.detach()
    out = {}
    for name, (pn, tr) in mapping.items():
        s = acc[pn].abs()
        out[name] = (s.t() if tr else s).contiguous().numpy().astype(np.float32)
    return out


def write_ids(path, ids, header):
    with open(path, "w") as f:
        for line in header:
            f.write(f"# {line}\n")
        f.write("".join(f"{i}\n" for i in ids))


def main():
    t0 = time.time()
    os.makedirs(os.path.join(HERE, "ref"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "demo"), exist_ok=True)
    P = lambda *a: os.path.join(HERE, *a)
    xtr, ytr, xte, yte, _ = make_subset()
    print(f"data: train {tuple(xtr.shape)} test {tuple(xte.shape)}", flush=True)

    # forget sets (0-based indices into the subset's training split)
    rng = np.random.default_rng(SEED)
    cls = np.flatnonzero(np.isin(ytr.numpy(), [2, 5]))
    forget_non = np.sort(rng.choice(cls, size=len(cls) // 2, replace=False))
    forget_iid = np.sort(rng.choice(len(ytr), size=len(ytr) // 10, replace=False))
    write_ids(P("demo", "forget_nonIID.txt"), forget_non, [
        "forget set (non-IID): a random half of the training examples of classes 2 (Pullover) and 5 (Sandal)",
        f"of testdata/fashion (0-based indices into its 4000-example training split); {len(forget_non)} ids;",
        f"numpy.random.default_rng({SEED}).choice, sorted; made by testdata/make_testdata.py"])
    write_ids(P("demo", "forget_iid.txt"), forget_iid, [
        "forget set (IID): a random 10% of the training examples of testdata/fashion",
        f"(0-based indices into its 4000-example training split); {len(forget_iid)} ids;",
        f"same generator as forget_nonIID.txt, drawn after it; made by testdata/make_testdata.py"])
    retain = np.setdiff1d(np.arange(len(ytr)), forget_non)

    # fixed reference batch: the first 16 test-subset images
    bx, by = xte[:16].clone(), yte[:16].clone()
    np.savez(P("ref", "batch.npz"), x=bx.numpy(), y=by.numpy())

    manifest = {"seed": SEED, "torch": torch.__version__, "onnx": onnx.__version__, "models": {}}

    # ---- train
    trained, inits, timing = {}, {}, {}
    for name, ctor in [("resnet_small", ResNetSmall), ("vgg_small", VGGSmall), ("vit_small", ViTSmall)]:
        torch.manual_seed(SEED)
        model = ctor()
        inits[name] = copy.deepcopy(model.state_dict())
        ts = time.time()
        train(model, xtr, ytr, seed=SEED + 1, **RECIPES[name])
        timing[name] = time.time() - ts
        trained[name] = model
        print(f"{name}: params {sum(p.numel() for p in model.parameters())} "
              f"train {accuracy(model, xtr, ytr):.4f} test {accuracy(model, xte, yte):.4f} "
              f"({timing[name]:.0f}s)", flush=True)

    # oracle: same init and recipe, retain set only
    torch.manual_seed(SEED)
    oracle = ResNetSmall()
    oracle.load_state_dict(inits["resnet_small"])
    ts = time.time()
    rt = torch.as_tensor(retain)
    train(oracle, xtr[rt], ytr[rt], seed=SEED + 1, **RECIPES["resnet_small"])
    timing["oracle_resnet_small"] = time.time() - ts

    # ---- export
    res, vgg, vit = trained["resnet_small"], trained["vgg_small"], trained["vit_small"]
    patched = {}
    export_eval(res, P("resnet_small_fused.onnx"), 13)
    patched["resnet_small_train"] = export_train(res, P("resnet_small_train.onnx"), 17)
    patched["vgg_small"] = export_train(vgg, P("vgg_small.onnx"), 13)
    patched["vit_small"] = export_train(vit, P("vit_small.onnx"), 17)
    export_eval(vit, P("vit_small_op13.onnx"), 13)
    patched["oracle_resnet_small"] = export_train(oracle, P("demo", "oracle_resnet_small.onnx"), 17)
    torch.manual_seed(SEED)
    export_eval(ViTSmall(), P("vit_small_untrained_op13.onnx"), 13)  # shows Identity-merged initializers

    models = {  # name -> (file, PyTorch twin whose parameters are the file's initializers)
        "resnet_small_fused": ("resnet_small_fused.onnx", fold_bn(res)),
        "resnet_small_train": ("resnet_small_train.onnx", res),
        "vgg_small": ("vgg_small.onnx", vgg),
        "vit_small": ("vit_small.onnx", vit),
        "vit_small_op13": ("vit_small_op13.onnx", vit),
        "oracle_resnet_small": (os.path.join("demo", "oracle_resnet_small.onnx"), oracle),
    }
    fset = torch.as_tensor(forget_non)
    for name, (fname, twin) in models.items():
        twin.eval()
        mapping, other = initializer_map(P(fname), twin)
        info = onnx_summary(P(fname))
        logits = twin(bx).detach().numpy().astype(np.float32)
        tm = copy.deepcopy(twin).train()  # train mode: BN batch statistics, dropout off
        for mod in tm.modules():
            if isinstance(mod, nn.Dropout):
                mod.p = 0.0
        logits_train = tm(bx).detach().numpy().astype(np.float32)
        np.savez(P("ref", f"{name}_logits.npz"), logits=logits, logits_train=logits_train)
        params = {k: v for k, v in mapping.items()}
        np.savez(P("ref", f"{name}_grads_eval.npz"), **grads(twin, params, bx, by, False))
        np.savez(P("ref", f"{name}_grads_train.npz"), **grads(twin, params, bx, by, True))
        np.savez(P("ref", f"{name}_del_scores.npz"), **del_scores(twin, params, xtr, ytr, forget_non))
        n_params = sum(int(np.prod(d)) for n, d in info["initializers"] if n in mapping)
        info.update({
            "file": fname, "params": n_params,
            "train_acc": accuracy(twin, xtr, ytr), "test_acc": accuracy(twin, xte, yte),
            "forget_nonIID_acc": accuracy(twin, xtr[fset], ytr[fset]),
            "retain_acc": accuracy(twin, xtr[rt], ytr[rt]),
            "initializer_to_pytorch": {k: (v[0] + (".T" if v[1] else "")) for k, v in mapping.items() if k != v[0]},
            "non_parameter_initializers": other,
            "running_stats_patched_after_export": patched.get(name, 0),
        })
        manifest["models"][name] = info
        print(f"{fname}: {n_params} params in {len(mapping)} initializers, other {other}, "
              f"patched {patched.get(name, 0)}, {info['bytes']} bytes", flush=True)
    manifest["models"]["vit_small_untrained_op13"] = onnx_summary(P("vit_small_untrained_op13.onnx"))

    # BN running stats after ONE train-mode forward on the batch (momentum 0.1,
    # unbiased variance), keyed by initializer name
    m = copy.deepcopy(res).train()
    with torch.no_grad():
        m(bx)
    np.savez(P("ref", "resnet_small_train_bnstats.npz"),
             **{k: v.numpy().astype(np.float32) for k, v in m.state_dict().items() if "running_" in k})

    manifest["train_seconds"] = {k: round(v, 1) for k, v in timing.items()}
    manifest["recipes"] = RECIPES
    manifest["total_seconds"] = round(time.time() - t0, 1)
    with open(P("ref", "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print(f"done in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
