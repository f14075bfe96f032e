// Package localize turns a model, a forget set and a budget α into a mask:
// the parameters an unlearning algorithm may change.
//
// Strategies (docs/DESIGN.md, "The method"; Torkzadehmahani et al., TMLR 2025):
//
//   - del: s_j = |Σ_B θ_j·g_j(B)| per parameter, g the gradient of the mean
//     cross-entropy on forget-set batch B with the model in inference mode
//     (BatchNormalization on running statistics), summed over batches
//     before the absolute value. A neuron's score is the mean of its top-h
//     element scores, h = max(1, ⌊TopFrac·C_out⌋) with C_out the layer's
//     number of output channels (the reference code's rule, TopFrac 0.1),
//     capped at the neuron's size, or h = TopK when set. Neurons are sorted
//     by score and the longest prefix whose parameter count stays within
//     α·p is chosen, every parameter of a chosen neuron (weight slice, bias,
//     a directly following normalization's scale and shift). ElementRank
//     instead ranks single elements by their neuron's score, as the
//     reference code does, which may split the neuron at the cut-off.
//   - salloc: SalUn's saliency |Σ_B g_j(B)|, the global top α·p elements
//     (SalUn, Fan et al., ICLR 2024, generate_mask.py: gradients of the
//     forget loss accumulated over the forget loader, absolute value,
//     one global threshold).
//   - critmem: per forget example, repeatedly zero the neuron with the
//     largest Σ|θ·g| until the example's prediction flips; the union over
//     examples, ranked by how many examples zeroed a neuron (critMem).
//   - deepest / shallowest: whole layers by depth from the output or the
//     input, neurons in channel order, the longest prefix within α·p.
//   - random: another mask's per-layer neuron counts with the neurons
//     chosen uniformly at random (seeded).
//   - full: every parameter (no mask).
//
// The classifier layer is not treated specially here, except that critmem
// never zeroes it: algorithms that always train it (rft) add it themselves.
//
// # Entry points
//
//	Localize(ctx, m, split, forget, Options)  one strategy: the mask and the scores
//	Scores                                    the per-parameter scores alone (del, salloc)
//	Mask.MarshalJSON, ReadMask                the mask file (unlearn.mask/v1)
//	WriteSafetensors, ReadSafetensors         score files (--scores)
//
// # Conventions
//
// A mask selects elements of named initializers (flat, row-major) and is
// built from package graph's neurons (graph.NeuronMap): a neuron is an
// output channel with every parameter it owns. Gradients come from a
// train.Engine with BatchNormalization in inference mode; the package never
// trains (critmem restores the weights it zeroes before the next example).
// Errors wrap ErrStrategy for unknown strategies and
// bad options. docs/DESIGN.md "The method" states the paper's rules.
package localize
