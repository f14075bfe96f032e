package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/onnxio"
)

func dataFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "data", Usage: "dataset: IDX folder (MNIST family), CIFAR binary folder, SVHN .mat folder, image folder or .npz (default: the bundled Fashion-MNIST subset)"},
		&cli.StringFlag{Name: "mean", Usage: "per-channel mean subtracted after scaling pixels to [0,1], comma-separated"},
		&cli.StringFlag{Name: "std", Usage: "per-channel standard deviation to divide by, comma-separated"},
		&cli.IntFlag{Name: "batch-size", Value: 256, Usage: "examples per forward pass"},
	}
}

func parseFloats(flag, s string) ([]float32, error) {
	if s == "" {
		return nil, nil
	}
	var out []float32
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 32)
		if err != nil {
			return nil, usagef("--%s %q: %q is not a number", flag, s, f)
		}
		out = append(out, float32(v))
	}
	return out, nil
}

// openData opens --data (or the bundled demo data) with --mean/--std.
func openData(c *cli.Context) (*data.Dataset, error) {
	mean, err := parseFloats("mean", c.String("mean"))
	if err != nil {
		return nil, err
	}
	std, err := parseFloats("std", c.String("std"))
	if err != nil {
		return nil, err
	}
	for _, s := range std {
		if s <= 0 {
			return nil, usagef("--std %q: every value must be positive", c.String("std"))
		}
	}
	path := c.String("data")
	if path == "" {
		path, err = bundledData()
		if err != nil {
			return nil, err
		}
	}
	return data.Open(path, data.Options{Mean: mean, Std: std})
}

// bundledData finds testdata/fashion beside the executable or the working directory.
func bundledData() (string, error) {
	cands := []string{"testdata/fashion"}
	if exe, err := os.Executable(); err == nil {
		cands = append(cands, exe+"/../../testdata/fashion")
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c, nil
		}
	}
	return "", usagef("--data not given and the bundled demo data (testdata/fashion) was not found; pass --data")
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// miaFlags are the evaluation flags shared by eval and compare.
func miaFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "forget", Usage: "ids file: 0-based indices into the training split, one per line"},
		&cli.BoolFlag{Name: "no-mia", Usage: "skip the membership-inference attacks (accuracy only)"},
		&cli.StringFlag{Name: "m-entropy", Value: "song-mittal", Usage: "modified-entropy feature: song-mittal (Song & Mittal's Mentr) or salun-code (SalUn's m_entropy as written, see README)"},
		&cli.Uint64Flag{Name: "mia-seed", Usage: "seed of the loss attack's subsample and cross-validation splits"},
	}
}

// evalRun holds what eval and compare share: the data, the forget set and
// the evaluation options.
type evalRun struct {
	ds             *data.Dataset
	forget, retain []int
	forgetPath     string
	opts           eval.Options
}

func newEvalRun(c *cli.Context) (*evalRun, error) {
	ro, err := runtimeOptions(c)
	if err != nil {
		return nil, err
	}
	if c.Int("batch-size") <= 0 {
		return nil, usagef("--batch-size %d: must be positive", c.Int("batch-size"))
	}
	r := &evalRun{opts: eval.Options{Runtime: ro, BatchSize: c.Int("batch-size"), NoMIA: c.Bool("no-mia")}}
	r.opts.MIA.Seed = c.Uint64("mia-seed")
	switch v := c.String("m-entropy"); v {
	case "song-mittal":
		r.opts.MIA.MEntropy = eval.MEntropySongMittal
	case "salun-code":
		r.opts.MIA.MEntropy = eval.MEntropySalUnCode
	default:
		return nil, usagef("--m-entropy %q: must be song-mittal or salun-code", v)
	}
	if r.ds, err = openData(c); err != nil {
		return nil, err
	}
	if p := c.String("forget"); p != "" {
		ids, err := data.ReadIDs(p, r.ds.Train.Len())
		if err != nil {
			return nil, err
		}
		r.forgetPath = p
		r.forget, r.retain = data.ForgetRetain(r.ds.Train.Len(), ids)
		if len(r.retain) == 0 && !r.opts.NoMIA {
			return nil, fmt.Errorf("--forget %s lists all %d training examples: no retain examples are left as shadow members for the membership-inference attack (pass --no-mia for accuracy only)", p, r.ds.Train.Len())
		}
		if r.ds.Test.Len() == 0 && !r.opts.NoMIA {
			return nil, fmt.Errorf("--data %s has an empty test split: no shadow non-members for the membership-inference attack (pass --no-mia for accuracy only)", r.ds.Path)
		}
	}
	return r, nil
}

// load reads a model and checks that it takes the dataset's images. role
// ("model", "oracle") prefixes errors about models other than the main one.
func (r *evalRun) load(path, role string) (*graph.Model, error) {
	prefix := ""
	if role != "model" {
		prefix = role + " "
	}
	m, err := onnxio.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s%w", prefix, err)
	}
	if err := checkModelData(m, path, r.ds); err != nil {
		return nil, fmt.Errorf("%s%w", prefix, err)
	}
	return m, nil
}

