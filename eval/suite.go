package eval

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/schema"
)

// Suite is what every command that measures models shares: the data, the
// forget set (indices into the training split, with the retain set as the
// rest) and the evaluation options. `unlearn eval`, `unlearn compare` and
// the unlearning pipeline measure every model through one Suite, so the
// numbers they report come from the same examples and settings.
type Suite struct {
	Data           *data.Dataset
	Forget, Retain []int
	// ForgetPath is the ids file the forget set came from ("" without one);
	// it is hashed into the report's provenance.
	ForgetPath string
	// ForgetGiven says how that file named the examples (data.GivenIDs or
	// data.GivenNames); "" leaves it out of the report.
	ForgetGiven string
	Options     Options
	// Bar, when set, returns a progress callback for a labelled stage
	// ("before forward", "oracle mia", ...).
	Bar func(label string) func(done, total int)
	// Info, when set, receives warnings (event "warning") and steps: an
	// event name, a line of text and key, value pairs.
	Info func(event, text string, fields ...any)
	// Terms words the settings Info's warnings name (the command's:
	// flags); nil names them plainly (setting.Plain).
	Terms setting.Terms
}

// NewSuite checks that the forget set leaves what the membership-inference
// attack needs (retain examples as shadow members, test examples as
// non-members) unless opts.NoMIA, and returns the suite.
func NewSuite(ds *data.Dataset, forgetPath string, ids []int, opts Options) (*Suite, error) {
	s := &Suite{Data: ds, Options: opts}
	if forgetPath == "" {
		return s, nil
	}
	s.ForgetPath = forgetPath
	s.Forget, s.Retain = data.ForgetRetain(ds.Train.Len(), ids)
	if len(s.Retain) == 0 && !opts.NoMIA {
		return nil, setting.Errorf("forget", " %s lists all %d training examples: no retain examples are left as "+
			"shadow members for the membership-inference attack (pass %s for accuracy only)", forgetPath,
			ds.Train.Len(), setting.Of("no-mia"))
	}
	if ds.Test.Len() == 0 && !opts.NoMIA {
		return nil, setting.Errorf("data", " %s has an empty test split: no shadow non-members for the "+
			"membership-inference attack (pass %s for accuracy only)", ds.Path, setting.Of("no-mia"))
	}
	return s, nil
}

// Load reads a model and checks that it takes the suite's images. role
// ("model", "oracle", ...) prefixes errors about models other than the
// main one.
func (s *Suite) Load(path, role string) (*graph.Model, error) {
	prefix := ""
	if role != "model" {
		prefix = role + " "
	}
	m, err := onnxio.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s%w", prefix, err)
	}
	if err := infer.CheckModelData(m, path, s.Data); err != nil {
		return nil, fmt.Errorf("%s%w", prefix, err)
	}
	return m, nil
}

