package unlearn

import "testing"

// TestDefaultPaths: empty outputs default beside the model and the output
// model; given ones stay.
func TestDefaultPaths(t *testing.T) {
	j := Job{}
	j.ModelPath = "runs/m.onnx"
	j.DefaultPaths()
	if j.Out != "runs/m-unlearned.onnx" || !j.DefaultOut || j.MetricsPath != "runs/m-unlearned.metrics.json" {
		t.Errorf("defaults: out %q (default %v), metrics %q", j.Out, j.DefaultOut, j.MetricsPath)
	}
	j = Job{Out: "u.onnx", MetricsPath: "-"}
	j.DefaultPaths()
	if j.Out != "u.onnx" || j.DefaultOut || j.MetricsPath != "-" {
		t.Errorf("given: out %q (default %v), metrics %q", j.Out, j.DefaultOut, j.MetricsPath)
	}
}
