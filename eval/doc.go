// Package eval measures models: accuracy on the train, test, forget and
// retain splits (overall and per class), membership-inference scores of the
// forget set, and the differences to an oracle retrained without it. It runs
// forward passes only (through package infer) and never trains. docs/DESIGN.md ("The method",
// Metrics) states what is measured and why.
//
// # Entry points
//
//	Evaluate(m, ds, forget, retain, Options) (*Metrics, error)  forward passes + metrics
//	EvaluateOutputs(train, test, forget, retain, Options)         the same from logits
//	NewDelta(oracle, model) *schema.Delta                        Δ = oracle − model
//	NewAgreement(a, b) (*schema.Agreement, error)                same-prediction rates
//	Suite.Measure, SetOracle, NewMIASettings                     metrics.json (schema.Report, unlearn.metrics/v1)
//	Suite.Compare                                                the comparison of several models with one oracle
//	                                                             (schema.CompareReport, unlearn.compare/v1)
//	MIA, SVCMIA, LossAttack, ComputeFeatures, CrossEntropy       the attacks on their own
//	FitLogReg1D, StratifiedShuffleSplit, CrossValidateLogReg     the loss attack's parts
//
// The types of metrics.json and compare.json are package schema's; eval
// fills them (Metrics embeds schema.Metrics and keeps what the JSON leaves
// out). The HTML report is in the subpackage eval/report, the support
// vector classifier in eval/svc.
//
// # Membership inference
//
// SVCMIA is SalUn's SVC_MIA (Fan et al., ICLR 2024; code
// OPTML-Group/Unlearn-Saliency, Classification/evaluation/SVC_MIA.py and
// main_forget.py): shadow members are the first |test| retain examples (all
// of retain when it is smaller; ShadowMembers), shadow non-members the test
// split, the target the forget set. For each Feature (correctness,
// confidence, entropy, modified entropy, the probability vector) one RBF
// SVC with C = 3 and γ = 1/n_features is fitted on members (1) and
// non-members (0); the score is the fraction of the forget set it predicts
// non-member, 1 − mean(prediction) as SalUn computes it for its target_test.
// After good unlearning the score approaches the oracle's.
//
// The modified entropy is Song & Mittal's Mentr by default; SalUn's code
// computes something else (see MEntropySalUnCode) and can be reproduced with
// MIAOptions.MEntropy. Features are computed in float64 from the float32
// logits (ComputeFeatures describes the numerics); SalUn computes them in
// float32, which gives the same SVC predictions on the parity fixture. The
// one exception is MEntropySalUnCode, computed in float32 as SalUn's code
// does, so that it reproduces SalUn's numbers where float32 underflows
// (logit gaps above ~104).
//
// LossAttack is the NeurIPS 2023 unlearning challenge kit's simple_mia:
// cross-validated logistic regression on forget versus test losses, balanced
// by subsampling; its score is an accuracy (0.5 = chance), so unlike the SVC
// scores lower means less is remembered. Its random subsample and partitions
// come from MIAOptions.Seed, not numpy.
//
// Parity: testdata/mia/make_mia_ref.py computes the bundled model's and
// oracle's features and scores with PyTorch, NumPy and scikit-learn; the
// tests require the features to agree to 1e-6, every SVC score to agree
// within one forget example (all agree exactly), and the logistic regression
// to agree fold by fold on scikit-learn's own folds.
//
// # Conventions
//
// Every rate is a fraction in [0, 1], every Δ in [−1, 1]; logits are
// row-major [examples, classes] float32; examples are addressed by their
// index in the split (ids in the training split for forget and retain).
// Inputs are never modified. Errors wrap the package's Err values with
// context; nothing panics on bad input.
package eval
