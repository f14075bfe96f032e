package setting

import (
	"errors"
	"fmt"
	"testing"
)

func TestRender(t *testing.T) {
	base := errors.New("settings")
	e := fmt.Errorf("%w: %w", base, Errorf("epoch-fraction", " 0.001 of the 900-example retain set; pass {batch-size} 8 or {no-mia}"))
	if got, want := e.Error(), "settings: epoch-fraction 0.001 of the 900-example retain set; pass batch-size 8 or no-mia"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := Render(e), "settings: --epoch-fraction 0.001 of the 900-example retain set; pass --batch-size 8 or --no-mia"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	f := fmt.Errorf("method A: %w", InFile(e))
	if got, want := Render(f), "method A: settings: epoch_fraction 0.001 of the 900-example retain set; pass batch_size 8 or no_mia"; got != want {
		t.Errorf("Render in a file = %q, want %q", got, want)
	}
	if !errors.Is(f, base) {
		t.Error("InFile hides the wrapped error")
	}
	d := InFile(fmt.Errorf("step: %w", FlagErrorf("device", " cuda: refused")))
	if got, want := Render(d), "step: --device cuda: refused"; got != want {
		t.Errorf("a flag setting in a file = %q, want %q", got, want)
	}
	w := Wrap("mask", errors.New("no such file"))
	if got, want := Render(fmt.Errorf("run: %w", w)), "run: --mask: no such file"; got != want {
		t.Errorf("Wrap = %q, want %q", got, want)
	}
	sentinel := errors.New("bad input")
	x := Textf("%w: the model is near chance; or pass {allow-chance} (a {JSON} object stays)", sentinel)
	if got, want := Render(fmt.Errorf("run: %w", x)), "run: bad input: the model is near chance; or pass --allow-chance (a {JSON} object stays)"; got != want {
		t.Errorf("Textf = %q, want %q", got, want)
	}
	if got, want := x.Error(), "bad input: the model is near chance; or pass allow-chance (a {JSON} object stays)"; got != want || !errors.Is(x, sentinel) {
		t.Errorf("Textf's Error() = %q (want %q), wraps the sentinel: %v", got, want, errors.Is(x, sentinel))
	}
	y := Wrap("depth-floor", Textf("a depth floor and {mask} m.json"))
	if got, want := Render(y), "--depth-floor: a depth floor and --mask m.json"; got != want {
		t.Errorf("Wrap of a Textf = %q, want %q", got, want)
	}
	if Render(errors.New("plain {x}")) != "plain {x}" {
		t.Error("an error without settings changed")
	}
}
