// Package shapes infers the element types and shapes of a graph's values
// statically, op by op, for the gradient engine (train/autodiff), which
// needs them to emit its rules and to write value_info that ONNX Runtime's
// optimizer uses.
//
// Shapes are []int64 with known sizes ≥ 0 and symbolic sizes ≤ SymBase,
// each symbol a distinct unknown size (the batch dimension is one; a
// dim_param keeps one symbol across the graph). A nil shape is an unknown
// rank. Small integer tensors also carry their values, which may contain
// symbols (Shape of a [batch, 17, 64] tensor is [sym, 17, 64]), so that
// Reshape targets built from Shape/Gather/Concat chains, as PyTorch
// exports them, resolve; small float tensors carry theirs too.
//
// One Rule per op types a node's outputs from its inputs (Ctx); the rules
// here (Arith, Window, Reshape, …) are named in graph/ops's op table, which
// says which op takes which (For resolves an op's rule; Define adds a rule
// for an op registered at run time). An Inferrer holds what is known of one
// graph under construction; Infer runs a rule on a node, InferNode the
// node's own.
package shapes
