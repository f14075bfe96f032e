package runner

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/experiment"
)

// FuzzReadSidecar: any sidecar is parsed or refused without a panic, and
// a sidecar accepted keeps the bounds the records keep: its train_s passes
// the records' check of an oracle's seconds (issue 64, item 9: 1e-300
// passed and then made every record written from it damaged), its
// digests are 64 hexadecimal digits, its threads in range.
func FuzzReadSidecar(f *testing.F) {
	d := strings.Repeat("a", 64)
	f.Add([]byte(`{"train_s": 100, "threads": 1, "machine": "m", "onnx_sha256": "` + d + `", "data_sha256": "` + d + `"}`))
	f.Add([]byte(`{"train_s": 1e-300, "onnx_sha256": "` + d + `", "data_sha256": "` + d + `"}`))
	f.Add([]byte(`{"train_s": 0, "threads": -1, "onnx_sha256": "` + d + `", "data_sha256": "` + d + `"}`))
	f.Add([]byte(`{"train_s": "x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseSidecar(b, "oracle.json")
		if err != nil {
			return
		}
		if err := experiment.CheckOracleSeconds("oracle_seconds", s.TrainS); err != nil {
			t.Errorf("sidecar accepted whose train_s the records refuse: %v", err)
		}
		if len(s.ONNXSHA256) != 64 || len(s.DataSHA256) != 64 || s.Threads < 0 || s.Threads > experiment.MaxThreads || len(s.Machine) > 512 {
			t.Errorf("sidecar accepted out of bounds: %+v", s)
		}
	})
}

// FuzzScoreJSON: any score.json read back for RESULTS.md is parsed or
// refused without a panic, and one accepted passes checkScore with every
// number the report uses finite.
func FuzzScoreJSON(f *testing.F) {
	// Small seeds: the fuzzer minimizes each new input for up to a minute,
	// and a committed file (hundreds of KB, or KB cut down) kept it
	// minimizing for the whole run. TestScoreJSONChecked reads those.
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"accuracy": {"unlearned": {"forget": 0.7, "retain": 0.9, "test": 0.85}, "retrained": {"forget": 0.7, "retain": 0.9, "test": 0.85}},
 "forget_quality": {"estimate": 0.1, "lo": 0.08, "hi": 0.12}, "final_score": {"estimate": 0.11, "lo": 0.09, "hi": 0.13},
 "klom": {"forget": {"estimate": 4.6, "lo": 4.0, "hi": 5.1}, "retain": 0.5, "test": 0.4},
 "ulira": {"accuracy": {"estimate": 0.64, "lo": 0.6, "hi": 0.66}, "auc": 0.7}, "svc_mia": {"unlearned": 0.3, "retrained": 0.4}}`))
	f.Add([]byte(`{"forget_quality": {"estimate": 0.5, "lo": 0.4, "hi": 0.6}, "klom": {"forget": {"estimate": -1e8}}}`))
	f.Add([]byte(`{"ulira": {"accuracy": {"estimate": 0.9, "lo": 0.8, "hi": 1.16}, "auc": 0.9}}`))
	f.Add([]byte(`{"svc_mia": {"unlearned": 1e308}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := parseScore(b, "score.json")
		if err != nil {
			return
		}
		if err := checkScore(rep); err != nil {
			t.Errorf("score accepted that checkScore refuses: %v", err)
		}
		nums := []float64{rep.ForgetQuality.Estimate, rep.ForgetQuality.Lo, rep.ForgetQuality.Hi, rep.KLoM.Forget.Estimate,
			rep.KLoM.Forget.Lo, rep.KLoM.Forget.Hi}
		if rep.FinalScore != nil {
			nums = append(nums, rep.FinalScore.Estimate, rep.FinalScore.Lo, rep.FinalScore.Hi)
		}
		for _, v := range nums {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("score accepted with %v: %s", v, mustJSON(rep))
			}
		}
		if rep.KLoM.Forget.Estimate < 0 || rep.ForgetQuality.Estimate > 1 {
			t.Errorf("score accepted out of range: %s", mustJSON(rep))
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
