package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

// oldScoreJSON is a score.json as written before U-LiRA (no "ulira"
// object, no per-example "ulira"), cut to what the page needs.
const oldScoreJSON = `{"schema": "unlearn.score/v1",
 "settings": {"schema": "unlearn.score-settings/v1", "setup": {"k": 16, "forget": 2, "method": {"strategy": "s", "algorithm": "a", "budget": 0.1, "seed": 0, "config": {}},
   "recipe": {"epochs": 1, "lr": 0.1}, "samples": {"retain": 10, "test": 10, "seed": 0}}, "paths": {"model": "m.onnx", "data": "d", "forget": "f.txt"}},
 "max_epsilon": 3,
 "forget_quality": {"estimate": 0.2, "lo": 0.1, "hi": 0.3, "bootstrap_shift": 0},
 "klom": {"forget": {"estimate": 1, "lo": 0.5, "hi": 1.5, "bootstrap_shift": 0}, "retain": 0.1, "test": 0.2},
 "accuracy": {"unlearned": {"forget": 0.9, "retain": 0.95, "test": 0.8}, "retrained": {"forget": 0.8, "retain": 0.95, "test": 0.8}},
 "svc_mia": {}, "bootstrap": {"resamples": 200, "level": 0.95, "seed": 0},
 "forget": [{"id": 1, "epsilon": 0.3, "how": "threshold", "fpr": 0, "fnr": 0, "retrained_positive": false, "points": 1, "klom": 1, "unlearned_correct": 1, "retrained_correct": 0.5},
            {"id": 2, "epsilon": 2.5, "how": "threshold", "fpr": 0, "fnr": 0, "retrained_positive": true, "points": 0.03125, "klom": 1, "unlearned_correct": 1, "retrained_correct": 1}],
 "models": [], "timings": {"gather_s": 1}}`

// TestScoreULiRAOptional: a score.json without U-LiRA still reads, and its
// line and page say nothing of it; with it, both show the accuracy, its
// interval and how it was computed.
func TestScoreULiRAOptional(t *testing.T) {
	var rep schema.ScoreReport
	if err := json.Unmarshal([]byte(oldScoreJSON), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.ULiRA != nil || rep.Forget[0].ULiRA != nil {
		t.Fatalf("old score.json read with U-LiRA: %+v", rep.ULiRA)
	}
	line := ScoreLine(&rep)
	page, err := ScoreHTML(&rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, "U-LiRA") || bytes.Contains(page, []byte("U-LiRA")) || !strings.HasSuffix(line, "test 0.200 (K = 16)") {
		t.Errorf("without U-LiRA: line %q; page mentions it: %v", line, bytes.Contains(page, []byte("U-LiRA")))
	}
	a0, a1 := 0.5, 0.75
	rep.Forget[0].ULiRA, rep.Forget[1].ULiRA = &a0, &a1
	rep.ULiRA = &schema.ScoreULiRA{Accuracy: schema.ScoreInterval{Estimate: 0.625, Lo: 0.58, Hi: 0.66}, AUC: 0.7, Folds: 2, Shadows: 8, Targets: 16, Variance: "global"}
	line = ScoreLine(&rep)
	if want := "test 0.200, U-LiRA accuracy 0.625 [0.580, 0.660] (K = 16)"; !strings.HasSuffix(line, want) {
		t.Errorf("line %q, want the suffix %q", line, want)
	}
	if page, err = ScoreHTML(&rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"U-LiRA accuracy</td><td>0.625</td><td>[0.580, 0.660]", "2 folds, 8 shadows per side, global variance; pooled AUC 0.700"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	b, err := json.Marshal(&rep)
	if err != nil || !bytes.Contains(b, []byte(`"ulira":{"accuracy":{"estimate":0.625`)) || !bytes.Contains(b, []byte(`"ulira":0.75`)) {
		t.Errorf("score.json with U-LiRA: %v\n%.300s", err, b)
	}
}
