package scoring

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/schema"
)

// ErrDamaged marks a task file whose contents cannot be what a task wrote:
// not JSON (cut short: its writer was interrupted, or a copy was partial)
// or a value outside its range (edited or corrupted). A run that is not
// gathering runs a task again whose file is cut short (ErrCutShort);
// every other damage stops the run with the file and field named.
var ErrDamaged = errors.New("damaged task file")

// ErrCutShort marks a task file that is not valid JSON: the trace of an
// interrupted write. It comes with ErrDamaged.
var ErrCutShort = errors.New("not JSON, cut short")

// Bounds of the values a task file holds. A margin comes from float32
// logits: |z_y − log Σ exp z_j| < 2·MaxFloat32 + log(classes) < 1e39. A
// time longer than 1e9 s (30 years) is damage, and the bound keeps sums of
// times finite.
const (
	maxMargin  = 1e39
	maxSeconds = 1e9
)

// repairHint says how to repair a damaged task file.
var repairHint = setting.Msgf("delete the file and run its task again (%s on the folder without %s, or the shard "+
	"that holds the task), then gather", setting.Command("score"), setting.Of("gather"))

// checkTask checks every value of a task file read back (the settings, kind,
// index and seed are checked by the caller): each per-example list has
// the folder's length (lens: forget, retain, test), every margin is
// finite within ±maxMargin, every correct and svc_non_member entry is 0 or
// 1, the times are in [0, maxSeconds] and the model's SHA-256 is 64
// hexadecimal digits. The error names the file and the field.
func checkTask(p string, res *schema.ScoreTask, lens [3]int) error {
	bad := func(field, format string, a ...any) error {
		return setting.Textf("%w: %s: %s: %s; %s", ErrDamaged, p, field, fmt.Sprintf(format, a...), repairHint)
	}
	for i, o := range []struct {
		name string
		out  *schema.ScoreOutputs
	}{{"forget", &res.Forget}, {"retain", &res.Retain}, {"test", &res.Test}} {
		if len(o.out.Margins) != lens[i] || len(o.out.Correct) != lens[i] {
			return fmt.Errorf("%w: %s has outputs for %d/%d/%d examples, want %d/%d/%d", ErrSettings, p,
				len(res.Forget.Margins), len(res.Retain.Margins), len(res.Test.Margins), lens[0], lens[1], lens[2])
		}
		for j, m := range o.out.Margins {
			if !(math.Abs(m) <= maxMargin) {
				return bad(fmt.Sprintf("%s.margins[%d]", o.name, j),
					"%g is not a margin of float32 logits (finite, within ±%g)", m, maxMargin)
			}
		}
		for j, c := range o.out.Correct {
			if c != 0 && c != 1 {
				return bad(fmt.Sprintf("%s.correct[%d]", o.name, j),
					"%d, want 0 or 1 (whether the model's arg-max is the label)", c)
			}
		}
		if o.name != "forget" && len(o.out.SVCNonMember) > 0 {
			return bad(o.name+".svc_non_member", "present; only the forget set has SVC verdicts")
		}
	}
	if n := len(res.Forget.SVCNonMember); n > 0 && n != lens[0] {
		return bad("forget.svc_non_member", "%d verdicts for %d forget examples", n, lens[0])
	}
	for j, v := range res.Forget.SVCNonMember {
		if v != 0 && v != 1 {
			return bad(fmt.Sprintf("forget.svc_non_member[%d]", j),
				"%d, want 0 or 1 (whether the SVC calls the example a non-member)", v)
		}
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"timings.train_s", res.Timings.TrainS}, {"timings.eval_s", res.Timings.EvalS}} {
		if !(t.v >= 0 && t.v <= maxSeconds) {
			return bad(t.name, "%g seconds, want a time in [0, %g]", t.v, maxSeconds)
		}
	}
	if b, err := hex.DecodeString(res.ModelSHA256); err != nil || len(b) != 32 {
		return bad("model_sha256", "%q is not a SHA-256 (64 hexadecimal digits)", clip(res.ModelSHA256))
	}
	return nil
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
