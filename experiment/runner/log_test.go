package runner

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/internal/eventlog"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// A step's error names the library's settings as the experiment file's
// keys, in the step's log and in the error the command prints; flags stay
// flags (the device is the experiment command's own flag).
func TestStepErrorNamesKeys(t *testing.T) {
	var buf bytes.Buffer
	l := &stepLog{log: &eventlog.Logger{W: &buf, JSON: true}}
	err := l.fail("run DEL (seed 0)", fmt.Errorf("%w: %w", unlearn.ErrSettings,
		setting.Errorf("epoch-fraction", " 0.001 of the 900-example retain set is 0.9 examples a round")))
	if !errors.Is(err, unlearn.ErrSettings) {
		t.Fatalf("%v does not wrap ErrSettings", err)
	}
	want := "run DEL (seed 0): " + unlearn.ErrSettings.Error() + ": epoch_fraction 0.001 of the 900-example retain set"
	if got := flagtext.Render(err); !strings.HasPrefix(got, want) || strings.Contains(got, "--") {
		t.Errorf("rendered %q, want it to start %q", got, want)
	}
	if !strings.Contains(buf.String(), "epoch_fraction 0.001") || strings.Contains(buf.String(), "--epoch") {
		t.Errorf("the step's log says %s", buf.String())
	}
	dev := l.fail("oracle", fmt.Errorf("train: %w", setting.FlagErrorf("device", " cuda: refused")))
	if got := flagtext.Render(dev); got != "oracle: train: --device cuda: refused" {
		t.Errorf("a flag setting rendered %q", got)
	}
}
