#!/usr/bin/python3
"""Probe a training recipe for the ResNet-18 regime without writing a model.

Trains seed 0's original as train.py does (same data, network, augmentation,
initialisation and data-order stream, SGD momentum 0.9, weight decay 5e-4,
cosine per step over 15 epochs) but with the batch size and peak rate given,
and prints each epoch's training loss and accuracy (augmented batches) and
test accuracy, so that recipes can be compared before the regime's twelve
models are trained with one (NOTES.md, "A recipe that fits").

  nice /usr/bin/python3 experiments/resnet18/probe_recipe.py BATCH LR [EPOCHS_TO_RUN]

e.g. `probe_recipe.py 32 0.05 15`. One thread, as the regime's trainings.
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train as T  # noqa: E402  (the regime's own data, network and augmentation)


def main():
    bs, lr = int(sys.argv[1]), float(sys.argv[2])
    run = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    epochs = 15
    torch.set_num_threads(1)
    xtr, ytr, xte, yte, mean, std = T.load_data()
    torch.manual_seed(0)
    model = T.resnet18()
    gen = torch.Generator().manual_seed(1000)
    steps = (len(xtr) + bs - 1) // bs
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * steps)
    for ep in range(run):
        t0 = time.time()
        loss, train_acc = T.train_epoch(model, opt, sched, xtr, ytr, gen, bs, mean, std)
        dt = time.time() - t0
        test = T.accuracy(model, xte, yte, mean, std)
        print(f"batch {bs} lr {lr}: epoch {ep + 1}/{epochs} loss {loss:.3f} "
              f"train {train_acc:.3f} test {test:.3f} ({dt:.0f} s)", flush=True)

if __name__ == "__main__":
    main()
