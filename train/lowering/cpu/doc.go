// Package cpu is the lowering.Lowering for ONNX Runtime's CPU execution
// provider: it chooses, per Conv and per shape, the nodes that compute the
// forward Conv and its gradients fastest on the CPU kernels, and the form
// of BatchNormalization's affine maps. Each form
// computes the same values (package autodiff's tests compare them with the
// plain form and with finite differences); the choice depends on shapes,
// the thread count and the Lowering's fields only:
//
//   - conv.go: the gradient forms and their choice per shape: dX as
//     ConvTranspose or as a Conv with the flipped kernel; dW as the
//     batch/channel-swap trick, one Gemm over im2col windows, batched
//     MatMuls, or the "valid" form that skips products with the padding.
//   - winograd.go: Winograd F(4×4, 3×3) for 3×3 stride-1 Conv forward and
//     gradients from 128 channels.
//   - nchwc.go: Conv on the com.microsoft.nchwc blocked-layout kernels
//     (Lowering.NCHWcBlock, opt-in), the polyphase input gradient for
//     strided layers, and the forward's choice among direct, Winograd and
//     NCHWc.
//   - bn.go: BatchNormalization's affine maps (lowering.Normalizer): the
//     kernel, a depthwise 1×1 Conv on large planes, or from MulAddThreads
//     threads a Mul and an Add.
//   - transposes.go: a pass over the built graph (Finish) that rewrites
//     stacks of small Transposes into multithreaded equivalents when the
//     graph runs on 2 threads or more.
//
// The timings behind each choice are in bench/RESULTS.md (bench/conv_forms.sh
// and bench/trainstep reproduce them); the comments state the rule and its
// reason, not the measurements. The package imports no autodiff: it emits
// through the lowering.Emitter autodiff gives it.
package cpu
