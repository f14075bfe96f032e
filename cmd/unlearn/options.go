package main

import (
	"errors"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train"
)

// options is one command's settings, bound to its flags: the command's
// flag definitions write into its fields (cli's Destination), and no other
// code reads a flag by name. As kubectl's commands do, complete fills in
// what the flags leave to the arguments or to other settings (without it,
// the command takes no arguments: noArgs), validate refuses a bad value
// before any work (where the library's checks are not enough), and run does
// the work.
type options interface{ run(c *cli.Context) error }

// action is a command's Action: o's three steps in order. Its errors are
// marked as the command's (inTable), with the command's table when it has
// one (tabled), which words the field paths they name as its flags; an
// error without the mark is urfave/cli's own, a usage error.
func action(o options) cli.ActionFunc {
	return func(c *cli.Context) error {
		complete := noArgs
		if oc, ok := o.(interface{ complete(*cli.Context) error }); ok {
			complete = oc.complete
		}
		err := complete(c)
		if ov, ok := o.(interface{ validate() error }); ok && err == nil {
			err = ov.validate()
		}
		if err == nil {
			err = o.run(c)
		}
		if t, ok := o.(tabled); ok && err != nil {
			return inTable{err, t.tableRows()}
		} else if err != nil {
			return inTable{err, nil}
		}
		return nil
	}
}

// tabled is a command whose flags come from a table (table.go).
type tabled interface{ tableRows() []row }

// noArgs refuses positional arguments (every command but compare).
func noArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %v", c.Args().Slice())
	}
	return nil
}

// runtimeOpts are the flags of ONNX Runtime's session: --ort-lib,
// --threads and --device.
type runtimeOpts struct {
	lib, device string
	threads     int
}

func (r *runtimeOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ort-lib", Destination: &r.lib, Usage: "`PATH` of libonnxruntime.so.1 (default: " +
			"$ONNXRUNTIME_LIB, then beside the executable, where bin/unlearn finds the ../.ort/ that make ort " +
			"fills; never the working directory; refused if another user could replace it); with --device " +
			"cuda, of the GPU build's libonnxruntime.so (default: $ONNXRUNTIME_GPU_LIB, then ../.ort-gpu/, " +
			"which make ort-gpu fills)"},
		&cli.IntFlag{Name: "threads", Destination: &r.threads, Usage: "intra-op threads for ONNX Runtime " +
			"(0: the usable cores, within a container's CPU quota)", Value: 0},
		&cli.StringFlag{Name: "device", Destination: &r.device, Usage: "cpu or cuda (cuda loads ONNX " +
			"Runtime's GPU build, make ort-gpu, and needs an NVIDIA driver, CUDA 13 and cuDNN 9, found on the " +
			"library path, in the system's folders or in a Python environment's nvidia packages)", Value: "cpu"},
	}
}

// dev is --device as the library takes it.
func (r *runtimeOpts) dev() string { return strings.ToLower(r.device) }

// options checks the flags and loads ONNX Runtime (for cuda, the GPU
// build after finding its provider and the CUDA and cuDNN libraries: one
// error line naming what is missing). trains: the command trains, which
// cuda refuses (train.CheckCUDATraining).
func (r *runtimeOpts) options(trains bool) (onnxrt.Options, error) {
	o := onnxrt.Options{LibPath: r.lib, Threads: r.threads, Device: r.dev()}
	if o.Threads < 0 {
		return o, usagef("--threads %d: must be 0 (the usable cores) or positive", o.Threads)
	}
	if o.Device != "cpu" && o.Device != "cuda" {
		return o, usagef("--device %q: must be cpu or cuda", r.device)
	}
	if err := train.CheckCUDATraining(o.Device); err != nil && trains {
		return o, usageError{err}
	}
	if err := onnxrt.Setup(o); err != nil {
		return o, err
	}
	return o, nil
}

// dataOpts are the dataset flags: --data, --mean, --std and --batch-size.
type dataOpts struct {
	path, mean, std string
	batchSize       int
}

// flags are the dataset flags with --batch-size's default and usage.
func (d *dataOpts) flags(batch int, batchUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "data", Destination: &d.path, Usage: "dataset: IDX folder (MNIST family), " +
			"CIFAR binary folder, SVHN .mat folder, image folder or .npz (default: the bundled Fashion-MNIST " +
			"subset)"},
		&cli.StringFlag{Name: "mean", Destination: &d.mean, Usage: "per-channel mean subtracted after " +
			"scaling pixels to [0,1], comma-separated"},
		&cli.StringFlag{Name: "std", Destination: &d.std, Usage: "per-channel standard deviation to divide " +
			"by, comma-separated"},
		&cli.IntFlag{Name: "batch-size", Destination: &d.batchSize, Value: batch, Usage: batchUsage},
	}
}

// open opens --data (or the bundled demo data) with --mean/--std; a bad
// setting is a usage error. The bundled data's path, opened for want of
// --data, goes in the app's metadata, where runIO finds it.
func (d *dataOpts) open(c *cli.Context) (*data.Dataset, error) {
	ds, bundled, err := data.OpenSettings(d.path, d.mean, d.std)
	if errors.As(err, new(*setting.Error)) {
		return nil, usageError{err}
	}
	if bundled {
		// A model of the demo's shape would run on the demo's images
		// without a word: runIO names them after the run, or in its error.
		c.App.Metadata["bundled"] = ds.Path
	}
	return ds, err
}

// suiteOpts are the flags that eval, compare, score and the main command
// share: runtime, data, the forget set and the attacks' settings.
type suiteOpts struct {
	rt               runtimeOpts
	data             dataOpts
	forget, mEntropy string
	noMIA            bool
	miaSeed          uint64
}

// miaFlags are the forget set and the attacks' flags.
func (s *suiteOpts) miaFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "forget", Destination: &s.forget, Usage: "ids file: 0-based indices into the " +
			"training split, one per line (image folders: or their file names, as \"unlearn data\" lists them)"},
		&cli.BoolFlag{Name: "no-mia", Destination: &s.noMIA, Usage: "skip the membership-inference attacks " +
			"(accuracy only)"},
		&cli.StringFlag{Name: "m-entropy", Destination: &s.mEntropy, Value: "song-mittal", Usage: "modified-" +
			"entropy feature: song-mittal (Song & Mittal's Mentr) or salun-code (SalUn's m_entropy as written, " +
			"see README)"},
		&cli.Uint64Flag{Name: "mia-seed", Destination: &s.miaSeed, Usage: "seed of the loss attack's subsample " +
			"and cross-validation splits"},
	}
}

// suite reads the shared flags into an eval.Suite whose progress goes to
// the terminal; trains as for runtimeOpts.options.
func (s *suiteOpts) suite(c *cli.Context, trains bool) (*eval.Suite, error) {
	ro, err := s.rt.options(trains)
	if err != nil {
		return nil, err
	}
	opts, err := eval.SuiteSettings{MEntropy: s.mEntropy, BatchSize: s.data.batchSize,
		NoMIA: s.noMIA, MIASeed: s.miaSeed}.Options()
	if err != nil {
		return nil, usageError{err}
	}
	opts.Runtime = ro
	ds, err := s.data.open(c)
	if err != nil {
		return nil, err
	}
	st, err := eval.OpenSuite(ds, s.forget, opts)
	if err != nil {
		return nil, err
	}
	st.Bar, st.Info, st.Terms = logs.Bar, logs.Info, terms
	return st, nil
}
