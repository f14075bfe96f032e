// Package ops is the table of facts about standard ONNX ops that hold
// whatever implements them: which inputs a gradient flows into, and which
// parameter role an initializer plays at a given input. It is the leaf of the
// op registry:
//
//   - package graph reads it for the model analysis (trainable parameters,
//     layers and their depth, the classifier; graph.IsDifferentiableInput);
//   - package train/autodiff keys its registry by the same op types and adds,
//     per op, the shape rule, the gradient rule and any forward lowering. Its
//     tests check that every op with a gradient rule is differentiable here,
//     and that every op differentiable here either has a rule or is listed
//     there as having none yet (LSTM, Einsum, …).
//
// The layering is one way: ops imports nothing of the module, graph imports
// ops, autodiff imports both. So graph alone knows every op's
// differentiability, and adding a gradient rule to autodiff changes nothing
// graph reports.
//
// Keys are the exact op_type of the default (ai.onnx) domain; ops of other
// domains are unknown. An op that is not listed is unknown: graph treats it as
// passing no gradient, autodiff refuses it on the path from the parameters to
// the loss.
package ops
