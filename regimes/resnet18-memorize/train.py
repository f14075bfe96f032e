#!/usr/bin/python3
"""The resnet18-memorize regime's originals and oracles (issue 63, item 1a).

regimes/resnet18's network (torchvision's ResNet-18 with the CIFAR-style
stem, 11.2M parameters) and images (32×32 RGB made from Fashion-MNIST by
regimes/resnet18/train.py's upsampling and per-image tint), trained so that
it memorizes, as CIFAR ResNet-18s do: WITHOUT augmentation and on FEWER
images (the first N_TRAIN of regimes/resnet18's 5,000, the same 2,000 test
images), with regimes/resnet18's optimizer (SGD lr 0.05, momentum 0.9,
weight decay 5e-4, per-step cosine to 0, batch 32) for RECIPE's epochs.

The training loop, sidecars, resuming, forget sets and the `gap` command are
regimes/fashion-mnist-memorize/train.py's (its docstring says how each step
works); this file gives them this regime's data, network and recipe:
  train.py data
  train.py train --seed S [--forget SET] [--epochs E]
  train.py all [--seeds 0 1 2]
  train.py gap [--markdown]

Run niced, pinned to one core, one thread, in the background (run.sh beside
this file does that and commits each sidecar as it is written).
"""
import importlib.util
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REGIMES = os.path.dirname(HERE)


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


memo = load("memo_train", os.path.join(REGIMES, "fashion-mnist-memorize", "train.py"))
r18 = load("r18_train", os.path.join(REGIMES, "resnet18", "train.py"))

N_TRAIN = 2500
N_TEST = 2000
# regimes/resnet18's optimizer and batch without its augmentation; the
# epochs are the probe's (NOTES.md, "Recipe"): seed 0's original trained
# with them fits its training split to ≥ 99 %.
RECIPE = dict(epochs=25, lr=0.05, batch_size=32, momentum=0.9, weight_decay=5e-4, schedule="cosine",
              augment="none")
FORGET_SETS = {  # name: (kind, fraction, classes)
    "iid": ("iid", 0.1, None),
    "non-iid": ("non-iid", 0.5, [2, 5]),
}


def arrays():
    """regimes/resnet18's images (its generator draws the 5,000 training
    images' tints, then the 2,000 test images'), of which the first N_TRAIN
    training images: the same pixels as regimes/resnet18's npz."""
    xtr = memo.read_idx(os.path.join(memo.FMNIST, "train-images-idx3-ubyte.gz"))[:r18.N_TRAIN]
    ytr = memo.read_idx(os.path.join(memo.FMNIST, "train-labels-idx1-ubyte.gz"))[:r18.N_TRAIN]
    xte = memo.read_idx(os.path.join(memo.FMNIST, "t10k-images-idx3-ubyte.gz"))[:r18.N_TEST]
    yte = memo.read_idx(os.path.join(memo.FMNIST, "t10k-labels-idx1-ubyte.gz"))[:r18.N_TEST]
    rng = np.random.Generator(np.random.PCG64(20261127))
    x_train, x_test = r18.make_rgb(xtr, rng), r18.make_rgb(xte, rng)
    return dict(x_train=np.ascontiguousarray(x_train[:N_TRAIN]), y_train=ytr[:N_TRAIN].astype(np.int64),
                x_test=np.ascontiguousarray(x_test[:N_TEST]), y_test=yte[:N_TEST].astype(np.int64))


REGIME = memo.Regime(
    here=HERE, name="resnet18-memorize", npz_name="fmnist32-2500.npz", make_arrays=arrays,
    make_model=r18.resnet18, input_shape=(3, 32, 32), recipe=RECIPE, forget_sets=FORGET_SETS, seeds=range(3),
    data_note=f"the first {N_TRAIN} training images of regimes/resnet18's data and its {N_TEST} test images",
    eval_train_each_epoch=False)

if __name__ == "__main__":
    memo.main(REGIME)
