// Command unlearn removes chosen training examples' influence from an ONNX
// classifier and writes the unlearned model, metrics.json and (--report) HTML:
//
//	unlearn --model M.onnx --forget ids.txt [--data D] [--method del] [--budget 0.1] [--out U.onnx]
//
// Subcommands: localize, export, inspect, eval, compare, train, artifacts,
// experiment, score, version; README.md and docs/ document them all.
//
// The command owns the command line: flags (urfave/cli/v2), --config,
// --log-format json and --quiet, progress bars, terminal tables, signals and
// exit codes (0 success, 1 bad input or failed run, 2 usage, 130
// interrupted). Each command's flags write into its options struct
// (options.go: complete, validate, run), the only code that reads them;
// run is one library call on a job built from it: unlearn.Unlearn, unlearn.Retrain (train), eval.Suite, localize,
// experiment/runner.Run, unlearn/scoring.Run (score); docs/DESIGN.md
// "Architecture" describes the split.
package main
