// Package autodiff generates, from a forward ONNX graph, one training graph
// that any ONNX Runtime build runs as an ordinary model: forward, loss, and
// the gradient of every parameter, in standard ai.onnx ops only (no
// com.microsoft ops, none of the *Grad ops of ORT's training builds). The
// one exception is what a Lowering (Spec.Lowering) emits: package
// train/lowering/cpu puts Conv on the CPU execution provider's NCHWc
// kernels (com.microsoft.nchwc) where its NCHWcBlock is set, for a graph
// that runs on an ONNX Runtime known to have them (train.EngineSpec opts in
// wherever its runtime has them).
// It only builds graphs: it never runs one (package train does, through
// onnxrt) and never imports protobuf code. docs/GRADIENTS.md gives the math
// of every rule and the attribute handling, op by op.
//
// # API
//
//	art, err := autodiff.Build(model, autodiff.Spec{BN: autodiff.BNTraining})
//	bytes, _ := onnxio.Encode(art.Model)
//
// Build(m, spec) returns Artifacts: the training Model and the description
// of its inputs and outputs.
// NewArtifactsDoc(art, spec, inference, path, sha256) describes them as
// artifacts.json (ArtifactsDoc, schema unlearn.artifacts/v1) for a runtime
// other than this tool's; train.BuildArtifacts reads a model file and
// writes the whole set.
//
// Inputs, in order: the forward's image input(s); "labels" (int64 [N]);
// "weights" (float [N], per-example loss weights; NegGrad passes negative
// ones); "teacher_logits" ([N, C], Loss.Kind "kl" only); every parameter
// under its initializer name; in BNInference mode the running mean and
// variance of every BatchNormalization (state the caller owns and updates).
// Initializers that are neither stay initializers of the training graph.
//
// Outputs, in order: "loss" (shape [1]: onnxruntime_go cannot bind 0-d
// tensors); the logits under the forward output's
// name; "grad/<param>" per parameter (in the order of the parameter
// inputs); in BNTraining mode "bn_mean/<scale>" and "bn_var/<scale>" per
// BatchNormalization (batch mean and biased variance, [C]), described by
// Artifacts.BN. The element count behind them is M = N·BNStat.PerExample,
// for PyTorch's update rm ← 0.9·rm + 0.1·μ, rv ← 0.9·rv + 0.1·σ²·M/(M−1).
//
// Losses: "ce" L = Σ w_i·CE_i / N; "kl" L = Σ w_i·KL(softmax(t_i/T) ‖
// softmax(s_i/T))·T² / N (SCRUB's distillation loss with weights). The
// gradient of the logits is emitted in closed form.
//
// BatchNormalization follows Spec.BN whatever the node's training_mode
// attribute says: BNInference normalizes with the running statistics (the
// node itself, one output), BNTraining with batch statistics composed from
// ReduceMean, Sub, Mul, Sqrt and Reciprocal. Dropout is the identity unless
// Spec.Dropout; then the node runs with training_mode=true and a seed
// attribute (Spec.DropoutSeed) and its mask output is reused by the
// gradient.
//
// # Conventions and invariants
//
//   - The op table (optable.go, keyed by the exact op_type) holds one
//     entry per op (Op): its differentiable inputs and parameter roles
//     (graph/ops's table, which graph's parameter analysis reads, is
//     generated from it), its shape rule (graph/shapes), its gradient rule
//     gradXxx whose doc comment gives the spec link, the rule's line in
//     docs/GRADIENTS.md (generated from the table too), and optionally a
//     forward lowering (BatchNormalization, Dropout, MaxPool's Indices
//     output, LayerNormalization's Mean and InvStdDev outputs, Conv's
//     forms). An op with differentiable inputs and no rule is refused on the
//     path. Register adds an op or a rule from outside the package (the
//     exported GradCtx methods are what such a rule works with). Supported
//     lists the ops with a rule and those that pass no gradient;
//     CheckSupported refuses a model naming the op and the node.
//   - The reverse pass visits only nodes on a path from the parameters to
//     the loss (forward-reachable from the parameters along differentiable
//     inputs and backward-reachable from the logits); stop-gradient inputs
//     (shapes, axes, indices, conditions, exponents, clip bounds, running
//     statistics) get nothing. Several contributions to one tensor's
//     gradient are added by a chain of Add nodes. The driver checks every rule's
//     gradient against the input's static shape and type and names the node
//     when a rule is wrong.
//   - Shapes are inferred in Go (package graph/shapes, one shape rule per
//     op, named in the op table) with
//     symbolic dimensions (the batch is dynamic), including the values of
//     small integer tensors so that PyTorch's Shape→Gather→Concat→Reshape
//     chains resolve. Where a
//     shape is unknown the rules use the dynamic Shape/NonZero forms.
//   - The training graph's ai.onnx opset is max(original, 17) (ScatterElements
//     with reduction="add" needs 16); models below opset 13 are refused.
//   - Errors, never panics, reach the caller: ErrUnsupported for an op or
//     form without a rule, ErrModel for a model that cannot be trained.
//
// # Files: the math and the lowerings
//
// The gradient math is in rules.go (elementwise, activations, shape and
// indexing), rules_nn.go (Conv, ConvTranspose, pooling, normalization),
// rules_shape.go and loss.go; optable.go ties each op to its rules and
// graph/shapes infers types. A reviewer checks a rule against its doc comment
// and docs/GRADIENTS.md without reading further: gradConv, for instance, says
// dX is a transposed convolution of dY with W and dW a correlation of X
// with dY.
//
// How a convolution runs is not the rules' business: gradConv asks the
// Spec's Lowering (package train/lowering, the seam; this package imports
// no lowering) for the forward Conv, dX and dW, through an Emitter
// (lowering.go) whose nodes take their place in the graph as if the rule
// had emitted them. lowering.Plain (Conv, ConvTranspose, the convolution
// trick) is the default and what cuda runs; train/lowering/cpu chooses per
// shape among the forms ONNX Runtime's CPU kernels run fastest (Winograd,
// the windowed weight gradients, NCHWc) and, once the graph is built,
// rewrites stacks of small Transposes for its thread pool
// (lowering.Finisher). BatchNormalization's affine maps are the
// lowering's too (lowering.Normalizer: a kernel, a depthwise Conv or a Mul
// and an Add). One rewrite stays here, valid on every provider and
// computing the same values as the plain graph: foldscale.go folds a
// per-channel factor of dY (BatchNormalization's input gradient) into the
// Conv's filter instead of a pass over dY.
//
// The timings behind each choice are in bench/RESULTS.md (bench/conv_forms.sh
// and bench/trainstep reproduce them); the comments state the rule and its
// reason, not the measurements.
package autodiff
