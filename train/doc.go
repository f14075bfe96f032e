// Package train owns everything about computing gradients and applying
// updates: the gradient engine (train/autodiff), optimizers and
// learning-rate schedules, and the masked training loop. It runs graphs
// through the ONNX Runtime wrapper, package onnxrt. It knows nothing about unlearning.
//
// Conventions: parameters are float32 slices in Go memory, updated in place;
// optimizers follow PyTorch's update rules exactly (torch.optim.SGD, Adam) so
// that recipes transfer; a parameter element outside its mask never changes by
// a single bit, momentum and weight decay included.
package train
