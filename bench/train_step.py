#!/usr/bin/python3
"""PyTorch side of the training-step benchmark (bench/train_step.sh).

One step = forward in train mode, mean cross-entropy, backward, SGD
(momentum 0.9) update, on one fixed random batch. Prints one JSON line:
model, threads, batch, median step seconds, images/s, peak RSS (VmHWM) in MB,
the RSS before the first step (base_mb: interpreter, libraries, model,
batch), the cores other processes kept busy meanwhile (others_cores) and the
median CPU seconds of the process per step (cpu_s: with one thread, a
measure that other processes on the machine barely disturb). Run one model per process so that peak memory is per model:

  /usr/bin/python3 bench/train_step.py --model resnet18 --threads 2

With --mask S (ResNet-18 only) the step is a masked one (bench/masked_step.sh):
max(1, round(S*C)) of the C output channels of every Conv2d and Linear are
selected at random (seeded; with the following BatchNorm2d's scale and shift),
and after the full backward every gradient is multiplied by its mask before
SGD's update (PyTorch computes whole gradients: autograd has no notion of
selected output channels). Every tensor has a selected channel, so setting
requires_grad=False where nothing is selected changes nothing here.
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models  # noqa: E402


def status_mb(field):
    """A memory field of /proc/self/status (VmHWM: peak RSS, VmRSS: RSS now), in MB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def busy_seconds():
    """CPU seconds the whole machine has spent busy so far (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def own_seconds():
    t = os.times()
    return t.user + t.system


def channel_masks(model, share, seed):
    """(parameter, 0/1 mask) pairs selecting max(1, round(share*C)) random output
    channels of every Conv2d and Linear, and the same channels of the BatchNorm2d
    that follows a Conv2d (torchvision's ResNet names: convN -> bnN,
    downsample.0 -> downsample.1)."""
    g = torch.Generator().manual_seed(seed)
    mods = dict(model.named_modules())
    chosen, out = {}, []
    for name, m in mods.items():
        if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
            c = m.weight.shape[0]
            chosen[name] = torch.randperm(c, generator=g)[:max(1, round(share * c))]
    for name, m in mods.items():
        if isinstance(m, torch.nn.BatchNorm2d):
            src = name[:-1] + "0" if name.endswith("downsample.1") else name.replace("bn", "conv")
            sel = chosen[src]
        elif name in chosen:
            sel = chosen[name]
        else:
            continue
        for p in (m.weight, m.bias):
            if p is not None:
                mk = torch.zeros_like(p)
                mk[sel] = 1
                out.append((p, mk))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, choices=make_models.MODELS)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--mask", type=float, default=0, help="masked step: share of every layer's output channels")
    ap.add_argument("--mask-seed", type=int, default=1)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                    help="cuda: model and batch on the GPU, fp32 (TF32 off), each step synchronized before its time is read")
    a = ap.parse_args()
    if a.device == "cuda":
        # fp32 as the ONNX Runtime side computes it: no TF32 in matmul or cuDNN.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True

    torch.set_num_threads(a.threads)
    model = make_models.build(a.model)
    torch.set_num_threads(a.threads)  # importing make_testdata changes it
    model.train()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(a.batch, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (a.batch,), generator=g)
    model, x, y = model.to(a.device), x.to(a.device), y.to(a.device)
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    masks = channel_masks(model, a.mask, a.mask_seed) if a.mask > 0 else []
    base = status_mb("VmRSS")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        for p, m in masks:
            p.grad.mul_(m)
        opt.step()
        sync()
        return loss

    for _ in range(a.warmup):
        step()
    times, cpu = [], []
    busy0, own0, wall0 = busy_seconds(), own_seconds(), time.perf_counter()
    for _ in range(a.steps):
        t0, c0 = time.perf_counter(), own_seconds()
        step()
        times.append(time.perf_counter() - t0)
        cpu.append(own_seconds() - c0)
    wall = time.perf_counter() - wall0
    # Cores used by other processes while the steps ran (contention).
    others = max(busy_seconds() - busy0 - (own_seconds() - own0), 0) / wall
    med = statistics.median(times)
    print(json.dumps({
        "impl": "pytorch", "model": a.model, "threads": torch.get_num_threads(), "batch": a.batch,
        "steps": a.steps, "median_s": med, "min_s": min(times), "images_per_s": a.batch / med,
        "peak_mb": round(status_mb("VmHWM"), 1), "base_mb": round(base, 1), "others_cores": round(others, 2),
        "cpu_s": statistics.median(cpu), "version": torch.__version__, "device": a.device,
        **({"gpu": torch.cuda.get_device_name(), "gpu_peak_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1)}
           if a.device == "cuda" else {}),
        **({"impl": "pytorch-masked", "mask": a.mask} if a.mask > 0 else {}),
    }))


if __name__ == "__main__":
    main()
