// Command trainstep times the tool's training step on one model: it builds
// the training graph (autodiff.Build with the Conv forms and NCHWc lowering
// the flags force; on cuda, train.EngineSpec's for the rest), runs warm-up
// steps and then timed ones at a batch size, and prints one JSON line with
// the median step time, images a second and peak memory.
// bench/train_step.sh and bench/gpu_check.sh compare it with PyTorch's step
// (bench/train_step.py) on the same machine; -dump writes the training
// graph for bench/ortprof.
package main
