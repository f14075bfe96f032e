package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// Version is the tool's version, set at build time with -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

// Exit codes (documented in README.md).
const (
	exitOK    = 0
	exitError = 1 // bad input, failed run
	exitUsage = 2 // bad flags or arguments
	// exitNotVouched: --strict and the run is not vouched for; every
	// output was written (a pipeline stops on it, and the files say why)
	exitNotVouched = 3
	// exitInterrupted: stopped by SIGINT/SIGTERM; no output written (128+SIGINT, as shells report it)
	exitInterrupted = 130
)

// usageError marks errors in flags or arguments.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func init() { cli.FlagStringer = ownDefaults(cli.FlagStringer) }

// ownDefaults wraps the help's flag formatter, which appends
// "(default: V)" to every usage text. A flag whose usage states its own
// default ("(default 0.9, as the train command's)") takes 0 to mean that
// default, so the appended "(default: 0)" would contradict it: it is
// dropped there and kept everywhere else.
func ownDefaults(inner cli.FlagStringFunc) cli.FlagStringFunc {
	return func(f cli.Flag) string {
		s := inner(f)
		df, ok := f.(cli.DocGenerationFlag)
		if !ok || !strings.Contains(df.GetUsage(), "(default") {
			return s
		}
		return strings.TrimSuffix(s, " (default: "+df.GetDefaultText()+")")
	}
}

// notVouched is the main command's result under --strict when the run is
// not vouched for (why): its outputs are written, and it exits 3.
type notVouched struct{ why string }

func (n notVouched) Error() string {
	return "--strict: the result is not vouched for (" + n.why + "); the outputs were written, and metrics.json says why"
}

func newApp() *cli.App {
	o := &methodOpts{}
	app := &cli.App{
		Name:    "unlearn",
		Usage:   "remove the influence of training examples from an ONNX classifier",
		Version: Version,
		Description: "unlearn takes a trained classifier exported as ONNX and the ids of training " +
			"examples to forget,\n" +
			"and writes an unlearned ONNX model with the metrics that show it worked.\n\n" +
			"Without choices it runs the recommended default, " + unlearn.Recommendation().Render(terms) + ":\n" +
			"DEL localization, then reset-and-finetune for as long as oracle-free proxies say is needed\n" +
			"(README, \"Which method\"); --epochs, --lr or --proxies=false give a fixed recipe instead.\n\n" +
			"Exit codes: 0 success; 1 error (bad input, failed run); 2 usage error; 3 --strict and the result " +
			"is not vouched for (outputs written); 130 interrupted (no output).",
		Flags: append(o.flags(), &cli.BoolFlag{Name: "strict", Destination: &o.strict, Usage: "exit with " +
			"code 3 (after writing every output) when the result is not vouched for, so that a pipeline stops"}),
		Action: action(o),
		UsageText: "unlearn --model M.onnx --forget ids.txt [--data D] [--method del] [--budget 0.1] " +
			"[--oracle O.onnx] [--out U.onnx]\n   unlearn COMMAND [flags]",
		Commands: []*cli.Command{
			inspectCommand(),
			evalCommand(),
			compareCommand(),
			trainCommand(),
			localizeCommand(),
			exportCommand(),
			experimentCommand(),
			scoreCommand(),
			artifactsCommand(),
			dataCommand(),
			versionCommand(),
		},
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return usageError{err}
		},
		ExitErrHandler: func(c *cli.Context, err error) {},
	}
	// Numeric flags are checked before any command runs (checkFlagValues).
	app.Before = checkFlagValues
	for _, cmd := range app.Commands {
		cmd.Before, cmd.OnUsageError = checkFlagValues, app.OnUsageError // not the help: one line
	}
	// --config, --log-format and --quiet are taken out of the arguments
	// before parsing (globalArgs); they are listed for the help text.
	app.Flags = append(app.Flags, pipelineFlags()...)
	for _, cmd := range app.Commands {
		for _, f := range pipelineFlags() {
			if cmd.Name == "experiment" && f.Names()[0] == "config" {
				continue // its own --config is the experiment file
			}
			cmd.Flags = append(cmd.Flags, f)
		}
	}
	return app
}

func versionCommand() *cli.Command {
	var rt runtimeOpts
	return &cli.Command{
		Name:  "version",
		Usage: "print the tool's and ONNX Runtime's versions",
		Flags: rt.flags(),
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer,
				"unlearn %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if err := onnxrt.Setup(onnxrt.Options{LibPath: rt.lib, Device: rt.dev()}); err != nil {
				fmt.Fprintf(c.App.Writer, "onnxruntime: not loaded: %v\n", err)
				return nil
			}
			fmt.Fprintf(c.App.Writer, "onnxruntime %s (%s)\n", onnxrt.Version(), onnxrt.LibraryPath())
			return nil
		},
	}
}

func main() {
	// Before anything else: the dynamic loader read LD_LIBRARY_PATH when the
	// process started, and ONNX Runtime's dependencies are found through it.
	if err := onnxrt.ReexecSafeLibraryPath(os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "unlearn:", err)
		os.Exit(exitError)
	}
	code := run(os.Args)
	onnxrt.RemovePinned()
	os.Exit(code)
}

func run(args []string) int { return runIO(args, os.Stdout, os.Stderr) }

// runIO runs the command line args with its output on stdout and its log
// on stderr, and returns the exit code.
func runIO(args []string, stdout, stderr io.Writer) int {
	interrupts.Watch()
	app := newApp()
	app.Writer, app.ErrWriter = stdout, stderr
	logs.Reset(stderr)
	// Requested output on stdout (--metrics -, --json -) is written even
	// under --quiet, which silences only the tables and summaries.
	app.Metadata = map[string]any{"stdout": stdout}
	args, err := globalArgs(app, args)
	fromCLI := false // urfave/cli's own error: a missing required flag, a bad value
	if err == nil {
		if logs.Quiet {
			app.Writer = io.Discard
		}
		err = runRecovered(app, args, outfile.RemoveTracked)
		fromCLI = err != nil && !errors.As(err, new(inTable)) && !errors.Is(err, errPanic)
	}
	defaultData, _ := app.Metadata["bundled"].(string)
	if err == nil {
		if defaultData != "" {
			// Last, where it is seen; not before, where a failing run's
			// stderr must stay its one error line.
			logs.Info("data", "note: --data was not given: this run read the bundled demo data "+defaultData+
				" (a Fashion-MNIST subset); pass --data with the model's training data", "path", defaultData)
		}
		return exitOK
	}
	msg := strings.ReplaceAll(render(err), "\n", " ")
	if t, ok := strings.CutPrefix(msg, "No help topic for "); ok {
		msg = "unknown command " + t + " (see `unlearn help`)"
	}
	code := exitError
	var u usageError
	var nv notVouched
	switch {
	case errors.As(err, &nv):
		code = exitNotVouched
	case errors.Is(err, errInterrupted):
		code = exitInterrupted
	case errors.As(err, &u) || fromCLI ||
		errors.Is(err, experiment.ErrConfig) || errors.Is(err, unlearn.ErrSettings):
		code = exitUsage
	}
	if code == exitError && defaultData != "" {
		// Ids out of range, a shape or class count that does not fit:
		// most likely the data was never meant to be the demo's.
		msg += " (--data was not given: this run read the bundled demo data " + defaultData + ")"
	}
	logs.Fail(msg, code)
	return code
}