// checkModelData checks that m, read from path, is a classifier that ds
// can feed: one image input of the data's shape, one logits output, and as
// many classes as the labels need (naming the first label out of range).
func checkModelData(m *graph.Model, path string, ds *data.Dataset) error {
	in, shape, err := eval.ModelInput(m)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := data.CheckInput(ds, in.Name, shape); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := eval.ModelOutput(m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if k := staticClasses(m); k > 0 && ds.Classes > 0 && k != ds.Classes {
		if err := ds.CheckLabels(k); err != nil {
			return fmt.Errorf("%s outputs %d classes: %w", path, k, err)
		}
		return fmt.Errorf("%s outputs %d classes, dataset %s has %d", path, k, ds.Name, ds.Classes)
	}
	return nil
}

// staticClasses is the class count the model's output shape declares, or
// -1 when it does not say.
func staticClasses(m *graph.Model) int {
	if len(m.Graph.Outputs) == 0 {
		return -1
	}
	t := m.Graph.Outputs[0].Type
	if t == nil || len(t.Shape) != 2 || !t.Shape[1].Known() {
		return -1
	}
	return int(t.Shape[1].Size)
}

// evaluate runs Evaluate with progress bars labelled with label.
func (r *evalRun) evaluate(m *graph.Model, path, label string) (*eval.Metrics, error) {
	opts := r.opts
	bars := map[string]*progress{}
	opts.Progress = func(stage string, done, total int) {
		b := bars[stage]
		if b == nil {
			b = newProgress(label + " " + stage)
			bars[stage] = b
		}
		b.update(done, total)
	}
	met, err := eval.Evaluate(m, r.ds, r.forget, r.retain, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return met, nil
}

func modelInfo(path string) (*eval.ModelInfo, error) {
	sum, err := fileSHA256(path)
	if err != nil {
		return nil, err
	}
	return &eval.ModelInfo{Path: path, SHA256: sum}, nil
}

// provenance returns the dataset's and forget set's descriptions.
func (r *evalRun) provenance() (*eval.DataInfo, *eval.ForgetInfo, error) {
	sum, err := eval.HashPath(r.ds.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("hashing the dataset: %w", err)
	}
	di := &eval.DataInfo{Path: r.ds.Path, Format: r.ds.Format, Name: r.ds.Name, SHA256: sum, Classes: r.ds.Classes,
		ClassNames: r.ds.ClassNames, Mean: r.ds.Mean, Std: r.ds.Std}
	if r.forgetPath == "" {
		return di, nil, nil
	}
	fs, err := fileSHA256(r.forgetPath)
	if err != nil {
		return nil, nil, err
	}
	return di, &eval.ForgetInfo{Path: r.forgetPath, SHA256: fs, N: len(r.forget)}, nil
}

func (r *evalRun) settings(met *eval.Metrics) eval.Settings {
	return eval.Settings{BatchSize: r.opts.BatchSize, Device: r.opts.Runtime.Device, Threads: r.opts.Runtime.Threads,
		MIA: eval.NewMIASettings(met, r.opts.MIA)}
}

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "accuracy, membership inference and the gap to an oracle, as a table, metrics.json and an HTML report",
		Description: "Measures --model on the training and test splits of --data: accuracy overall and per class and, with\n" +
			"--forget, on the forget and retain sets and SalUn's SVC membership-inference scores of the forget set\n" +
			"with the unlearning challenge's loss attack. With --oracle (a model trained without the forget set)\n" +
			"both are measured on the same examples and Δ = oracle − model is reported for every metric.",
		ArgsUsage: " ",
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "oracle", Usage: "ONNX classifier trained without the forget set, to compare with"},
			&cli.StringFlag{Name: "json", Usage: "write metrics.json (schema unlearn.metrics/v1) to `FILE` (- for stdout)"},
			&cli.StringFlag{Name: "report", Usage: "write a self-contained HTML report with plots to `FILE`"},
		}, miaFlags()...), dataFlags()...), runtimeFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("unexpected arguments %v", c.Args().Slice())
			}
			if err := checkOutputs(c, "json", "report"); err != nil {
				return err
			}
			r, err := newEvalRun(c)
			if err != nil {
				return err
			}
			modelPath, oraclePath := c.String("model"), c.String("oracle")
			m, err := r.load(modelPath, "model")
			if err != nil {
				return err
			}
			var om *graph.Model
			if oraclePath != "" {
				if om, err = r.load(oraclePath, "oracle"); err != nil {
					return err
				}
				if a, b := staticClasses(m), staticClasses(om); a > 0 && b > 0 && a != b {
					return fmt.Errorf("oracle %s outputs %d classes, model %s outputs %d", oraclePath, b, modelPath, a)
				}
			}
			if c.String("report") != "" && r.forget == nil {
				return usagef("--report needs --forget: the report compares the forget set with the rest")
			}
			met, err := r.evaluate(m, modelPath, "model")
			if err != nil {
				return err
			}
			rep := &eval.Report{Schema: eval.Schema, Tool: "unlearn " + Version, Metrics: met, Settings: r.settings(met)}
			if rep.Model, err = modelInfo(modelPath); err != nil {
				return err
			}
			if rep.Data, rep.Forget, err = r.provenance(); err != nil {
				return err
			}
			if om != nil {
				omet, err := r.evaluate(om, oraclePath, "oracle")
				if err != nil {
					return err
				}
				if omet.Classes != met.Classes {
					return fmt.Errorf("oracle %s outputs %d classes, model %s outputs %d", oraclePath, omet.Classes, modelPath, met.Classes)
				}
				oi, err := modelInfo(oraclePath)
				if err != nil {
					return err
				}
				rep.Oracle = &eval.Section{Model: oi, Metrics: omet}
				rep.Delta = eval.NewDelta(omet, met)
				if rep.Agreement, err = eval.NewAgreement(omet, met); err != nil {
					return err
				}
			}
			return emit(c, rep)
		},
	}
}

