#!/usr/bin/python3
"""The ResNet-18 regime's originals and oracles, trained outside the tool.

A user's model: torchvision's ResNet-18 with the CIFAR-style stem (3×3
stride-1 first convolution, no max-pool), 10 classes, trained in PyTorch
with a realistic recipe (SGD at lr 0.05, momentum 0.9, weight decay 5e-4,
cosine per step to 0 over 30 epochs, batch 32, RandomCrop(32, padding=4) +
horizontal flip; RECIPE below says why) and
exported as README's "Exporting from PyTorch" recommends (PRESERVE,
BatchNormalization kept, batch dynamic, the normalization in the model's
metadata `unlearn.mean` / `unlearn.std`).

Data: 32×32 RGB images made from Debian's dataset-fashion-mnist (the only
real image data the registries carry): the first N training and M test
images, upsampled 28→32 bilinearly and tinted per image by an RGB colour
drawn once from a fixed generator (so the three channels differ), stored as
an npz (x_train N×32×32×3 uint8, y_train, x_test, y_test) that the tool
reads directly. The file is rebuilt byte for byte by `data`; its sha256 is
checked against the one NOTES.md records.

Forget sets (ids into x_train, one per line, committed under forget/): drawn
by this script with numpy's PCG64 seeded by the seed and the set's index:
  iid      10 % of the training split at random
  non-iid  half of classes 2 and 5 (pullover, sandal), the paper's kind
  class-5  every example of class 5 (sandal): a whole class removed

Steps (each resumable: a model whose .onnx and .json exist is skipped; a
training interrupted resumes from its last epoch's checkpoint, kept with a
copy of every finished model in ~/.cache/unlearn-resnet18 or
$UNLEARN_R18_CACHE, outside the work tree):
  train.py data                      the npz and the forget-set files
  train.py train --seed S [--forget SET]
                                     the original of seed S, or its oracle
                                     (trained without SET's ids, same init)
  train.py all [--seeds 0 1 2]       every missing model, originals first,
                                     seed by seed
  (train and all rebuild a model whose sidecar is committed but whose .onnx
  is gone, byte for byte on the machine that trained it: PyTorch's CPU
  kernels differ between processors. On another machine they refuse
  unless --replace, since the records made with the old model would drop
  out of RESULTS.md.)
  train.py time --seed S [--forget SET] --threads T [--timed-epochs N]
                                     times the model's first N epochs (2)
                                     here and writes the first plus the
                                     others' mean × the recipe's remaining
                                     epochs into the sidecar as train_s
                                     (for a model trained on a busy
                                     machine or on a GPU)
  train.py retime --seed S [--forget SET] --threads T
                                     trains the model again for its time
                                     alone (on an idle machine, with the
                                     grid's threads): the sidecar's train_s,
                                     machine and threads change if the model
                                     comes out byte-identical, nothing else

Models go to models/ (the .onnx files ignored by git). Every model gets a
sidecar <model>.json, committed: its sha256 and the data's (the experiment
runner keys the model's records by them and checks them against the files),
the recipe, per-epoch train loss
and accuracy, test accuracy, train_s (the epochs alone, as the tool's
records count an oracle's training), the threads, the machine (named as
the tool's experiment records name it) and the torch version.

Run niced in the background (12 models; see NOTES.md for the cost), e.g.
one chain of seeds per core:
  nice -n 19 /usr/bin/python3 regimes/resnet18/train.py all --threads 1 --seeds 0
  nice -n 19 /usr/bin/python3 regimes/resnet18/train.py all --threads 1 --seeds 1
"""
import argparse
import gzip
import hashlib
import json
import os
import shutil
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work")  # ignored by git: the data
# The .onnx files ignored by git, their sidecars committed; $UNLEARN_R18_MODELS
# puts them elsewhere (bench/gpu_check.sh trains its short-recipe models there).
MODELS = os.environ.get("UNLEARN_R18_MODELS") or os.path.join(HERE, "models")
# Per-epoch checkpoints and a copy of every finished model live outside the
# work tree, which a new checkout replaces: a later session on the same
# machine resumes a training where it stopped and restores finished models
# (checked against their committed sidecars).
CACHE = os.environ.get("UNLEARN_R18_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "unlearn-resnet18")
FORGET = os.path.join(HERE, "forget")
FMNIST = "/usr/share/datasets/fashion-mnist"
# $UNLEARN_R18_DATA: another npz of the same layout (bench/gpu_check.sh's dry
# run trains on a few hundred images).
DATA = os.environ.get("UNLEARN_R18_DATA") or os.path.join(WORK, "fmnist32.npz")

N_TRAIN = 5000
N_TEST = 2000
FORGET_SETS = {  # name: (kind, fraction, classes)
    "iid": ("iid", 0.1, None),
    "non-iid": ("non-iid", 0.5, [2, 5]),
    "class-5": ("non-iid", 1.0, [5]),
}
# The seeds whose forget sets `data` draws. Seed 3 joined when seed 1's
# models could not be rebuilt off the AMD EPYC that trained them (NOTES.md,
# "Seed 3"); each seed's sets are drawn on their own, so adding one leaves
# the others' files unchanged.
SEEDS = range(4)
# Batch 32 at lr 0.05 for 30 epochs: of six recipes probed on a GPU
# (NOTES.md, "Recipes on the GPU") it fits the training split best (0.935,
# test 0.894); batch 128 at 0.1 for 15 epochs, the first recipe, reached 0.81.
RECIPE = dict(epochs=30, lr=0.05, batch_size=32, momentum=0.9, weight_decay=5e-4,
              schedule="cosine", augment="pad=4,flip")


def read_idx(path):
    with gzip.open(path, "rb") as f:
        b = f.read()
    magic, = struct.unpack(">I", b[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, b[4:4 + 4 * ndim])
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def make_rgb(gray, rng):
    """28×28 uint8 images → 32×32×3 uint8: bilinear upsampling, then each
    image tinted by its own colour in [0.35, 1]^3."""
    x = torch.from_numpy(gray.astype(np.float32)).unsqueeze(1)  # N×1×28×28
    x = F.interpolate(x, size=(32, 32), mode="bilinear", align_corners=False)
    tint = torch.from_numpy(rng.uniform(0.35, 1.0, size=(len(gray), 3, 1, 1)).astype(np.float32))
    x = (x * tint).round().clamp(0, 255).to(torch.uint8)  # N×3×32×32
    return x.permute(0, 2, 3, 1).contiguous().numpy()


def cmd_data(_args):
    os.makedirs(WORK, exist_ok=True)
    os.makedirs(FORGET, exist_ok=True)
    xtr = read_idx(os.path.join(FMNIST, "train-images-idx3-ubyte.gz"))[:N_TRAIN]
    ytr = read_idx(os.path.join(FMNIST, "train-labels-idx1-ubyte.gz"))[:N_TRAIN]
    xte = read_idx(os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz"))[:N_TEST]
    yte = read_idx(os.path.join(FMNIST, "t10k-labels-idx1-ubyte.gz"))[:N_TEST]
    rng = np.random.Generator(np.random.PCG64(20261127))
    arrays = dict(x_train=make_rgb(xtr, rng), y_train=ytr.astype(np.int64),
                  x_test=make_rgb(xte, rng), y_test=yte.astype(np.int64))
    tmp = DATA + ".tmp.npz"
    np.savez(tmp, **arrays)  # uncompressed: byte for byte reproducible
    os.replace(tmp, DATA)
    print(f"data: {DATA} sha256 {sha256(DATA)}")
    for i, (name, (kind, frac, classes)) in enumerate(FORGET_SETS.items()):
        for seed in SEEDS:
            ids = draw_forget(ytr, kind, frac, classes, seed, i)
            path = os.path.join(FORGET, f"{name}-seed{seed}.txt")
            with open(path, "w") as f:
                f.write(f"# {name} (seed {seed}): {len(ids)} ids into x_train of work/fmnist32.npz, drawn by train.py\n")
                f.write("".join(f"{j}\n" for j in ids))
            print(f"forget: {path} ({len(ids)} ids)")


def draw_forget(labels, kind, frac, classes, seed, index):
    rng = np.random.Generator(np.random.PCG64([seed, index]))
    pool = np.arange(len(labels)) if kind == "iid" else np.flatnonzero(np.isin(labels, classes))
    n = int(frac * len(pool) + 0.5)
    return np.sort(rng.choice(pool, size=n, replace=False))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def machine_id():
    """The CPU as the tool's experiment records name it (runner.machineID):
    the machine's processors, not this process's affinity, so that a
    timing pinned to one core (taskset) keeps the machine's name."""
    fields, cpus, first = {}, 0, True
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                first = False
                continue
            k, _, v = line.partition(":")
            if k.strip() == "processor":
                cpus += 1
            if first:
                fields[k.strip()] = v.strip()
    name = fields.get("model name") or fields.get("vendor_id", "")
    if fields.get("cpu family"):
        name += f" (family {fields['cpu family']}, model {fields.get('model', '')})"
    return f"{name}, {cpus or os.cpu_count()} CPUs"


def resnet18():
    m = torchvision.models.resnet18(num_classes=10)
    m.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    m.maxpool = nn.Identity()
    return m


def load_data():
    z = np.load(DATA)
    xtr = torch.from_numpy(z["x_train"]).permute(0, 3, 1, 2).float().div(255)
    xte = torch.from_numpy(z["x_test"]).permute(0, 3, 1, 2).float().div(255)
    mean = xtr.mean(dim=(0, 2, 3))
    std = xtr.std(dim=(0, 2, 3))
    return xtr, torch.from_numpy(z["y_train"]), xte, torch.from_numpy(z["y_test"]), mean, std


def augment(x, gen, pad):
    """RandomCrop(32, padding=pad) and RandomHorizontalFlip, per image."""
    n, _, h, w = x.shape
    xp = F.pad(x, (pad, pad, pad, pad))
    dy = torch.randint(0, 2 * pad + 1, (n,), generator=gen)
    dx = torch.randint(0, 2 * pad + 1, (n,), generator=gen)
    flip = torch.rand(n, generator=gen) < 0.5
    out = torch.empty_like(x)
    for i in range(n):
        img = xp[i, :, dy[i]:dy[i] + h, dx[i]:dx[i] + w]
        out[i] = img.flip(-1) if flip[i] else img
    return out


def device_of(model):
    return next(model.parameters()).device


def accuracy(model, x, y, mean, std, batch=500):
    model.eval()
    correct = 0
    dev = device_of(model)
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb = (x[i:i + batch] - mean[None, :, None, None]) / std[None, :, None, None]
            correct += (model(xb.to(dev)).argmax(1).cpu() == y[i:i + batch]).sum().item()
    return correct / len(x)


def train_epoch(model, opt, sched, x, y, gen, bs, mean, std):
    """One epoch of the recipe: a permutation from gen, batches of bs augmented
    (crop pad 4 + flip) and normalized, one SGD and one schedule step each.
    Returns the mean training loss and accuracy on the augmented batches.
    The data stay on the CPU (the augmentation draws from gen there, so a
    run on a GPU sees the same batches); each batch moves to the model's
    device."""
    model.train()
    dev = device_of(model)
    perm = torch.randperm(len(x), generator=gen)
    loss_sum, correct = 0.0, 0
    for s in range((len(x) + bs - 1) // bs):
        b = perm[s * bs:(s + 1) * bs]
        xb = augment(x[b], gen, 4)
        xb = (xb - mean[None, :, None, None]) / std[None, :, None, None]
        yb = y[b].to(dev)
        logits = model(xb.to(dev))
        loss = F.cross_entropy(logits, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        loss_sum += loss.item() * len(b)
        correct += (logits.argmax(1) == yb).sum().item()
    return loss_sum / len(x), correct / len(x)


def model_path(seed, forget):
    name = f"original-seed{seed}" if forget is None else f"oracle-{forget}-seed{seed}"
    return os.path.join(MODELS, name + ".onnx")


def read_ids(path):
    with open(path) as f:
        return [int(s) for s in (ln.split("#")[0].strip() for ln in f) if s]


def setup(seed, forget, threads, epochs, device):
    """The training run of a model: its data (the training split less the
    forget set's ids), the network at its initialisation, the data-order
    generator, the optimizer and the schedule."""
    if not os.path.exists(DATA):
        sys.exit(f"{DATA} is missing: run `train.py data` first")
    torch.set_num_threads(threads)
    xtr, ytr, xte, yte, mean, std = load_data()
    keep = np.ones(len(xtr), dtype=bool)
    if forget is not None:
        # (Ids past a smaller $UNLEARN_R18_DATA's end are not in it.)
        keep[[i for i in read_ids(os.path.join(FORGET, f"{forget}-seed{seed}.txt")) if i < len(keep)]] = False
    idx = torch.from_numpy(np.flatnonzero(keep))
    x, y = xtr[idx], ytr[idx]
    # The same initialisation and data order stream for the original and its
    # oracles of one seed: an oracle differs from its original by the data.
    torch.manual_seed(seed)
    model = resnet18().to(device)
    gen = torch.Generator().manual_seed(1000 + seed)
    bs = RECIPE["batch_size"]
    steps_per_epoch = (len(x) + bs - 1) // bs
    opt = torch.optim.SGD(model.parameters(), lr=RECIPE["lr"], momentum=RECIPE["momentum"],
                          weight_decay=RECIPE["weight_decay"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * steps_per_epoch)
    return x, y, xte, yte, mean, std, model, gen, opt, sched, bs


def time_epochs(seed, forget, threads, epochs, timed):
    """Times the first `timed` epochs of a trained model's training on this
    machine with these threads, and writes the first epoch plus the later
    ones' mean times the recipe's other epochs into the sidecar as train_s
    (the seconds the experiment runner compares runs with): a training
    timed while the machine was busy, or on another machine (a GPU), gets
    an idle CPU's time for the price of a few epochs. Every epoch of the
    recipe does the same work; the sidecar says what was timed
    (train_s_timed) and keeps the time the training itself took
    (train_s_trained)."""
    out = model_path(seed, forget)
    side = out[:-5] + ".json"
    if not os.path.exists(side):
        sys.exit(f"{side} is missing: train the model first")
    x, y, xte, yte, mean, std, model, gen, opt, sched, bs = setup(seed, forget, threads, epochs, "cpu")
    secs = []
    for ep in range(timed):
        t0 = time.time()
        train_epoch(model, opt, sched, x, y, gen, bs, mean, std)
        secs.append(round(time.time() - t0, 2))
        print(f"{os.path.basename(out)}: timed epoch {ep + 1}/{timed}: {secs[-1]:.0f} s", flush=True)
    with open(side) as f:
        meta = json.load(f)
    meta.setdefault("train_s_trained", meta["train_s"])
    meta.setdefault("trained_on", meta.get("machine"))
    # The first epoch carries the start-up (allocations, first touches of
    # the data) once per training; the later ones stand for the rest.
    est = secs[0] + (epochs - 1) * sum(secs[1:]) / (len(secs) - 1) if len(secs) > 1 else secs[0] * epochs
    meta.update(train_s=round(est, 2), threads=threads, machine=machine_id(),
                train_s_timed=dict(epochs=secs, of=epochs, torch=torch.__version__))
    write_json(side, meta)
    print(f"{os.path.basename(out)}: train_s {meta['train_s']:.0f} s ({timed} of its {epochs} epochs timed)", flush=True)


def train(seed, forget, threads, epochs, retime=False, device="cpu", replace=False):
    out = model_path(seed, forget)
    side = out[:-5] + ".json"
    rebuild = None  # the sidecar's sha256 when this training rebuilds a lost model
    if retime:
        if not os.path.exists(side):
            sys.exit(f"{side} is missing: train the model first")
    elif os.path.exists(side) and not same_recipe(side, epochs):
        # A model of another recipe (or epochs): trained again; its files
        # are replaced when the new one is done.
        print(f"{os.path.basename(out)}: {side} records another recipe; training again", flush=True)
    elif os.path.exists(out) and os.path.exists(side):
        print(f"{os.path.basename(out)}: done", flush=True)
        return
    elif restore(out, side):
        return
    elif os.path.exists(side):
        rebuild = check_rebuild(out, side, device, replace)
    os.makedirs(MODELS, exist_ok=True)
    x, y, xte, yte, mean, std, model, gen, opt, sched, bs = setup(seed, forget, threads, epochs, device)
    log = []
    train_s = 0.0
    first = 0
    os.makedirs(CACHE, exist_ok=True)
    ckpt = os.path.join(CACHE, os.path.basename(out)[:-5] + (".retime" if retime else "") + ".ckpt")
    if os.path.exists(ckpt):
        c = torch.load(ckpt, map_location=device)
        if (c["epochs"] == epochs and c["threads"] == threads and c.get("device", "cpu") == device
                and c.get("recipe") == dict(RECIPE, epochs=epochs)):
            model.load_state_dict(c["model"])
            opt.load_state_dict(c["opt"])
            sched.load_state_dict(c["sched"])
            gen.set_state(c["gen"])
            log, train_s, first = c["log"], c["train_s"], c["epoch"]
            print(f"{os.path.basename(out)}: resumed after epoch {first} ({ckpt})", flush=True)
    for ep in range(first, epochs):
        t0 = time.time()
        loss, train_acc = train_epoch(model, opt, sched, x, y, gen, bs, mean, std)
        dt = time.time() - t0
        train_s += dt
        test = accuracy(model, xte, yte, mean, std)
        log.append(dict(epoch=ep + 1, loss=loss, train_accuracy=train_acc,
                        test_accuracy=test, seconds=round(dt, 2)))
        print(f"{os.path.basename(out)}: epoch {ep + 1}/{epochs} loss {loss:.4f} "
              f"train {train_acc:.4f} test {test:.4f} ({dt:.0f} s)", flush=True)
        torch.save(dict(model=model.state_dict(), opt=opt.state_dict(), sched=sched.state_dict(), gen=gen.get_state(),
                        log=log, train_s=train_s, epoch=ep + 1, epochs=epochs, threads=threads, device=device,
                        recipe=dict(RECIPE, epochs=epochs)),
                   ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)
    model.eval()
    if retime:
        # Only the timing changes: the records stay keyed by the model's
        # sha256, so the retrained model must be the same bytes.
        tmp = out + ".retime.onnx"
        export(model, tmp, mean, std)
        with open(side) as f:
            meta = json.load(f)
        same = sha256(tmp) == meta["onnx_sha256"]
        os.remove(tmp)
        if not same:
            sys.exit(f"{os.path.basename(out)}: retrained to other bytes; timing left as it was")
        meta.update(train_s=round(train_s, 2), threads=threads, machine=machine_id(), retimed=True)
        write_json(side, meta)
        os.remove(ckpt)
        print(f"{os.path.basename(out)}: retimed, {train_s:.0f} s", flush=True)
        return
    final = dict(train_accuracy=accuracy(model, x, y, mean, std), test_accuracy=accuracy(model, xte, yte, mean, std))
    export(model, out, mean, std)
    meta = dict(model=os.path.basename(out), seed=seed, forget=forget, examples=len(x), recipe=dict(RECIPE, epochs=epochs),
                train_s=round(train_s, 2), threads=threads, machine=machine_id(), torch=torch.__version__,
                **({} if device == "cpu" else dict(device=device, gpu=torch.cuda.get_device_name(device))),
                trained_on=machine_id(), data_sha256=sha256(DATA), mean=mean.tolist(), std=std.tolist(),
                epochs=log, final=final, onnx_sha256=sha256(out))
    if rebuild and rebuild != meta["onnx_sha256"]:
        print(f"{os.path.basename(out)}: trained to other bytes than the sidecar named ({rebuild[:12]}…, now "
              f"{meta['onnx_sha256'][:12]}…): the records made with the old model drop out of RESULTS.md", flush=True)
    elif rebuild:
        print(f"{os.path.basename(out)}: rebuilt byte for byte (sha256 {rebuild[:12]}…)", flush=True)
    write_json(side, meta)
    shutil.copyfile(out, os.path.join(CACHE, os.path.basename(out) + ".tmp"))
    os.replace(os.path.join(CACHE, os.path.basename(out) + ".tmp"), os.path.join(CACHE, os.path.basename(out)))
    os.remove(ckpt)
    print(f"{os.path.basename(out)}: train {final['train_accuracy']:.4f} test {final['test_accuracy']:.4f}, "
          f"{train_s:.0f} s", flush=True)


def check_rebuild(out, side, device, replace):
    """A model whose sidecar is committed but whose file is gone (a new
    machine: the .onnx files and the cache are not in git) is trained again
    from the same seed and data. PyTorch's CPU kernels differ between
    processors, so only the machine that trained it gives back the same
    bytes; on another one the new model replaces the old, and every record
    made with the old one drops out of RESULTS.md. That needs --replace.
    Returns the sha256 the sidecar names."""
    with open(side) as f:
        meta = json.load(f)
    # "trained_on" is recent; before it, "machine" named the training's
    # machine unless `time` ran on another one.
    was = meta.get("trained_on") or meta.get("machine")
    here = machine_id()
    if device != "cpu" or meta.get("device", "cpu") != "cpu":
        # GPU trainings are not bit-reproducible in any case.
        was, here = meta.get("gpu", meta.get("device", "cpu")), device
    if was != here:
        if not replace:
            sys.exit(f"{os.path.basename(out)} is missing and {side} names a model trained on {was}; "
                     f"training it here ({here}) gives other bytes, and the "
                     f"records made with the old model would drop out of RESULTS.md. Train it on that machine "
                     f"to rebuild it, or pass --replace to train a new one here.")
        print(f"{os.path.basename(out)}: replacing the model {side} names (trained on {was}) with one trained here",
              flush=True)
    return meta["onnx_sha256"]


def same_recipe(side, epochs):
    """Whether the sidecar records this script's recipe with these epochs."""
    with open(side) as f:
        return json.load(f).get("recipe") == dict(RECIPE, epochs=epochs)


def restore(out, side):
    """Copies a finished model back from the cache when the committed
    sidecar names its bytes; False when there is nothing to restore."""
    cached = os.path.join(CACHE, os.path.basename(out))
    if not (os.path.exists(side) and os.path.exists(cached)):
        return False
    with open(side) as f:
        want = json.load(f)["onnx_sha256"]
    if sha256(cached) != want:
        print(f"{cached}: not the model {side} names; retraining", flush=True)
        return False
    os.makedirs(MODELS, exist_ok=True)
    shutil.copyfile(cached, out + ".tmp")
    os.replace(out + ".tmp", out)
    print(f"{os.path.basename(out)}: restored from {cached}", flush=True)
    return True


def write_json(path, meta):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def export(model, out, mean, std):
    import onnx
    import onnx.helper
    import inspect
    tmp = out + ".tmp"
    model = model.cpu().eval()
    x = torch.zeros(1, 3, 32, 32)
    # PyTorch 2.9 and later export with dynamo by default; the TorchScript
    # exporter (the only one before) is the one README's recipe describes.
    kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, x, tmp, training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False,
                      opset_version=17, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, **kw)
    m = onnx.load(tmp)
    onnx.helper.set_model_props(m, {"unlearn.mean": ",".join(f"{v:.4f}" for v in mean.tolist()),
                                    "unlearn.std": ",".join(f"{v:.4f}" for v in std.tolist())})
    onnx.save(m, tmp)
    os.replace(tmp, out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("data")
    t = sub.add_parser("train")
    r = sub.add_parser("retime")
    tm = sub.add_parser("time")
    tm.add_argument("--timed-epochs", type=int, default=2)
    for q in (t, r, tm):
        q.add_argument("--seed", type=int, required=True)
        q.add_argument("--forget", choices=list(FORGET_SETS))
    for q in (t, r, tm, sub.add_parser("all")):
        q.add_argument("--threads", type=int, default=2)
        q.add_argument("--epochs", type=int, default=RECIPE["epochs"])
        q.add_argument("--device", default="cpu", help="cpu, or cuda (bench/gpu_check.sh); the sidecar records it")
    a = sub.choices["all"]
    for q in (t, a):
        q.add_argument("--replace", action="store_true",
                       help="train a lost model again on another machine than its sidecar names, "
                            "replacing it (the records made with it drop out of RESULTS.md)")
    a.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a.add_argument("--forget-sets", nargs="+", default=list(FORGET_SETS), choices=list(FORGET_SETS))
    args = p.parse_args()
    if args.cmd == "data":
        cmd_data(args)
    elif args.cmd == "time":
        time_epochs(args.seed, args.forget, args.threads, args.epochs, args.timed_epochs)
    elif args.cmd in ("train", "retime"):
        train(args.seed, args.forget, args.threads, args.epochs, retime=args.cmd == "retime", device=args.device,
              replace=getattr(args, "replace", False))
    else:
        for seed in args.seeds:
            train(seed, None, args.threads, args.epochs, device=args.device, replace=args.replace)
            for f in args.forget_sets:
                train(seed, f, args.threads, args.epochs, device=args.device, replace=args.replace)


if __name__ == "__main__":
    main()
