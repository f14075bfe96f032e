"""Reference trajectories of PyTorch's optimizers and LR schedules for
train/optim_test.go. Run: /usr/bin/python3 testdata/make_optim_ref.py
(Debian python3-torch 1.13). Writes testdata/ref/optim.json."""
import json, math
import torch

torch.manual_seed(0)
torch.set_num_threads(1)
n, steps = 12, 6
p0 = torch.randn(n, dtype=torch.float64)
grads = [torch.randn(n, dtype=torch.float64) for _ in range(steps)]
# element mask: elements where mask == 0 must never change
mask = torch.tensor([1, 0] * (n // 2), dtype=torch.float64)

def run(make_opt, masked):
    p = torch.nn.Parameter(p0.clone())
    opt = make_opt([p])
    traj = []
    for g in grads:
        opt.zero_grad()
        p.grad = g.clone()
        if masked:
            # Reference for masked updates: optimise only the masked elements
            # by restoring the frozen ones (their state is irrelevant because
            # they never change).
            before = p.detach().clone()
        opt.step()
        if masked:
            with torch.no_grad():
                p.copy_(torch.where(mask > 0, p, before))
        traj.append(p.detach().tolist())
    return traj

cases = {
    "sgd": dict(kind="sgd", lr=0.1, momentum=0.0, nesterov=False, weight_decay=0.0),
    "sgd_momentum_wd": dict(kind="sgd", lr=0.05, momentum=0.9, nesterov=False, weight_decay=5e-4),
    "sgd_nesterov": dict(kind="sgd", lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "adam": dict(kind="adam", lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0),
    "adam_wd": dict(kind="adam", lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2),
}
out = {"p0": p0.tolist(), "grads": [g.tolist() for g in grads], "mask": mask.tolist(), "cases": {}}
for name, c in cases.items():
    if c["kind"] == "sgd":
        mk = lambda ps, c=c: torch.optim.SGD(ps, lr=c["lr"], momentum=c["momentum"], nesterov=c["nesterov"], weight_decay=c["weight_decay"])
    else:
        mk = lambda ps, c=c: torch.optim.Adam(ps, lr=c["lr"], betas=c["betas"], eps=c["eps"], weight_decay=c["weight_decay"])
    out["cases"][name] = dict(config={k: v for k, v in c.items()}, traj=run(mk, False))

# Cosine annealing to a floor, stepped per iteration, as CosineAnnealingLR(T_max, eta_min).
p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.015)
T = 10
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=T, eta_min=0.015 * 0.01)
lrs = []
for _ in range(T + 1):
    lrs.append(opt.param_groups[0]["lr"])
    opt.step(); sched.step()
out["cosine"] = dict(lr=0.015, floor=0.015 * 0.01, total=T, lrs=lrs)
opt = torch.optim.SGD([p], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
lrs = []
for _ in range(10):
    lrs.append(opt.param_groups[0]["lr"])
    opt.step(); sched.step()
out["step"] = dict(lr=0.1, step=3, gamma=0.5, lrs=lrs)
with open("testdata/ref/optim.json", "w") as f:
    json.dump(out, f)
print("wrote testdata/ref/optim.json")
