package setting_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/internal/setting"
)

func TestRender(t *testing.T) {
	base := errors.New("settings")
	e := fmt.Errorf("%w: %w", base, setting.Errorf("epoch-fraction", " 0.001 of the 900-example retain set; pass %s or %s",
		setting.Use("batch-size", 8), setting.Of("no-mia")))
	if got, want := e.Error(), "settings: epoch-fraction 0.001 of the 900-example retain set; pass batch-size 8 or no-mia"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	want := "settings: --epoch-fraction 0.001 of the 900-example retain set; pass --batch-size 8 or --no-mia"
	if got := flagtext.Render(e); got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	f := fmt.Errorf("method A: %w", setting.InFile(e))
	want = "method A: settings: epoch_fraction 0.001 of the 900-example retain set; pass batch_size 8 or no_mia"
	if got := flagtext.Render(f); got != want {
		t.Errorf("Render in a file = %q, want %q", got, want)
	}
	if !errors.Is(f, base) {
		t.Error("setting.InFile hides the wrapped error")
	}
	d := setting.InFile(fmt.Errorf("step: %w", setting.FlagErrorf("device", " cuda: refused")))
	if got, want := flagtext.Render(d), "step: --device cuda: refused"; got != want {
		t.Errorf("a flag setting in a file = %q, want %q", got, want)
	}
	w := setting.Wrap("mask", errors.New("no such file"))
	if got, want := flagtext.Render(fmt.Errorf("run: %w", w)), "run: --mask: no such file"; got != want {
		t.Errorf("setting.Wrap = %q, want %q", got, want)
	}
	sentinel := errors.New("bad input")
	x := setting.Textf("%w: the model is near chance; or pass %s (a {JSON} object stays)", sentinel, setting.Of("allow-chance"))
	want = "run: bad input: the model is near chance; or pass --allow-chance (a {JSON} object stays)"
	if got := flagtext.Render(fmt.Errorf("run: %w", x)); got != want {
		t.Errorf("setting.Textf = %q, want %q", got, want)
	}
	want = "bad input: the model is near chance; or pass allow-chance (a {JSON} object stays)"
	if got := x.Error(); got != want || !errors.Is(x, sentinel) {
		t.Errorf("Textf's Error() = %q (want %q), wraps the sentinel: %v", got, want, errors.Is(x, sentinel))
	}
	y := setting.Wrap("depth-floor", setting.Textf("a depth floor and %s m.json", setting.Of("mask")))
	if got, want := flagtext.Render(y), "--depth-floor: a depth floor and --mask m.json"; got != want {
		t.Errorf("setting.Wrap of a setting.Textf = %q, want %q", got, want)
	}
	if flagtext.Render(errors.New("plain {x}")) != "plain {x}" {
		t.Error("an error without settings changed")
	}
}

// TestNote: a note keeps its settings as values, each reader words them
// in its terms, and a message spliced into another keeps its settings.
func TestNote(t *testing.T) {
	fix := setting.Msgf("pass %s/%s (for Normalize((0.5,), (0.5,)) pass %s %s)",
		setting.Of("mean"), setting.Of("std"), setting.Use("mean", 0.5), setting.Use("std", 0.5))
	n := setting.Notef(setting.KindAdvice, "retraining is cheaper here: %s does that (%s); or %v; then %s",
		setting.Use("method", "retrain"), setting.Use("epochs", 8), fix, setting.Command("train", setting.Use("exclude", "FORGET"), setting.Of("from-scratch")))
	if got := n.Settings(); len(got) != 8 || got[0] != setting.Use("method", "retrain") || got[1] != (setting.Ref{Name: "epochs", Value: "8"}) {
		t.Errorf("Settings() = %v", got)
	}
	for _, c := range []struct {
		terms setting.Terms
		want  string
	}{
		{flagtext.Terms, "retraining is cheaper here: --method retrain does that (--epochs 8); or pass --mean/--std " +
			"(for Normalize((0.5,), (0.5,)) pass --mean 0.5 --std 0.5); then unlearn train --exclude FORGET --from-scratch"},
		{setting.Plain, "retraining is cheaper here: method retrain does that (epochs 8); or pass mean/std " +
			"(for Normalize((0.5,), (0.5,)) pass mean 0.5 std 0.5); then train exclude FORGET from-scratch"},
		{setting.Words, "retraining is cheaper here: method retrain does that (epochs 8); or pass mean/std " +
			"(for Normalize((0.5,), (0.5,)) pass mean 0.5 std 0.5); then the train command with exclude FORGET and from scratch"},
	} {
		if got := n.Render(c.terms); got != c.want {
			t.Errorf("Render:\n got %q\nwant %q", got, c.want)
		}
	}
	w := setting.Notef(setting.KindWarning, "the mask selects nothing; raise %s", setting.Of("budget"))
	if got, want := w.Render(flagtext.Terms), "warning: the mask selects nothing; raise --budget"; got != want {
		t.Errorf("a warning = %q, want %q", got, want)
	}
	if got, want := setting.Msgf("%d%% and a \x00 byte, %s", 5, setting.Of("x")).String(), "5% and a \x00 byte, x"; got != want {
		t.Errorf("a NUL in the text = %q, want %q", got, want)
	}
}

// TestFieldError: an error naming a field path reads as the path to a Go
// caller, as the caller's spelling of it in its terms, and under a
// containing job's field (Under) with the prefix in both; errors.Is still
// sees what it wraps.
func TestFieldError(t *testing.T) {
	e := setting.FieldErrorf("Recipe.MaxEpochs", " %d: must be ≥ 0 (see %s)", -2, setting.Field("Recipe.Schedule"))
	if got, want := e.Error(), "Recipe.MaxEpochs -2: must be ≥ 0 (see Recipe.Schedule)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := flagtext.Render(e), "--max-epochs -2: must be ≥ 0 (see --schedule)"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if got, want := setting.Render(setting.InFile(e), flagtext.Terms), "max_epochs -2: must be ≥ 0 (see schedule)"; got != want {
		t.Errorf("Render in a file = %q, want %q", got, want)
	}
	base := errors.New("invalid input")
	u := fmt.Errorf("oracle recipe: %w", setting.Under("Oracle", fmt.Errorf("%w: %w", base,
		setting.FieldErrorf("LR", " %g: must be positive", 0.0))))
	if got, want := u.Error(), "oracle recipe: invalid input: Oracle.LR 0: must be positive"; got != want {
		t.Errorf("Under: Error() = %q, want %q", got, want)
	}
	if got, want := setting.Render(u, prefixTerms{}), "oracle recipe: invalid input: <Oracle.LR> 0: must be positive"; got != want {
		t.Errorf("Under: Render = %q, want %q", got, want)
	}
	if !errors.Is(u, base) {
		t.Error("Under hides the wrapped error")
	}
	for path, key := range map[string]string{"LR": "lr", "Recipe.MaxEpochs": "max-epochs", "NoMIA": "no-mia",
		"ModelPath": "model-path", "Bootstrap.Seed": "seed"} {
		if got := setting.Field(path).Key(); got != key {
			t.Errorf("Field(%q).Key() = %q, want %q", path, got, key)
		}
	}
}

// prefixTerms shows a field's whole path, to see what a command's terms get.
type prefixTerms struct{}

func (prefixTerms) Setting(r setting.Ref) string { return "<" + r.Field + ">" }
func (prefixTerms) Command(c setting.Cmd) string { return "" }
