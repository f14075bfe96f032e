#!/usr/bin/python3
"""Probe a training recipe for the ResNet-18 regime without writing a model.

Trains seed 0's original as train.py does (same data, network, augmentation,
initialisation and data-order stream, SGD momentum 0.9, weight decay 5e-4,
cosine per step over the schedule's epochs) with the batch size and peak
rate given, prints each epoch's training loss and accuracy (augmented
batches) and test accuracy, and at the end the accuracy on the training
split itself (unaugmented: how far the network fits the examples a forget
set is drawn from), so that recipes can be compared before the regime's
twelve models are trained with one (NOTES.md, "A recipe that fits").

  nice /usr/bin/python3 regimes/resnet18/probe_recipe.py BATCH LR [--epochs E] [--run R] [--device D]

e.g. `probe_recipe.py 32 0.05 --epochs 15`: a cosine schedule over E epochs
(default 15), of which the first R run (default all); one thread on the
CPU, as the regime's trainings; --device cuda on a GPU machine.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train as T  # noqa: E402  (the regime's own data, network and augmentation)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("batch", type=int)
    p.add_argument("lr", type=float)
    p.add_argument("--epochs", type=int, default=15, help="the cosine schedule's length")
    p.add_argument("--run", type=int, help="epochs to run (default: all)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    bs, lr, epochs = a.batch, a.lr, a.epochs
    torch.set_num_threads(a.threads)
    xtr, ytr, xte, yte, mean, std = T.load_data()
    torch.manual_seed(0)
    model = T.resnet18().to(a.device)
    gen = torch.Generator().manual_seed(1000)
    steps = (len(xtr) + bs - 1) // bs
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * steps)
    tag = f"batch {bs} lr {lr} epochs {epochs} on {a.device}"
    start = time.time()
    for ep in range(a.run or epochs):
        t0 = time.time()
        loss, train_acc = T.train_epoch(model, opt, sched, xtr, ytr, gen, bs, mean, std)
        dt = time.time() - t0
        test = T.accuracy(model, xte, yte, mean, std)
        print(f"{tag}: epoch {ep + 1}/{epochs} loss {loss:.3f} train {train_acc:.3f} test {test:.3f} ({dt:.0f} s)", flush=True)
    print(f"{tag}: final: training split {T.accuracy(model, xtr, ytr, mean, std):.4f}, "
          f"test {T.accuracy(model, xte, yte, mean, std):.4f}, {time.time() - start:.0f} s, torch {torch.__version__}", flush=True)


if __name__ == "__main__":
    main()
