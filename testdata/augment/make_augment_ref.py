"""Reference outputs of torchvision's RandomCrop(padding=p) and
RandomHorizontalFlip, with the random choices fixed, for data/augment_test.go.
Run: /usr/bin/python3 testdata/augment/make_augment_ref.py (Debian
python3-torch 1.13, python3-torchvision 0.14). Writes
testdata/augment/reference.json.

RandomCrop(size, padding=p) is F.pad(img, p, fill=0, padding_mode="constant")
followed by F.crop(img, i, j, h, w) at a top-left (i, j) it draws with
torch.randint(0, h + 2p − h + 1); RandomHorizontalFlip is F.hflip when
torch.rand(1) < 0.5. Here (i, j, flip) are given, so only the semantics are
compared, not the random draws. Each case runs the usual Compose order:
8-bit images as PIL images through pad, crop, flip, then ToTensor and
Normalize; float images (stored values used as they are, no normalization)
as tensors through the same functions."""
import json, os
import numpy as np
import torch
from PIL import Image
import torchvision.transforms.functional as F

rng = np.random.default_rng(29)
cases = []


def u8_case(name, c, h, w, pad, mean, std, params):
    pix = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    hwc = pix.transpose(1, 2, 0)
    pil = Image.fromarray(hwc[:, :, 0], mode="L") if c == 1 else Image.fromarray(hwc, mode="RGB")
    outs = []
    for i, j, flip in params:
        img = F.pad(pil, pad, fill=0, padding_mode="constant")
        img = F.crop(img, i, j, h, w)
        if flip:
            img = F.hflip(img)
        t = F.to_tensor(img)
        if mean is not None:
            t = F.normalize(t, mean, std)
        outs.append(t.numpy().astype(np.float32).ravel().tolist())
    cases.append(dict(name=name, kind="u8", c=c, h=h, w=w, pad=pad, mean=mean, std=std,
                      pixels=pix.ravel().tolist(),
                      params=[dict(i=i, j=j, flip=flip) for i, j, flip in params],
                      outputs=outs))


def f32_case(name, c, h, w, pad, params):
    pix = rng.standard_normal(size=(c, h, w)).astype(np.float32)
    t0 = torch.from_numpy(pix.copy())
    outs = []
    for i, j, flip in params:
        t = F.pad(t0, pad, fill=0, padding_mode="constant")
        t = F.crop(t, i, j, h, w)
        if flip:
            t = F.hflip(t)
        outs.append(t.numpy().astype(np.float32).ravel().tolist())
    cases.append(dict(name=name, kind="f32", c=c, h=h, w=w, pad=pad, mean=None, std=None,
                      pixels=[float(v) for v in pix.ravel()],
                      params=[dict(i=i, j=j, flip=flip) for i, j, flip in params],
                      outputs=outs))


# CIFAR-like: RGB, CIFAR-10's normalization, padding 2 (every corner, the
# centre, flips).
u8_case("rgb_cifar_norm", 3, 5, 6, 2, [0.4914, 0.4822, 0.4465], [0.2470, 0.2435, 0.2616],
        [(0, 0, False), (4, 4, False), (2, 2, False), (2, 2, True), (0, 4, True), (4, 0, False), (1, 3, True), (3, 1, False)])
# Grey, one mean/std, padding larger than the image.
u8_case("gray_pad_gt_size", 1, 3, 3, 4, [0.5], [0.25],
        [(0, 0, False), (8, 8, True), (4, 4, False), (3, 5, True), (6, 2, False)])
# No normalization, no padding: flip only.
u8_case("rgb_flip_only", 3, 4, 4, 0, None, None, [(0, 0, False), (0, 0, True)])
# Float storage, no normalization.
f32_case("float_pad1", 2, 4, 5, 1, [(0, 2, False), (1, 1, True), (2, 0, True)])

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference.json")
with open(out, "w") as f:
    json.dump(dict(torch=torch.__version__, torchvision=__import__("torchvision").__version__, cases=cases), f)
    f.write("\n")
print("wrote", out)
