// Command unlearn removes the influence of chosen training examples from a
// classifier exported as ONNX and writes the unlearned model, its
// metrics.json and, on request, an HTML report:
//
//	unlearn --model M.onnx --forget ids.txt [--data D] [--method del] [--budget 0.1] [--out U.onnx]
//
// Subcommands: localize, export, inspect, eval, compare, train, artifacts,
// experiment, score, version. README.md and docs/ document every flag, output and exit code;
// `unlearn help` lists them.
//
// The command owns the command line: flags (github.com/urfave/cli/v2), the
// --config YAML file, --log-format json and --quiet, progress bars on a
// terminal, the terminal tables, signal handling and exit codes (0 success,
// 1 bad input or failed run, 2 usage, 130 interrupted). The work is library
// calls: onnxio and graph read the model, data the dataset and ids, localize
// picks the mask, unlearn runs the algorithm, audits and writes the model
// back (the main command is one call, unlearn.Unlearn with a Job built from
// the flags), eval measures (eval.Suite) and eval/report renders, train and
// `train` is unlearn.Retrain with a RetrainJob built from the flags,
// train/autodiff serves `artifacts`, and `experiment` is
// experiment/runner.Run, whose step states this command prints; `score` is
// unlearn/scoring.Run;
// docs/DESIGN.md "Architecture" describes the split.
package main
