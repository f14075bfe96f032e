package eval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/onnxrt"
)

// The report's settings keep --threads as given and the count ONNX Runtime
// ran with: the given one, or the quota-aware default for 0.
func TestSettingsRecordThreadsUsed(t *testing.T) {
	for _, c := range []struct{ threads, want int }{{0, onnxrt.DefaultThreads()}, {3, 3}} {
		s := &Suite{Options: Options{BatchSize: 64, NoMIA: true, Runtime: onnxrt.Options{Threads: c.threads, Device: "cpu"}}}
		got := s.Settings(nil)
		if got.Threads != c.threads || got.ThreadsUsed != c.want || got.ThreadsUsed < 1 {
			t.Errorf("threads %d: settings %+v, want threads_used %d", c.threads, got, c.want)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"threads_used":`) {
			t.Errorf("threads_used missing from %s", b)
		}
	}
}
