// Package autorule is the auto schedule's rule (unlearn.Config.Schedule =
// "auto"): its settings (Config), the range test's choice of rate
// (CapRates, ChooseLR), the per-epoch annealing (AnnealFactor), and the
// stopping rule that judges the oracle-free proxies after every epoch
// (Targets, Violation, Decide, BestEpoch, ForgetNoise, ForgetSpread). It
// is pure arithmetic on schema.Proxies and schema.LRTrial: package
// unlearn/autofit drives it (the range test's steps, the epochs, the
// proxies' evaluation, the best epoch's state), and Version keys the
// experiment cache.
package autorule
