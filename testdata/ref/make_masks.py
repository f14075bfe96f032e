#!/usr/bin/python3
"""DEL masks by an independent NumPy implementation of the selection rule.

Input: the PyTorch DEL scores s_j = |sum_B theta_j * g_j(B)| committed in
testdata/ref/<model>_del_scores.npz (make_testdata.py), keyed by state_dict
name in module registration order. Neurons come from the PyTorch module
structure, not from the ONNX graph: a Conv/Linear weight (2 or more dims)
starts a layer whose neurons are its output channels (axis 0); the same
module's bias, and the 1-D weight and bias of the module registered right
after it (its BatchNorm), join the same channels.

Rule (docs/DESIGN.md "The method", steps 2-3): a neuron's score is the mean of
its h largest element scores over all the parameters it owns,
h = max(1, floor(0.1 * C_out)) (or --topk), capped at the neuron's size;
neurons sorted by score descending (ties: layer order, then channel); the
longest prefix whose parameter count stays within floor(budget * p).

Output: testdata/ref/del_masks.json, per model and case the number of
selected parameters and, per layer (named by its weight), the chosen
channels. localize's TestDELMaskMatchesNumPy feeds the same scores to the
Go selection and compares.

Run from the repository root: /usr/bin/python3 testdata/ref/make_masks.py
"""
import json
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet_small_train", "vgg_small"]
CASES = [dict(budget=b, topk=0) for b in (0.01, 0.05, 0.1, 0.3, 0.5)] + [
    dict(budget=0.1, topk=1), dict(budget=0.3, topk=3)]


def module(name):
    return name.rsplit(".", 1)[0]


def layers_of(scores):
    names = list(scores.keys())
    layers = []  # [weight name, channels, [member names]]
    mods = []
    for n in names:
        if module(n) not in mods:
            mods.append(module(n))
    for i, mod in enumerate(mods):
        w = mod + ".weight"
        if w in scores and scores[w].ndim >= 2:
            members = [w] + ([mod + ".bias"] if mod + ".bias" in scores else [])
            if i + 1 < len(mods):
                nxt = mods[i + 1]
                nw = scores.get(nxt + ".weight")
                if nw is not None and nw.ndim == 1 and nw.shape[0] == scores[w].shape[0]:
                    members += [nxt + ".weight", nxt + ".bias"]
            layers.append((w, scores[w].shape[0], members))
    claimed = {m for _, _, ms in layers for m in ms}
    assert claimed == set(names), sorted(set(names) - claimed)
    return layers


def select(scores, budget, topk):
    layers = layers_of(scores)
    total = sum(v.size for v in scores.values())
    limit = math.floor(budget * total)
    neurons = []
    for li, (w, c_out, members) in enumerate(layers):
        h0 = topk if topk > 0 else max(1, math.floor(0.1 * c_out))
        for c in range(c_out):
            vals = np.concatenate([scores[m][c].astype(np.float64).ravel() for m in members])
            h = min(h0, vals.size)
            top = np.sort(vals)[::-1][:h]
            s = 0.0
            for v in top:
                s += v
            neurons.append((-(s / h), li, c, vals.size))
    neurons.sort()
    used, chosen = 0, {}
    for _, li, c, size in neurons:
        if used + size > limit:
            break
        used += size
        chosen.setdefault(layers[li][0], []).append(c)
    return dict(budget=budget, topk=topk, limit=limit, selected=used,
                layers={k: sorted(v) for k, v in chosen.items()})


def main():
    out = {}
    for m in MODELS:
        z = np.load(os.path.join(HERE, m + "_del_scores.npz"))
        scores = {k: z[k] for k in z.files}
        out[m] = [select(scores, **c) for c in CASES]
    with open(os.path.join(HERE, "del_masks.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    for m in MODELS:
        print(m, [(c["budget"], c["topk"], c["selected"]) for c in out[m]])


if __name__ == "__main__":
    main()