// emit prints the table and writes metrics.json and the report: both are
// rendered first and then put in place together, so an error leaves no
// output file behind.
func emit(c *cli.Context, rep *eval.Report) error {
	return emitTo(c, rep, c.String("json"), c.String("report"))
}

// emitTo is emit with the output paths given.
func emitTo(c *cli.Context, rep *eval.Report, jsonPath, reportPath string) error {
	files := map[string][]byte{}
	var stdoutJSON []byte
	if jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		b = append(b, '\n')
		if jsonPath == "-" {
			stdoutJSON = b
		} else {
			files[jsonPath] = b
		}
	}
	if reportPath != "" {
		b, err := report.HTML(rep)
		if err != nil {
			return fmt.Errorf("rendering %s: %w", reportPath, err)
		}
		files[reportPath] = b
	}
	tableTo := c.App.Writer
	if stdoutJSON != nil {
		tableTo = c.App.ErrWriter // keep stdout pure JSON
	}
	printTable(tableTo, rep)
	if err := outfile.WriteFiles(files); err != nil {
		return err
	}
	if stdoutJSON != nil {
		_, err := c.App.Writer.Write(stdoutJSON)
		return err
	}
	return nil
}

// printTable writes the metrics table: one row per metric, the model's
// value, and with an oracle the oracle's and Δ in percentage points.
func printTable(w io.Writer, rep *eval.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	oracle, before := rep.Oracle != nil, rep.Before != nil
	head := "metric\t"
	if before {
		head += "\t  before"
	}
	head += "\t   model"
	if oracle {
		head += "\t  oracle\tΔ (points)"
	}
	fmt.Fprintln(tw, head)
	group := ""
	for _, row := range report.Rows(rep) {
		g := ""
		if row.Group != group {
			g, group = row.Group, row.Group
		}
		switch row.Group {
		case "agreement":
			fmt.Fprintf(tw, "%s\t%s\t%s%8s", g, row.Name, skip(before), pctCell(row.Model))
		case "summary": // a mean of |Δ|: no sign
			fmt.Fprintf(tw, "%s\t%s\t%s%8s\t%8s\t%8.2f", g, row.Name, skip(before), "", "", 100**row.Delta)
		default:
			fmt.Fprintf(tw, "%s\t%s\t", g, row.Name)
			if before {
				fmt.Fprintf(tw, "%8s\t", pctCell(row.Before))
			}
			fmt.Fprintf(tw, "%8s", pctCell(row.Model))
			if oracle {
				fmt.Fprintf(tw, "\t%8s\t%8s", pctCell(row.Oracle), deltaCell(row.Delta))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if rep.Counts.Forget != nil {
		fmt.Fprintf(w, "examples: train %d, test %d, forget %d, retain %d", rep.Counts.Train, rep.Counts.Test, *rep.Counts.Forget, *rep.Counts.Retain)
	} else {
		fmt.Fprintf(w, "examples: train %d, test %d", rep.Counts.Train, rep.Counts.Test)
	}
	if s := rep.Settings.MIA; s != nil {
		fmt.Fprintf(w, "; MIA shadow members %d, non-members %d", s.ShadowMembers, s.ShadowNonMembers)
	}
	fmt.Fprintln(w)
	if rep.MIA != nil {
		fmt.Fprintln(w, "mia: share of the forget set each SVC calls non-member (SalUn); loss_lr: attack accuracy, 50% = chance")
	}
	if oracle {
		fmt.Fprintln(w, "Δ = oracle − model; agreement: same predicted class as the oracle")
	}
	if s := rep.Settings.MIA; s != nil {
		for _, n := range s.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
}

// skip is an empty before-column cell when the table has one.
func skip(before bool) string {
	if before {
		return "        \t"
	}
	return ""
}

func pctCell(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100**v)
}

func deltaCell(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%+.2f", 100**v)
}

func writeJSON(c *cli.Context, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err := c.App.Writer.Write(b)
		return err
	}
	return outfile.WriteFile(path, b)
}

func pick[T any](v []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}
