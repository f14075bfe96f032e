package scoring

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

// FuzzReadTask: any task file is read or refused without a panic, and
// one that is read holds exactly the outputs the folder expects, each in
// its range (0/1 verdicts, finite margins, times in range).
func FuzzReadTask(f *testing.F) {
	f.Add([]byte(`{"schema": "` + schema.ScoreTaskSchema + `", "settings_sha256": "d", "kind": "oracle", "index": 0, "seed": 0,` +
		`"forget": {"margins": [0.5, -1], "correct": [1, 0]}, "retain": {"margins": [2], "correct": [1]}, "test": {"margins": [1], "correct": [1]}}`))
	f.Add([]byte(`{"schema": "` + schema.ScoreTaskSchema + `", "forget": {"margins": [1e308]}}`))
	f.Add([]byte("{"))
	f.Add([]byte(goodTask()))
	f.Add([]byte(strings.Replace(goodTask(), `"correct": [1, 0]`, `"correct": [1000, 0]`, 1)))
	f.Add([]byte(strings.Replace(goodTask(), `"svc_non_member": [0, 1]`, `"svc_non_member": [7, 7]`, 1)))
	f.Add([]byte(goodTask()[:100]))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "tasks"), 0o755); err != nil {
			t.Fatal(err)
		}
		r := &state{dirs: map[string]string{schema.ScoreOracle: dir}, digest: map[string]string{schema.ScoreOracle: "d"},
			setup: schema.ScoreSetup{Forget: 2}, retain: []int{7}, test: []int{3}}
		tk := task{schema.ScoreOracle, 0, 0}
		if err := os.WriteFile(r.taskPath(tk), b, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := r.readTask(tk)
		if err != nil {
			return
		}
		if len(res.Forget.Margins) != 2 || len(res.Forget.Correct) != 2 || len(res.Retain.Margins) != 1 || len(res.Test.Correct) != 1 {
			t.Errorf("task with outputs for %d/%d/%d examples read", len(res.Forget.Margins), len(res.Retain.Margins), len(res.Test.Margins))
		}
		for _, o := range []schema.ScoreOutputs{res.Forget, res.Retain, res.Test} {
			for _, m := range o.Margins {
				if !(math.Abs(m) <= maxMargin) {
					t.Errorf("margin %g read", m)
				}
			}
			for _, v := range append(o.Correct, o.SVCNonMember...) {
				if v != 0 && v != 1 {
					t.Errorf("verdict %d read", v)
				}
			}
		}
		if !(res.Timings.TrainS >= 0 && res.Timings.EvalS >= 0 && res.Timings.TrainS <= maxSeconds && res.Timings.EvalS <= maxSeconds) {
			t.Errorf("timings %+v read", res.Timings)
		}
	})
}
