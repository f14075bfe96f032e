package schema

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// node is a decoded JSON value that keeps the order of an object's keys.
type node struct {
	keys   []string
	fields map[string]*node
	elems  []*node
}

// decode reads one JSON value from dec, keeping key order.
func decode(t *testing.T, dec *json.Decoder) *node {
	t.Helper()
	tok, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	n := &node{}
	switch tok {
	case json.Delim('{'):
		n.fields = map[string]*node{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			key := k.(string)
			n.keys = append(n.keys, key)
			n.fields[key] = decode(t, dec)
		}
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
	case json.Delim('['):
		for dec.More() {
			n.elems = append(n.elems, decode(t, dec))
		}
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// at follows a path of keys and array indices ("0") from n.
func (n *node) at(t *testing.T, path string) *node {
	t.Helper()
	cur := n
	for _, p := range strings.Split(path, "/") {
		if p == "" {
			continue
		}
		switch {
		case cur.fields != nil && cur.fields[p] != nil:
			cur = cur.fields[p]
		case p == "0" && len(cur.elems) > 0:
			cur = cur.elems[0]
		default:
			t.Fatalf("no %q in %q", p, path)
		}
	}
	return cur
}

func marshalTree(t *testing.T, v any) *node {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, json.NewDecoder(bytes.NewReader(b)))
}

func ptr[T any](v T) *T { return &v }

func fullMetrics() *Metrics {
	ca := []ClassAccuracy{{N: 2, Correct: 1, Accuracy: ptr(0.5)}}
	return &Metrics{
		Classes:  1,
		Accuracy: Accuracies{Train: 0.9, Test: 0.8, Forget: ptr(0.7), Retain: ptr(0.6)},
		Counts:   Counts{Train: 10, Test: 5, Forget: ptr(2), Retain: ptr(8)},
		PerClass: PerClass{Train: ca, Test: ca, Forget: ca, Retain: ca},
		MIA:      &MIAScores{Correctness: 0.1, LossLR: ptr(0.5)},
		Timings:  Timings{ForwardS: 1, MIAS: 2, TotalS: 3},
	}
}

func fullProxies() Proxies {
	return Proxies{HoldoutAccuracy: 0.9, ForgetAccuracy: 0.8, ReferenceAccuracy: 0.7, ForgetGap: 0.1, TestAccuracy: 0.85,
		MIA: &ProxyMIA{Feature: "confidence", Forget: 0.5, Reference: 0.5, Holdout: 0.4, Note: "n"}}
}

// fullReport sets every field of a Report, so that omitempty drops nothing.
func fullReport() *Report {
	m := fullMetrics()
	return &Report{
		Schema: MetricsSchema, Tool: "unlearn test",
		Model: &ModelInfo{Path: "m.onnx", SHA256: "ab"},
		Data: &DataInfo{Path: "d", Format: "idx", Name: "n", SHA256: "cd", Classes: 1, ClassNames: []string{"a"},
			Mean: []float32{0.5}, Std: []float32{0.25}},
		Forget:    &ForgetInfo{Path: "f.txt", SHA256: "ef", N: 2},
		Settings:  Settings{BatchSize: 256, Device: "cpu", Threads: 2, ThreadsUsed: 2, MIA: &MIASettings{Notes: []string{"n"}}},
		Metrics:   m,
		Oracle:    &Section{Model: &ModelInfo{Path: "o.onnx"}, Metrics: m},
		Delta:     &Delta{MIA: &MIAScores{}, AvgGap: ptr(0.1)},
		Agreement: &Agreement{Forget: ptr(1.0), Retain: ptr(1.0)},
		Before:    &Section{Model: &ModelInfo{Path: "b.onnx"}, Metrics: m},
		Unlearning: &Unlearning{
			Method: "del", Strategy: "del", Algorithm: "rft", Schedule: "auto", Augment: "pad=4,flip",
			Auto: &AutoSchedule{RangeTest: []LRTrial{{LR: 0.1, Loss: 1}}, StartLoss: 2, RangeSteps: 10, ForgetBaseline: "estimate", ForgetCeiling: ptr(0.5)},
			Proxies: &ProxyLog{
				Reference: &ProxyReference{Classes: []int{0}, Weights: []float64{1}, Test: []int{3}, NTest: 1, Note: "n"},
				Holdout:   []int{4, 5}, HoldoutSize: 2, Before: fullProxies(), After: fullProxies(),
				Estimate: &OracleEstimate{Method: "prior-shift", Shift: []float64{0}, MaxShift: 0.1, Removed: []int{1}, Partial: []int{0}, PartialKept: 2, TestAccuracy: 0.8, ReferenceAccuracy: 0.7},
				Epochs: []EpochProxies{{Epoch: 1, LR: 0.1, Proxies: fullProxies(),
					Decision: &ProxyDecision{Stop: true, Reason: "r", Epoch: 1}}},
			},
			Mask: &MaskSummary{Schema: MaskSchema, DepthFloor: 0.4, MinDepth: 3, Layers: []LayerChoice{{Layer: "l", Partial: []int{1}}}, All: true,
				CritMem: &CritMemStats{Excluded: "fc"}},
			Log: &RunLog{Epochs: []EpochStats{{Epoch: 1}}, Notes: []string{}},
			Audit: &Audit{Changed: []TensorChange{{Name: "w", Channels: []int{0}, Layer: "l"}},
				Violations: []string{}},
			Notes:            []string{"n"},
			Flags:            []Flag{{Kind: FlagRuleNotMet, Text: "n"}},
			Vouched:          true,
			RetrainEstimateS: 10, RetrainEpochs: 20, Speedup: 2,
			RetrainEstimateBasis: RetrainBasisTimed, RetrainStepS: 0.1, RetrainStepsTimed: 6,
			Timings: UnlearningTimings{RetrainTimingS: 1, PeakRSSMiB: 1},
		},
	}
}

// The order of metrics.json's keys is part of the schema (doc.go): a
// reordered, renamed or dropped field fails here.
func TestReportKeyOrder(t *testing.T) {
	root := marshalTree(t, fullReport())
	section := []string{"classes", "accuracy", "counts", "per_class", "mia", "timings"}
	for _, c := range []struct {
		path string
		keys []string
	}{
		{"", append(append([]string{"schema", "tool", "model", "data", "forget", "settings"}, section...),
			"oracle", "delta", "agreement", "before", "unlearning")},
		{"oracle", append([]string{"model"}, section...)},
		{"data", []string{"path", "format", "name", "sha256", "classes", "class_names", "mean", "std"}},
		{"settings", []string{"batch_size", "device", "threads", "threads_used", "mia"}},
		{"settings/mia", []string{"shadow_members", "shadow_non_members", "target", "svc_c", "svc_gamma", "svc_tol", "m_entropy",
			"loss_splits", "loss_test_fraction", "loss_c", "loss_per_class", "seed", "notes"}},
		{"accuracy", []string{"train", "test", "forget", "retain"}},
		{"per_class/train/0", []string{"n", "correct", "accuracy"}},
		{"mia", []string{"correctness", "confidence", "entropy", "m_entropy", "prob", "loss_lr"}},
		{"timings", []string{"forward_s", "mia_s", "total_s"}},
		{"delta", []string{"accuracy", "mia", "avg_gap"}},
		{"unlearning", []string{"method", "strategy", "algorithm", "budget", "epochs", "lr", "batch_size", "momentum",
			"weight_decay", "seed", "augment", "schedule", "auto", "proxies", "mask", "log", "audit", "notes", "flags", "vouched", "timings",
			"retrain_estimate_s", "retrain_epochs", "speedup", "retrain_estimate_basis", "retrain_step_s", "retrain_steps_timed"}},
		{"unlearning/auto", []string{"lr", "lr_range_test", "start_loss", "range_steps", "range_s", "utility_target",
			"utility_baseline", "forget_baseline", "forget_ceiling", "forget_tolerance", "utility_tolerance", "stop_epoch", "epoch", "max_epochs", "reason", "detail"}},
		{"unlearning/proxies", []string{"reference", "holdout", "before_matched_test", "oracle_estimate", "before", "after", "epochs", "seconds"}},
		{"unlearning/proxies/oracle_estimate", []string{"method", "shift", "max_shift", "removed_classes", "partial_classes", "partial_kept", "test_accuracy", "reference_accuracy"}},
		{"unlearning/flags/0", []string{"kind", "text"}},
		{"unlearning/proxies/reference", []string{"iid", "chi_square", "dof", "critical", "alpha", "classes", "weights", "n_test", "note"}},
		{"unlearning/proxies/epochs/0", []string{"epoch", "lr", "holdout_accuracy", "holdout_loss", "forget_accuracy", "forget_loss",
			"reference_accuracy", "reference_loss", "forget_gap", "test_accuracy", "mia", "decision", "seconds"}},
		{"unlearning/proxies/epochs/0/decision", []string{"stop", "reason", "epoch", "forget_ok", "utility_ok", "detail"}},
		{"unlearning/mask", []string{"schema", "strategy", "budget", "depth_floor", "min_depth", "selected", "total", "layers", "all", "critmem"}},
		{"unlearning/mask/layers/0", []string{"layer", "channels", "chosen", "partial", "params"}},
		{"unlearning/mask/critmem", []string{"examples", "flipped", "zeroed", "union", "max_steps", "excluded"}},
		{"unlearning/log", []string{"epochs", "notes", "reset"}},
		{"unlearning/log/epochs/0", []string{"Epoch", "Loss", "Accuracy", "Seconds"}},
		{"unlearning/audit", []string{"changed", "unchanged_tensors", "changed_params", "total_params", "changed_state",
			"violations", "outside_mask_bit_identical"}},
		{"unlearning/audit/changed/0", []string{"name", "kind", "elements", "changed", "channels", "layer"}},
		{"unlearning/timings", []string{"evaluate_before_s", "localize_s", "unlearn_s", "evaluate_after_s", "total_s", "retrain_timing_s", "peak_rss_mib"}},
	} {
		if got := root.at(t, c.path).keys; !slices.Equal(got, c.keys) {
			t.Errorf("%q: keys %q\nwant %q", c.path, got, c.keys)
		}
	}
}

// The fields tagged json:"-" stay out of the JSON, and omitempty drops the
// optional sections of a bare report.
func TestReportOmits(t *testing.T) {
	b, err := json.Marshal(fullReport())
	if err != nil {
		t.Fatal(err)
	}
	// Holdout's ids [4,5] and the reference's Test [3] are not written.
	if s := string(b); strings.Contains(s, "[4,5]") || strings.Contains(s, "[3]") {
		t.Errorf("a json:\"-\" field was written: %s", s)
	}
	root := marshalTree(t, &Report{Schema: MetricsSchema, Metrics: &Metrics{}})
	want := []string{"schema", "model", "data", "settings", "classes", "accuracy", "counts", "per_class", "timings"}
	if !slices.Equal(root.keys, want) {
		t.Errorf("bare report keys %q, want %q", root.keys, want)
	}
}

func TestCompareKeyOrder(t *testing.T) {
	m := fullMetrics()
	rep := &CompareReport{Schema: CompareSchema, Tool: "t", Data: &DataInfo{}, Forget: &ForgetInfo{},
		Oracle: &Section{Model: &ModelInfo{}, Metrics: m},
		Models: []CompareEntry{{Section: Section{Model: &ModelInfo{}, Metrics: m}, Delta: &Delta{}, Agreement: &Agreement{}}}}
	root := marshalTree(t, rep)
	if want := []string{"schema", "tool", "data", "forget", "settings", "oracle", "models"}; !slices.Equal(root.keys, want) {
		t.Errorf("keys %q, want %q", root.keys, want)
	}
	want := []string{"model", "classes", "accuracy", "counts", "per_class", "mia", "timings", "delta", "agreement"}
	if got := root.at(t, "models/0").keys; !slices.Equal(got, want) {
		t.Errorf("models[0] keys %q, want %q", got, want)
	}
}

// Accuracies.Get and MIAScores.Get answer for every key of AccuracyKeys
// and MIAKeys, which name the JSON keys.
func TestGetKeys(t *testing.T) {
	m := fullMetrics()
	root := marshalTree(t, m)
	if got := root.at(t, "accuracy").keys; !slices.Equal(got, AccuracyKeys) {
		t.Errorf("accuracy keys %q, AccuracyKeys %q", got, AccuracyKeys)
	}
	if got := root.at(t, "mia").keys; !slices.Equal(got, MIAKeys) {
		t.Errorf("mia keys %q, MIAKeys %q", got, MIAKeys)
	}
	for _, k := range AccuracyKeys {
		if _, ok := m.Accuracy.Get(k); !ok {
			t.Errorf("Accuracies.Get(%q) absent", k)
		}
	}
	for _, k := range MIAKeys {
		if _, ok := m.MIA.Get(k); !ok {
			t.Errorf("MIAScores.Get(%q) absent", k)
		}
	}
	if _, ok := (*MIAScores)(nil).Get("prob"); ok {
		t.Error("nil MIAScores answered")
	}
}

// The package is a leaf (doc.go): its files import the standard library
// only, whose paths have no dot in their first element.
func TestLeaf(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files (%v)", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if strings.Contains(strings.Split(path, "/")[0], ".") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
