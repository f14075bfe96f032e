// Package train owns everything about computing gradients and applying
// updates: the gradient engine (subpackage train/autodiff, which builds the
// training graph), the Engine that runs it, optimizers and learning-rate
// schedules, PyTorch's initialisation, and the masked training loop. It runs
// graphs through the ONNX Runtime wrapper, package onnxrt. It knows nothing
// about unlearning: forget sets, masks chosen by localize and algorithms are
// the callers' (package unlearn, whose Retrain serves `unlearn train` and
// the experiment runner, and localize).
//
// # Entry points
//
//	NewEngine(m, EngineOptions)          training graph (autodiff.Build) + one ONNX Runtime session
//	Engine.LoadBatch, Step, StepFilled    one step: loss, logits, the gradients in Params()[i].Grad,
//	                                      and BatchNormalization running statistics updated (BNTraining)
//	Engine.WriteBack(g)                   parameters and running statistics back into a graph
//	SGD, Adam; Constant, Cosine, StepDecay  optimizers (Optimizer) and schedules (Schedule)
//	Fit(ctx, engine, split, idx, FitOptions)  epochs of shuffled mini-batches with a schedule
//	InitValue, ResetNeurons               PyTorch's fresh-layer initialisation of chosen neurons
//	ReinitModel                           every parameter re-initialised, BN statistics reset (from scratch)
//	CheckFinite, ClipGradNorm             guards on gradients
//	BuildArtifacts(path, spec), WriteDir  training graph, inference graph and artifacts.json
//	                                      in one folder, for any ONNX runtime (`unlearn artifacts`)
//
// # Conventions
//
// Parameters are float32 slices in Go memory (Param), updated in place and
// bound as inputs of the training graph, so one session serves every step.
// Optimizers follow PyTorch's update rules exactly (torch.optim.SGD, Adam) so
// that recipes transfer; a parameter element outside its mask (Param.Mask)
// never changes by a single bit, momentum and weight decay included.
// BatchNormalization running statistics are state, not parameters: in
// BNTraining mode the Engine applies PyTorch's update (momentum from the
// node's attribute, unbiased variance) after each step. A non-finite loss or
// gradient is an error wrapping ErrNonFinite. The math of the gradients is in
// docs/GRADIENTS.md, the place of the package in docs/DESIGN.md.
package train
