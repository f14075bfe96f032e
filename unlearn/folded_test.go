package unlearn_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// TestDivergedRangeTestGoesOn runs the main pipeline with the auto
// schedule on PyTorch's default export of a CNN with BatchNormalization
// (folded into the convolutions; testdata/exports) with a range test whose
// largest candidate rate makes the loss non-finite: that rate is recorded
// as diverged and the run goes on with the best of the others (issue 29,
// where a NaN at one rate used to abort the run). The folded model's note
// is given before any work (the first Info line after loading) and kept in
// metrics.json; the model is written back in its exported form with the
// restored normalization folded in; and test accuracy does not collapse.
func TestDivergedRangeTestGoesOn(t *testing.T) {
	suite, root := demoSuite(t)
	cfg, err := unlearn.Configure("rft", unlearn.Recipe{Schedule: unlearn.ScheduleAuto, MaxEpochs: unlearn.Some(4)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auto.LRs = []float64{0.003, 0.03, 1e30}
	// No cap on the candidates (rule 9's would leave 1e30 out): the test
	// is about a rate that diverges.
	cfg.Auto.RoundBudget = -1
	dir := t.TempDir()
	var events []string
	o, err := unlearn.Unlearn(context.Background(), unlearn.Job{
		ModelPath: filepath.Join(root, "testdata", "exports", "b_eval_dynamic.onnx"), Suite: suite,
		Method: "del", Strategy: "del", Budget: 0.1, Algorithm: "rft", Config: cfg,
		Out: filepath.Join(dir, "u.onnx"), MetricsPath: filepath.Join(dir, "u.metrics.json"),
		Info: func(event, text string, _ ...any) { events = append(events, event+"\t"+text) },
	})
	if err != nil {
		t.Fatalf("the run stopped: %v", err)
	}
	if len(events) == 0 || !strings.HasPrefix(events[0], "note\tnote: the export folded BatchNormalization into 2 convolution(s)") {
		t.Errorf("the first line of the run is not the folded-model note: %q", events)
	}
	a := o.Report.Unlearning.Auto
	if a == nil || len(a.RangeTest) != 3 {
		t.Fatalf("range test: %+v", a)
	}
	for _, tr := range a.RangeTest {
		if got, want := tr.Diverged, tr.LR == 1e30; got != want {
			t.Errorf("rate %g: diverged %v, want %v", tr.LR, got, want)
		}
	}
	if a.LR >= 1e30 || a.LR <= 0 {
		t.Errorf("chose lr %g", a.LR)
	}
	notes := strings.Join(o.Report.Unlearning.Notes, "\n")
	if !strings.Contains(notes, "folded BatchNormalization") || !strings.Contains(notes, "TrainingMode.PRESERVE") {
		t.Errorf("metrics.json notes lack the folded-model note: %q", o.Report.Unlearning.Notes)
	}
	if !strings.Contains(notes, "trainable BatchNormalization restored for the run after the 2 folded convolution(s)") {
		t.Errorf("notes lack the restored normalization: %q", o.Report.Unlearning.Notes)
	}
	// Written back in the exported form: the input's nodes and initializer
	// names, no BatchNormalization; the convolutions' channels outside the
	// mask changed only by their folded statistics, and the audit counts
	// them.
	in, err := onnxio.Load(filepath.Join(root, "testdata", "exports", "b_eval_dynamic.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := onnxio.Load(filepath.Join(dir, "u.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	ops := func(m *graph.Model) (s []string) {
		for _, n := range m.Graph.Nodes() {
			s = append(s, n.OpType)
		}
		return s
	}
	if !slices.Equal(ops(in), ops(out)) || len(in.Graph.Initializers) != len(out.Graph.Initializers) {
		t.Fatalf("output graph %v with %d initializers, input %v with %d", ops(out), len(out.Graph.Initializers), ops(in), len(in.Graph.Initializers))
	}
	if a := o.Report.Unlearning.Audit; a.FoldedStatistics <= 0 || !a.BitIdentical {
		t.Errorf("audit: folded statistics %d, bit-identical %v", a.FoldedStatistics, a.BitIdentical)
	}
	fcIn, _ := in.Graph.LocalValue("fc.weight").Init.Float32s()
	fcOut, _ := out.Graph.LocalValue("fc.weight").Init.Float32s()
	if slices.Equal(fcIn, fcOut) {
		t.Error("the classifier, which rft retrains, did not change")
	}
	// The cost in epochs over the retain set: every trained epoch's
	// examples (the retain set less the held-out slice) plus the range
	// test's steps × rates × batch.
	u := o.Report.Unlearning
	want := len(u.Log.Epochs)*(3600-u.Proxies.HoldoutSize) + a.RangeSteps*len(a.RangeTest)*cfg.BatchSize
	if u.ExamplesTrained != want || math.Abs(u.EpochsTrained-float64(want)/3600) > 1e-12 || !(u.EpochsEquivalent >= u.EpochsTrained) {
		t.Errorf("examples trained %d (want %d), epochs trained %g, epochs-equivalent %g", u.ExamplesTrained, want, u.EpochsTrained, u.EpochsEquivalent)
	}
	before, after := o.Report.Before.Accuracy.Test, o.Report.Accuracy.Test
	t.Logf("lr %g, stopped after epoch %d (%s); test accuracy %.4f → %.4f", a.LR, a.StopEpoch, a.Reason, before, after)
	if after < before-unlearn.MaxTestDrop {
		t.Errorf("test accuracy collapsed: %.4f → %.4f", before, after)
	}
}

// demoSuite is the bundled demo data with its non-IID forget set, as the
// main pipeline's tests run it (2 threads, no MIA), with the runtime set
// up, and the repository's root.
func demoSuite(t *testing.T) (*eval.Suite, string) {
	t.Helper()
	testutil.RequireORT(t)
	root := testutil.RepoRoot(t)
	ds, err := data.Open(filepath.Join(root, "testdata", "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	forgetPath := filepath.Join(root, "testdata", "demo", "forget_nonIID.txt")
	ids, err := data.ReadIDs(forgetPath, ds.Train.Len())
	if err != nil {
		t.Fatal(err)
	}
	rt := onnxrt.Options{Threads: 2}
	suite, err := eval.NewSuite(ds, forgetPath, ids, eval.Options{Runtime: rt, BatchSize: 256, NoMIA: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := onnxrt.Setup(rt); err != nil {
		t.Fatal(err)
	}
	return suite, root
}
