package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
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

type splitResult struct {
	N        int     `json:"n"`
	Accuracy float64 `json:"accuracy"`
}

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "accuracy of a model on the train, test, forget and retain splits",
		ArgsUsage: " ",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "forget", Usage: "ids file: 0-based indices into the training split, one per line"},
			&cli.StringFlag{Name: "json", Usage: "write the results as JSON to `FILE` (- for stdout)"},
		}, dataFlags()...), runtimeFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("unexpected arguments %v", c.Args().Slice())
			}
			opts, err := runtimeOptions(c)
			if err != nil {
				return err
			}
			if c.Int("batch-size") <= 0 {
				return usagef("--batch-size %d: must be positive", c.Int("batch-size"))
			}
			modelPath := c.String("model")
			m, err := onnxio.Load(modelPath)
			if err != nil {
				return err
			}
			ds, err := openData(c)
			if err != nil {
				return err
			}
			_, shape, err := eval.ModelInput(m)
			if err != nil {
				return fmt.Errorf("%s: %w", modelPath, err)
			}
			in, _, _ := eval.ModelInput(m)
			if err := data.CheckInput(ds, in.Name, shape); err != nil {
				return fmt.Errorf("%s: %w", modelPath, err)
			}
			var forget, retain []int
			if p := c.String("forget"); p != "" {
				ids, err := data.ReadIDs(p, ds.Train.Len())
				if err != nil {
					return err
				}
				forget, retain = data.ForgetRetain(ds.Train.Len(), ids)
			}
			cl, err := eval.NewClassifier(m, opts, c.Int("batch-size"))
			if err != nil {
				return fmt.Errorf("%s: %w", modelPath, err)
			}
			defer cl.Close()
			start := time.Now()
			res := map[string]splitResult{}
			trainIdx := seq(ds.Train.Len())
			logits, err := cl.Logits(ds.Train, trainIdx, newProgress("train").update)
			if err != nil {
				return err
			}
			pred := eval.Argmax(logits, cl.Classes())
			if cl.Classes() != ds.Classes && ds.Classes > 0 {
				return fmt.Errorf("%s: model outputs %d classes, dataset %s has %d", modelPath, cl.Classes(), ds.Name, ds.Classes)
			}
			trainLabels := labels(ds.Train, trainIdx)
			res["train"] = splitResult{len(trainIdx), eval.Accuracy(pred, trainLabels)}
			if forget != nil {
				res["forget"] = splitResult{len(forget), eval.Accuracy(pick(pred, forget), pick(trainLabels, forget))}
				res["retain"] = splitResult{len(retain), eval.Accuracy(pick(pred, retain), pick(trainLabels, retain))}
			}
			testIdx := seq(ds.Test.Len())
			tl, err := cl.Logits(ds.Test, testIdx, newProgress("test").update)
			if err != nil {
				return err
			}
			res["test"] = splitResult{len(testIdx), eval.Accuracy(eval.Argmax(tl, cl.Classes()), labels(ds.Test, testIdx))}
			elapsed := time.Since(start)

			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "split\texamples\taccuracy\t\n")
			for _, s := range []string{"train", "test", "forget", "retain"} {
				if r, ok := res[s]; ok {
					fmt.Fprintf(tw, "%s\t%d\t%.2f%%\t\n", s, r.N, 100*r.Accuracy)
				}
			}
			tw.Flush()
			if p := c.String("json"); p != "" {
				sum, err := fileSHA256(modelPath)
				if err != nil {
					return err
				}
				acc := map[string]float64{}
				counts := map[string]int{}
				for k, v := range res {
					acc[k] = v.Accuracy
					counts[k] = v.N
				}
				doc := map[string]any{
					"schema":   "unlearn.metrics/v1",
					"model":    map[string]string{"path": modelPath, "sha256": sum},
					"data":     map[string]any{"path": ds.Path, "format": ds.Format, "classes": ds.Classes},
					"accuracy": acc,
					"counts":   counts,
					"timings":  map[string]float64{"evaluate_s": elapsed.Seconds()},
				}
				return writeJSON(c, p, doc)
			}
			return nil
		},
	}
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
	return writeFileAtomic(path, b)
}

// writeFileAtomic writes through a temporary file in the same folder and a
// rename, so readers never see a partial file.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".unlearn-*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil { // CreateTemp makes 0600
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func labels(s *data.Split, idx []int) []int {
	out := make([]int, len(idx))
	for i, j := range idx {
		out[i] = s.Label(j)
	}
	return out
}

func pick[T any](v []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}
