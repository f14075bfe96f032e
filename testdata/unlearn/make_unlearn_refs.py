#!/usr/bin/python3
"""PyTorch references for the unlearning algorithms (unlearn/algo_ref_test.go).

Run from the repository root with Debian's Python (python3-torch 1.13,
python3-onnx, python3-numpy):

    /usr/bin/python3 testdata/unlearn/make_unlearn_refs.py

Each case runs one algorithm from testdata/resnet_small_train.onnx (weights
loaded into make_testdata.py's ResNetSmall by state_dict name) on a few
examples of testdata/fashion, with sets small enough that every pass is one
batch or a fixed sequence of batches, so that the Go run sees the same
batches. The reference is computed in float64 from the float32 weights, so
the Go tests measure our float32 error against the exact result.

Masked SGD (what train.SGD does): for elements inside the mask
g' = g + wd*theta; buf = g' on the first step, else mu*buf + g';
theta -= lr*buf; elements outside the mask never change.

Cases (ids index testdata/fashion's training split; F = forget_nonIID.txt,
R = the other examples, both in ascending order):
  neggrad+   F[0:64], R[0:128]: one step of 0.99*CE(R) - 0.01*CE(F), train
             mode (two forwards, retain first), lr 0.05, momentum 0.9,
             weight decay 5e-4.
  l1-sparse  R[128:256]: one step of CE + 1e-3*||theta||_1 (all parameters),
             train mode, lr 0.05, momentum 0.9.
  scrub      F[64:96], R[256:384]: one max-step (-KL_T on F) then one
             min-step (0.99*CE + 0.5*KL_T on R), T 4, teacher = original in
             eval mode, student in train mode, lr 0.01, momentum 0.9,
             weight decay 5e-4.
  ssd        F[100:300], R[400:700]: eval mode; importance = mean over
             batches of 128 (F in order; F u R sorted) of grad^2; alpha 10,
             lambda 1.
  iu         F[300:400], R[700:900]: SalUn's Wfisher with batches of 128,
             20 WoodFisher samples, N 1000, alpha 1e-3.
The mask: a random half (numpy default_rng(20250102)) of the elements of
MASKED; other parameters are frozen.

Writes testdata/unlearn/refs.npz: "ids/<case>/forget", "ids/<case>/retain"
(int64), "mask/<param>" (uint8), "<case>/<param>" (float32 values after the
run, MASKED parameters) and "<case>/running/<name>" (running statistics
after the run, training cases).
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

torch.set_num_threads(2)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
from make_testdata import ResNetSmall, read_idx  # noqa: E402

MASKED = ["layer1.conv2.weight", "layer2.bn1.weight", "layer2.bn1.bias",
          "layer2.conv2.weight", "fc.weight", "fc.bias"]


def load_model():
    m = onnx.load(os.path.join(ROOT, "testdata", "resnet_small_train.onnx"))
    sd = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in m.graph.initializer}
    model = ResNetSmall()
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert all(k.endswith("num_batches_tracked") for k in missing), missing
    return model.double()


def load_data():
    d = os.path.join(ROOT, "testdata", "fashion")
    x = read_idx(f"{d}/train-images-idx3-ubyte.gz").astype(np.float32) / np.float32(255)
    y = read_idx(f"{d}/train-labels-idx1-ubyte.gz").astype(np.int64)
    return torch.from_numpy(x).unsqueeze(1).double(), torch.from_numpy(y)


def read_ids(path):
    with open(path) as f:
        return np.array([int(l) for l in f if l.strip() and not l.startswith("#")], dtype=np.int64)


class MaskedSGD:
    def __init__(self, model, mask, lr, mu, wd):
        self.p = dict(model.named_parameters())
        self.mask, self.lr, self.mu, self.wd = mask, lr, mu, wd
        self.buf = {}

    @torch.no_grad()
    def step(self, lr=None):
        lr = self.lr if lr is None else lr
        for name, m in self.mask.items():
            p = self.p[name]
            g = p.grad + self.wd * p
            if self.mu:
                if name in self.buf:
                    self.buf[name] = self.mu * self.buf[name] + g
                else:
                    self.buf[name] = g.clone()
                g = self.buf[name]
            p.copy_(torch.where(m, p - lr * g, p))


def kl_t(s, t, T):
    return F.kl_div(F.log_softmax(s / T, 1), F.softmax(t / T, 1), reduction="sum") * T * T / s.shape[0]


def snapshot(out, case, model, running):
    sd = model.state_dict()
    for name in MASKED:
        out[f"{case}/{name}"] = sd[name].float().numpy()
    if running:
        for name, v in sd.items():
            if name.endswith("running_mean") or name.endswith("running_var"):
                out[f"{case}/running/{name}"] = v.float().numpy()


def main():
    x, y = load_data()
    f_all = read_ids(os.path.join(ROOT, "testdata", "demo", "forget_nonIID.txt"))
    r_all = np.setdiff1d(np.arange(len(y)), f_all)
    base = load_model()
    rng = np.random.default_rng(20250102)
    mask = {n: torch.from_numpy(rng.random(tuple(base.state_dict()[n].shape)) < 0.5) for n in MASKED}
    out = {f"mask/{n}": m.numpy().astype(np.uint8) for n, m in mask.items()}
    ce = F.cross_entropy

    def ids(case, fi, ri):
        out[f"ids/{case}/forget"] = fi
        out[f"ids/{case}/retain"] = ri
        return torch.as_tensor(fi), torch.as_tensor(ri)

    # neggrad+
    fi, ri = ids("neggrad+", f_all[0:64], r_all[0:128])
    m = load_model().train()
    opt = MaskedSGD(m, mask, 0.05, 0.9, 5e-4)
    loss = 0.99 * ce(m(x[ri]), y[ri]) - (1 - 0.99) * ce(m(x[fi]), y[fi])
    loss.backward()
    opt.step()
    snapshot(out, "neggrad+", m, True)

    # l1-sparse
    fi, ri = ids("l1-sparse", f_all[0:0], r_all[128:256])
    m = load_model().train()
    opt = MaskedSGD(m, mask, 0.05, 0.9, 0.0)
    l1 = sum(p.abs().sum() for p in m.parameters())
    loss = ce(m(x[ri]), y[ri]) + 1e-3 * l1
    loss.backward()
    opt.step()
    snapshot(out, "l1-sparse", m, True)

    # scrub
    fi, ri = ids("scrub", f_all[64:96], r_all[256:384])
    teacher = load_model().eval()
    with torch.no_grad():
        tf, tr = teacher(x[fi]), teacher(x[ri])
    m = load_model().train()
    opt = MaskedSGD(m, mask, 0.01, 0.9, 5e-4)
    (-kl_t(m(x[fi]), tf, 4.0)).backward()
    opt.step()
    m.zero_grad()
    s = m(x[ri])
    (0.99 * ce(s, y[ri]) + 0.5 * kl_t(s, tr, 4.0)).backward()
    opt.step()
    snapshot(out, "scrub", m, True)

    # ssd
    fi, ri = ids("ssd", f_all[100:300], r_all[400:700])
    m = load_model().eval()
    params = dict(m.named_parameters())

    def importance(idx):
        imp = {n: torch.zeros_like(p) for n, p in params.items()}
        nb = 0
        for i in range(0, len(idx), 128):
            b = idx[i:i + 128]
            m.zero_grad()
            ce(m(x[b]), y[b]).backward()
            for n, p in params.items():
                imp[n] += p.grad.detach() ** 2
            nb += 1
        return {n: v / nb for n, v in imp.items()}

    full = torch.as_tensor(np.sort(np.concatenate([fi.numpy(), ri.numpy()])))
    imp_f, imp_d = importance(fi), importance(full)
    with torch.no_grad():
        for n in MASKED:
            sel = mask[n] & (imp_f[n] > 10 * imp_d[n])
            w = torch.clamp(1.0 * imp_d[n] / imp_f[n], max=1.0)
            params[n].copy_(torch.where(sel, params[n] * w, params[n]))
    snapshot(out, "ssd", m, False)

    # iu (SalUn's Wfisher)
    fi, ri = ids("iu", f_all[300:400], r_all[700:900])
    m = load_model().eval()
    plist = list(m.parameters())

    def flat_grad(b):
        m.zero_grad()
        ce(m(x[b]), y[b]).backward()
        return torch.cat([p.grad.detach().reshape(-1) for p in plist])

    def grad_sum(idx):
        s = 0
        for i in range(0, len(idx), 128):
            b = idx[i:i + 128]
            s = s + flat_grad(b) * len(b)
        return s

    nf, nr = len(fi), len(ri)
    g_f = grad_sum(fi) / (nf + nr)
    g_r = grad_sum(ri) * (nf / ((nf + nr) * nr))
    k = g_f - g_r
    N = 1000.0
    o = None
    for s_ in range(20):
        g = flat_grad(ri[s_:s_ + 1])
        if o is None:
            o = g.clone()
        else:
            t = torch.dot(o, g)
            k = k - (torch.dot(k, g) / (N + t)) * o
            o = o - (t / (N + t)) * o
    with torch.no_grad():
        cur = 0
        for (n, p) in m.named_parameters():
            step = (1e-3 * k[cur:cur + p.numel()]).reshape(p.shape)
            if n in mask:
                p.copy_(torch.where(mask[n], p + step, p))
            cur += p.numel()
    snapshot(out, "iu", m, False)

    np.savez_compressed(os.path.join(HERE, "refs.npz"), **out)
    print("wrote", os.path.join(HERE, "refs.npz"), len(out), "arrays")


if __name__ == "__main__":
    main()
