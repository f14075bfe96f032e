// Package unlearn removes the influence of a forget set from a trained
// classifier. Its entry point is Unlearn(ctx, Job): one run from the model
// file to the audited output, with the report metrics.json holds (see
// ExampleUnlearn). Retrain(ctx, RetrainJob) trains a model on the training
// split, from scratch or not, without excluded ids: how oracles are
// retrained (`unlearn train`, the experiment runner). Configure turns a
// recipe (epochs, rate, schedule, proxies) into a Config by the rule the
// command line and the experiment runner share. Below them sit the
// algorithm registry (an Algorithm descriptor per algorithm, Register,
// LookupAlgorithm), the method API every algorithm works with (Runner: a
// masked engine, the training loop Fit under the fixed or the auto
// schedule, importances, seeded streams, notes), the methods and the
// recommended default (Methods, Recommended), the algorithms themselves
// (Run; one file each, algo_NAME.go, with its registration, defaults,
// checks and settings), the audit of what a run
// changed (AuditModels) and writing the result back (Finalize). It never
// parses flags or prints: cmd/unlearn maps the command line onto a Job (or
// RetrainJob) and presents the outcome. Masks come from package localize,
// measurements from package eval (eval.Suite).
//
// # The pipeline
//
// Unlearn checks the job, loads the model once through the Suite (which
// checks it against the data), prepares an untied in-memory working copy
// (Prepare: refuses a model without a classifier output, with an op that
// has no gradient rule, or without trainable parameters), loads the oracle,
// evaluates the input and the oracle, localizes (or reads the mask file),
// runs the algorithm on the working copy, audits every initializer against
// a snapshot taken before the run (a change outside the mask is an internal
// error and nothing is written), writes the result back into the original
// graph in inference form, evaluates it, and writes metrics.json, the
// report and the model. The model is staged under a hidden name and
// renamed last, so no model is ever left without its metrics; on any error
// or cancellation nothing is left behind.
//
// # Algorithms
//
// Run(ctx, algo, Input, Config) changes in.Model's initializers in place. The
// mask (parameter name → elements that may change; nil = all) is honoured
// bit for bit: an element outside it never changes, under momentum and
// weight decay too (train's optimizers skip it). The one exception is rft,
// which always trains the whole classifier layer (DEL's reference sets the
// classifier's mask to 1 after the reset). BatchNormalization running
// statistics are state, not parameters: the training algorithms run
// BatchNormalization in training mode, as their references call
// model.train(), and so update the running statistics of every
// BatchNormalization; ssd and iu leave them alone.
//
//	rft           reset masked elements to a fresh PyTorch initialisation, then
//	              finetune masked elements + the classifier on the retain set
//	              (DEL, Torkzadehmahani et al., TMLR 2025)
//	finetune      descent on the retain set
//	neggrad       ascent on the forget set (weights −1)
//	neggrad+      β·L_retain − (1−β)·L_forget per step (retain batch + cycled
//	              forget batch, two passes, gradients combined in Go)
//	random-label  forget examples relabelled at random each epoch, trained
//	              jointly with the retain set (SalUn's RL)
//	l1-sparse     finetune + α_e·‖θ‖₁, α_e = L1·(1 − e/E)
//	scrub         teacher–student: max-steps (−KL on forget), min-steps
//	              (γ·CE + α·KL on retain)
//	ssd           no training: dampen elements whose forget Fisher importance
//	              exceeds α × the full-set one by min(1, λ·imp_D/imp_F)
//	iu            no training: one step θ + α·H⁻¹(g_F − g_R) with SalUn's
//	              WoodFisher recursion
//	retrain       exact unlearning: every parameter re-initialised and trained
//	              from scratch on the retain set with the train command's
//	              recipe (Retrain's engine and loop; no mask, no proxies, no
//	              auto schedule)
//
// Each algorithm's doc comment (runRFT, runSCRUB, …) cites the reference
// code it follows and says where we differ. Common to all: PyTorch's SGD
// (torch.optim.SGD semantics), learning-rate schedules stepped once per
// epoch as in the references, batches drawn with PCG(Seed, stream) with one
// stream per purpose, and a fixed ONNX Runtime thread count gives
// bit-identical results for a seed. Config.Augment (torchvision's
// RandomCrop(padding) and RandomHorizontalFlip, data.Augment) augments the
// training batches of rft, finetune, l1-sparse, neggrad, neggrad+ and
// random-label from a stream of its own; scrub, ssd and iu do not augment. Cancelling ctx stops at the next step
// and returns ctx.Err(); a NaN or Inf loss, gradient or result stops with an
// error wrapping train.ErrNonFinite. On any error in.Model is unchanged.
//
// # Defaults
//
// Defaults(algo) fills every zero field of Config: each algorithm's epochs,
// rate, schedule and settings, with batch size 128 and SGD momentum 0.9
// everywhere and weight decay 0 except scrub and retrain. The paper's
// recipes are for CIFAR-10/ResNet-18 on a GPU; these were chosen on the
// bundled demo for a CPU (TestTuneDemo reruns the comparison with
// UNLEARN_TUNE=1). docs/METHODS.md, "Algorithms and defaults", lists them
// with what they give on the demo and why each value was chosen. retrain is
// not tuned: its defaults are the train command's, and it should be given
// the recipe the model was trained with.
package unlearn