// Evaluate runs Evaluate on the suite's examples, with progress bars
// labelled with label; errors name path.
func (s *Suite) Evaluate(m *graph.Model, path, label string) (*Metrics, error) {
	opts := s.Options
	if s.Bar != nil {
		bars := map[string]func(int, int){}
		opts.Progress = func(stage string, done, total int) {
			b := bars[stage]
			if b == nil {
				b = s.Bar(label + " " + stage)
				bars[stage] = b
			}
			b(done, total)
		}
	}
	met, err := Evaluate(m, s.Data, s.Forget, s.Retain, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return met, nil
}

// Provenance returns the dataset's and forget set's descriptions for a
// report (no ForgetInfo without a forget set).
func (s *Suite) Provenance() (*schema.DataInfo, *schema.ForgetInfo, error) {
	ds := s.Data
	sum, err := fsread.HashPath(ds.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("hashing the dataset: %w", err)
	}
	di := &schema.DataInfo{Path: ds.Path, Format: ds.Format, Name: ds.Name, SHA256: sum, Classes: ds.Classes,
		ClassNames: ds.ClassNames, Mean: ds.Mean, Std: ds.Std}
	if s.ForgetPath == "" {
		return di, nil, nil
	}
	fs, err := hashFile(s.ForgetPath)
	if err != nil {
		return nil, nil, err
	}
	return di, &schema.ForgetInfo{Path: s.ForgetPath, SHA256: fs, N: len(s.Forget), Given: s.ForgetGiven}, nil
}

// Settings records how met was measured.
func (s *Suite) Settings(met *Metrics) schema.Settings {
	rt := s.Options.Runtime
	return schema.Settings{BatchSize: s.Options.BatchSize, Device: rt.Device, Threads: rt.Threads,
		ThreadsUsed: rt.ThreadCount(), MIA: NewMIASettings(met, s.Options.MIA)}
}

// NewModelInfo identifies the model file at path by its SHA-256.
func NewModelInfo(path string) (*schema.ModelInfo, error) {
	sum, err := hashFile(path)
	if err != nil {
		return nil, err
	}
	return &schema.ModelInfo{Path: path, SHA256: sum}, nil
}

// CompareToOracle returns Δ = oracle − model and the agreement of their
// predictions; the two must have been measured by the same Suite.
func CompareToOracle(oracle, model *Metrics, oraclePath, modelPath string) (*schema.Delta, *schema.Agreement, error) {
	if oracle.Classes != model.Classes {
		return nil, nil, fmt.Errorf("oracle %s outputs %d classes, model %s outputs %d",
			oraclePath, oracle.Classes, modelPath, model.Classes)
	}
	ag, err := NewAgreement(oracle, model)
	if err != nil {
		return nil, nil, err
	}
	return NewDelta(oracle, model), ag, nil
}

// SetOracle adds the oracle's section (oracle's file, its metrics omet),
// Δ and agreement to r, whose top-level metrics are model's: agreement
// needs model's predictions, which r does not hold.
func SetOracle(r *schema.Report, model *Metrics, oracle *schema.ModelInfo, omet *Metrics) error {
	if r.Metrics != &model.Metrics {
		return fmt.Errorf("eval: the report's top-level metrics are not the model's: %w", ErrMismatch)
	}
	d, ag, err := CompareToOracle(omet, model, oracle.Path, r.Model.Path)
	if err != nil {
		return err
	}
	r.Oracle = &schema.Section{Model: oracle, Metrics: &omet.Metrics}
	r.Delta, r.Agreement = d, ag
	return nil
}

// Measurements are the measurements behind a report's sections, with what
// metrics.json leaves out (predictions, example ids, the attacks'
// features, which the HTML report draws): the model's and, when there is
// one, the oracle's.
type Measurements struct {
	Model, Oracle *Metrics
}

// Measure evaluates the model at modelPath and, when oraclePath is set,
// the oracle on the suite's examples, and returns metrics.json's report
// (`unlearn eval`) and the measurements behind it. Both files are loaded
// and checked before the first forward pass, so a bad file fails at once.
func (s *Suite) Measure(modelPath, oraclePath, tool string) (*schema.Report, Measurements, error) {
	m, err := s.Load(modelPath, "model")
	if err != nil {
		return nil, Measurements{}, err
	}
	var om *graph.Model
	if oraclePath != "" {
		if om, err = s.Load(oraclePath, "oracle"); err != nil {
			return nil, Measurements{}, err
		}
		if err := infer.CheckSameClasses(m, om, modelPath, oraclePath); err != nil {
			return nil, Measurements{}, err
		}
		if err := s.NormalizationFromModels([]*graph.Model{m, om}, []string{modelPath, oraclePath}); err != nil {
			return nil, Measurements{}, err
		}
	} else if _, err := s.NormalizationFromModel(m, modelPath); err != nil {
		return nil, Measurements{}, err
	}
	if s.Info != nil {
		for _, n := range infer.InputNotes(m, false) {
			s.Info("note", "note: "+n, "note", n)
		}
	}
	met, err := s.Evaluate(m, modelPath, "model")
	if err != nil {
		return nil, Measurements{}, err
	}
	// A model at chance is still measured (that is what eval is for),
	// with a warning naming the likeliest cause.
	if w := NearChance(met.Accuracy.Train, s.Data); w != nil && s.Info != nil {
		terms := s.Terms
		if terms == nil {
			terms = setting.Plain
		}
		s.Info("warning", "warning: "+w.Render(terms), "accuracy", met.Accuracy.Train)
	}
	rep := &schema.Report{Schema: schema.MetricsSchema, Tool: tool, Metrics: &met.Metrics, Settings: s.Settings(met)}
	if rep.Model, err = NewModelInfo(modelPath); err != nil {
		return nil, Measurements{}, err
	}
	if rep.Data, rep.Forget, err = s.Provenance(); err != nil {
		return nil, Measurements{}, err
	}
	if om != nil {
		oi, omet, err := s.measureOracle(om, oraclePath)
		if err != nil {
			return nil, Measurements{}, err
		}
		if err := SetOracle(rep, met, oi, omet); err != nil {
			return nil, Measurements{}, err
		}
		return rep, Measurements{Model: met, Oracle: omet}, nil
	}
	return rep, Measurements{Model: met}, nil
}

// Compare evaluates the oracle and every model in paths on the suite's
// examples and returns one report with each model's Δ to the oracle
// (`unlearn compare`). Every file is loaded and checked first.
func (s *Suite) Compare(oraclePath string, paths []string, tool string) (*schema.CompareReport, error) {
	om, err := s.Load(oraclePath, "oracle")
	if err != nil {
		return nil, err
	}
	models := make([]*graph.Model, len(paths))
	for i, p := range paths {
		if models[i], err = s.Load(p, "model"); err != nil {
			return nil, err
		}
		if err := infer.CheckSameClasses(models[i], om, p, oraclePath); err != nil {
			return nil, err
		}
	}
	withOracle, withOraclePaths := append([]*graph.Model{om}, models...), append([]string{oraclePath}, paths...)
	if err := s.NormalizationFromModels(withOracle, withOraclePaths); err != nil {
		return nil, err
	}
	oi, omet, err := s.measureOracle(om, oraclePath)
	if err != nil {
		return nil, err
	}
	rep := &schema.CompareReport{Schema: schema.CompareSchema, Tool: tool, Settings: s.Settings(omet),
		Oracle: &schema.Section{Model: oi, Metrics: &omet.Metrics}}
	if rep.Data, rep.Forget, err = s.Provenance(); err != nil {
		return nil, err
	}
	for i, m := range models {
		met, err := s.Evaluate(m, paths[i], fmt.Sprintf("model %d", i+1))
		if err != nil {
			return nil, err
		}
		d, ag, err := CompareToOracle(omet, met, oraclePath, paths[i])
		if err != nil {
			return nil, err
		}
		mi, err := NewModelInfo(paths[i])
		if err != nil {
			return nil, err
		}
		rep.Models = append(rep.Models, schema.CompareEntry{
			Section: schema.Section{Model: mi, Metrics: &met.Metrics}, Delta: d, Agreement: ag})
	}
	return rep, nil
}

// measureOracle evaluates the oracle om read from path and identifies the
// file.
func (s *Suite) measureOracle(om *graph.Model, path string) (*schema.ModelInfo, *Metrics, error) {
	met, err := s.Evaluate(om, path, "oracle")
	if err != nil {
		return nil, nil, err
	}
	oi, err := NewModelInfo(path)
	if err != nil {
		return nil, nil, err
	}
	return oi, met, nil
}

// NormalizationFromModel applies the normalization recorded in m's
// metadata (data.MetaMean, data.MetaStd) when the suite's data has none, and says
// whether it did. Explicit normalization (--mean/--std) always wins.
func (s *Suite) NormalizationFromModel(m *graph.Model, path string) (bool, error) {
	mean, std := m.Metadata[data.MetaMean], m.Metadata[data.MetaStd]
	if (mean == "" && std == "") || len(s.Data.Mean) > 0 || len(s.Data.Std) > 0 {
		return false, nil
	}
	mv, sv, err := data.MetadataNormalization(m.Metadata)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.Data.SetNormalization(mv, sv); err != nil {
		return false, fmt.Errorf("%s: metadata %s, %s: %w", path, data.MetaMean, data.MetaStd, err)
	}
	if s.Info != nil {
		s.Info("normalization", fmt.Sprintf("normalization from %s's metadata: mean %s, std %s", path, mean, std),
			"mean", mean, "std", std)
	}
	return true, nil
}

// NormalizationFromModels is NormalizationFromModel over several files
// evaluated together (the model and its oracle, the models of a
// comparison): the first whose metadata records a normalization sets it,
// and every other one that records one must record the same, since the
// files are scored on the same normalized examples. A file without the
// metadata is taken to expect the same inputs. Explicit normalization
// (--mean/--std) always wins and is used for all.
func (s *Suite) NormalizationFromModels(models []*graph.Model, paths []string) error {
	first := -1
	for i, m := range models {
		if m.Metadata[data.MetaMean] == "" && m.Metadata[data.MetaStd] == "" {
			continue
		}
		if first < 0 {
			set, err := s.NormalizationFromModel(m, paths[i])
			if err != nil || !set {
				return err
			}
			first = i
			continue
		}
		mv, sv, err := data.MetadataNormalization(m.Metadata)
		if err != nil {
			return fmt.Errorf("%s: %w", paths[i], err)
		}
		if !slices.Equal(mv, s.Data.Mean) || !slices.Equal(sv, s.Data.Std) {
			return setting.Textf("%s and %s record different normalizations in their metadata (%s, %s): "+
				"they would be scored on different inputs; give it explicitly (%s, %s) "+
				"if one is right for both", paths[first], paths[i], data.MetaMean, data.MetaStd,
				setting.Of("mean"), setting.Of("std"))
		}
	}
	return nil
}

// RecordNormalization writes the suite's normalization into m's metadata
// (data.MetaMean, data.MetaStd); nothing when there is none.
func (s *Suite) RecordNormalization(m *graph.Model) {
	if len(s.Data.Mean) == 0 && len(s.Data.Std) == 0 {
		return
	}
	join := func(v []float32) string {
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = strconv.FormatFloat(float64(x), 'g', -1, 32)
		}
		return strings.Join(parts, ",")
	}
	if m.Metadata == nil {
		m.Metadata = map[string]string{}
	}
	if len(s.Data.Mean) > 0 {
		m.Metadata[data.MetaMean] = join(s.Data.Mean)
	}
	if len(s.Data.Std) > 0 {
		m.Metadata[data.MetaStd] = join(s.Data.Std)
	}
}
