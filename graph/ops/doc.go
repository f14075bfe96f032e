// Package ops is the op table: what the tool knows of each standard ONNX
// op, one entry per op in table.go. An entry (Def) gives
//
//   - the inputs a gradient flows into (Diff, FloatResultOnly), which
//     graph.IsDifferentiableInput and train/autodiff's reverse pass read;
//   - the parameter role an initializer plays at each input (Roles), which
//     graph's parameter analysis reads;
//   - the op's layer kind (Kind: a Conv, ConvTranspose, Gemm or MatMul
//     layer, a per-channel or trailing-axes normalization), from which
//     graph finds layers, their output channels and the parameters that go
//     with them, and package train the weights whose channels it masks;
//   - the name of the graph/shapes rule that infers its outputs' types
//     (Shape; shapes.For resolves it).
//
// Gradient rules are train/autodiff's, registered there by op name
// (autodiff.RegisterGrad) for ops listed here. A new op is one entry in
// table.go (and its case in the tests); a program that meets an op the
// tool does not ship adds it at run time with Register.
//
// Keys are the exact op_type of the default (ai.onnx) domain; ops of other
// domains are unknown. An op that is not listed is unknown: graph treats it
// as passing no gradient, autodiff refuses it on the path from the
// parameters to the loss.
//
// This package sits below graph and imports nothing of the repository; no
// other package compares op types with literals (TestNoOpTypeLiterals in
// internal/testutil): they ask for a Kind here, or name the op by its
// constant (names.go).
package ops
