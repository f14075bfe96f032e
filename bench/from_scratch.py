#!/usr/bin/python3
"""PyTorch side of the from-scratch training comparison (bench/from_scratch.sh):
the small ResNet of testdata/make_testdata.py trained for EPOCHS epochs on the
bundled Fashion-MNIST subset with the recipe `unlearn train` uses by default
(SGD momentum 0.9, weight decay 5e-4, batch 128, lr 0.05 cosine per step to
0, BN in training mode), from PyTorch's default initialisation, for several
seeds. Prints one JSON line per seed with the test accuracy."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata"))
import make_testdata as mt  # noqa: E402

torch.set_num_threads(int(os.environ.get("THREADS", "2")))
epochs = int(os.environ.get("EPOCHS", "3"))
seeds = [int(s) for s in os.environ.get("SEEDS", "0,1,2").split(",")]
xtr, ytr, xte, yte, _ = mt.make_subset()
for seed in seeds:
    torch.manual_seed(seed)
    model = mt.ResNetSmall()
    mt.train(model, xtr, ytr, epochs=epochs, lr=0.05, wd=5e-4, seed=seed + 1)
    print(json.dumps({"seed": seed, "epochs": epochs,
                      "train_acc": mt.accuracy(model, xtr, ytr),
                      "test_acc": mt.accuracy(model, xte, yte)}), flush=True)
