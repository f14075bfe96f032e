// Package ops holds the facts about standard ONNX ops that package graph
// needs for its model analysis (trainable parameters, layers and their
// depth, the classifier; graph.IsDifferentiableInput): which inputs a
// gradient flows into, and which parameter role an initializer plays at a
// given input.
//
// The op table itself is train/autodiff's (optable.go): one entry per op
// with these facts, its shape rule, its gradient rule and its line in
// docs/GRADIENTS.md. table.go here is generated from it, so that graph,
// which autodiff imports, knows every op without importing autodiff;
// autodiff's TestOpsTableGenerated fails when the two differ and rewrites
// table.go with UNLEARN_UPDATE=1. Ops added at run time by autodiff.Register
// come through Register.
//
// Keys are the exact op_type of the default (ai.onnx) domain; ops of other
// domains are unknown. An op that is not listed is unknown: graph treats it as
// passing no gradient, autodiff refuses it on the path from the parameters to
// the loss.
package ops
