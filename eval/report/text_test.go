package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
)

// oracleReport is a metrics report of a model against an oracle.
func oracleReport(t *testing.T) *schema.Report {
	t.Helper()
	model, oracle := metrics(t, 1, 3), metrics(t, 2, 1.5)
	rep := &schema.Report{
		Schema: schema.MetricsSchema, Model: &schema.ModelInfo{Path: "m.onnx"}, Data: &schema.DataInfo{Path: "d"},
		Forget: &schema.ForgetInfo{Path: "f.txt", N: 60}, Metrics: &model.Metrics,
		Oracle:   &schema.Section{Model: &schema.ModelInfo{Path: "o.onnx"}, Metrics: &oracle.Metrics},
		Delta:    eval.NewDelta(oracle, model),
		Settings: schema.Settings{MIA: eval.NewMIASettings(model, eval.MIAOptions{})},
	}
	var err error
	if rep.Agreement, err = eval.NewAgreement(oracle, model); err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestWriteTable(t *testing.T) {
	rep := oracleReport(t)
	var b bytes.Buffer
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	// A header, one line per row, then the counts and two explanations.
	if rows := Rows(rep); len(lines) < len(rows)+4 || !strings.HasPrefix(lines[0], "metric") || !strings.Contains(lines[0], "Δ (points)") {
		t.Fatalf("%d lines for %d rows:\n%s", len(lines), len(rows), b.String())
	}
	forget := *rep.Accuracy.Forget
	for _, want := range []string{"accuracy   train", "avg_gap", "examples: train 300, test 120, forget 60, retain 240",
		pctCell(&forget), "Δ = oracle − model"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "before") {
		t.Error("a before column without rep.Before")
	}
	// With the original model, a before column appears.
	rep.Before = &schema.Section{Model: &schema.ModelInfo{Path: "b.onnx"}, Metrics: rep.Metrics}
	b.Reset()
	if err := WriteTable(&b, rep); err != nil || !strings.Contains(strings.SplitN(b.String(), "\n", 2)[0], "before") {
		t.Errorf("no before column (%v):\n%s", err, b.String())
	}
}

func TestWriteCompareRowPerModel(t *testing.T) {
	base := oracleReport(t)
	// oracleReport's oracle again, with the predictions the agreement needs.
	oracle := metrics(t, 2, 1.5)
	rep := &schema.CompareReport{Schema: schema.CompareSchema, Forget: base.Forget,
		Oracle: &schema.Section{Model: base.Oracle.Model, Metrics: &oracle.Metrics}}
	for _, p := range []string{"a.onnx", "b.onnx", "c.onnx"} {
		m := metrics(t, uint64(len(p)+len(rep.Models)+5), 3)
		d, ag, err := eval.CompareToOracle(oracle, m, "o.onnx", p)
		if err != nil {
			t.Fatal(err)
		}
		rep.Models = append(rep.Models, schema.CompareEntry{Section: schema.Section{Model: &schema.ModelInfo{Path: p}, Metrics: &m.Metrics}, Delta: d, Agreement: ag})
	}
	var b bytes.Buffer
	if err := WriteCompare(&b, rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[0], "model") || !strings.Contains(lines[0], "mia correctness") || !strings.HasPrefix(lines[1], "o.onnx (oracle)") {
		t.Fatalf("header and oracle row:\n%s", b.String())
	}
	for i, p := range []string{"a.onnx", "b.onnx", "c.onnx"} {
		if !strings.HasPrefix(lines[2+i], p+" ") || !strings.Contains(lines[2+i], "(") {
			t.Errorf("row %d is %q; want %s with its Δ", 2+i, lines[2+i], p)
		}
	}
	if !strings.Contains(b.String(), "forget set f.txt (60 of 300 training examples)") {
		t.Errorf("footer:\n%s", b.String())
	}
}

func TestProxiesLine(t *testing.T) {
	p := &schema.ProxyLog{HoldoutSize: 180}
	p.Before.ForgetAccuracy, p.After.ForgetAccuracy, p.After.ReferenceAccuracy = 0.9, 0.5, 0.55
	line := ProxiesLine(p)
	if !strings.Contains(line, "forget accuracy 90.00% → 50.00%, unseen reference 55.00%") || !strings.Contains(line, "(180 examples") ||
		strings.Contains(line, "proxy MIA") {
		t.Errorf("line %q", line)
	}
	p.Before.MIA = &schema.ProxyMIA{Feature: "confidence", Forget: 0.25}
	p.After.MIA = &schema.ProxyMIA{Feature: "confidence", Forget: 0.75, Reference: 0.7}
	if line := ProxiesLine(p); !strings.Contains(line, "proxy MIA (confidence) on the forget set 25.00% → 75.00%, on the reference 70.00%") {
		t.Errorf("line %q", line)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteTableReportsWriteError(t *testing.T) {
	if err := WriteTable(failWriter{}, oracleReport(t)); err == nil || err.Error() != "disk full" {
		t.Fatalf("error %v; want the writer's", err)
	}
}
