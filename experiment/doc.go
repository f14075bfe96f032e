// Package experiment runs the paper's comparison (Torkzadehmahani et al.,
// TMLR 2025, Table 1 and Figure 2) on a user's own model and data: forget
// sets, an original model and a retrained oracle per seed, a grid of
// methods × budgets × seeds, and a table of mean ± 95 % confidence interval
// of each method's distance to the oracle. This package holds the plan
// (Config), the forget sets, the cache keys (keys.go: OriginalKey,
// OracleKey, RunKey; committed results are cached by them, so
// TestKeysPinned pins them), the records and the statistics. Package
// experiment/runner runs the steps in process through the library
// (unlearn.Retrain, eval.Suite, unlearn.Unlearn), with the settings the
// tool's commands would use. This package imports no other package of the
// tool and never runs a model.
// docs/EXPERIMENTS.md "Experiments" documents the config and the outputs.
package experiment
