// Package runner runs an experiment (package experiment's Config) in process:
// per seed it trains the original from scratch (unlearn.Retrain) or takes
// the config's model, draws the forget sets, retrains an oracle without
// each and evaluates it (eval.Suite), runs every method row at every
// budget through unlearn.Unlearn against the seed's original, and writes
// the records (results.jsonl) and the report (RESULTS.md, plots). Its
// entry point is Run(ctx, Job).
//
// Every step is cached under the config's out folder by its key
// (experiment.OriginalKey, OracleKey, RunKey; pinned by tests, since
// committed results are cached by them): a step whose key has a record in
// results.jsonl never runs again, and a step with its folder's done.json or
// record.json neither. Each step runs with the settings of the tool's
// commands at their defaults (`unlearn train --from-scratch`, `unlearn
// eval`, the main command with the row's choices; Choose maps a row onto
// them), streams its log events into its folder as JSON lines (log.jsonl),
// and leaves nothing behind when cancelled. Steps run one at a time in this
// process; their times (Retrain's training seconds, Unlearn's localize and
// unlearn seconds) measure the same spans as the commands did.
//
// The package prints nothing: the grid's progress goes to Job.Step, the
// report comes back in the Outcome. Package experiment keeps the plan, the
// keys, the records and the statistics, and imports no other package of
// the tool; this one adds the library calls.
package runner
