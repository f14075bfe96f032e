package eval

import (
	"strings"
	"testing"
)

// TestSuiteSettings: the settings map onto Options, and a bad one is
// refused naming it.
func TestSuiteSettings(t *testing.T) {
	o, err := SuiteSettings{MEntropy: "salun-code", BatchSize: 64, NoMIA: true, MIASeed: 7}.Options()
	if err != nil || o.BatchSize != 64 || !o.NoMIA || o.MIA.Seed != 7 || o.MIA.MEntropy != MEntropySalUnCode {
		t.Fatalf("Options() = %+v, %v", o, err)
	}
	for _, c := range []struct {
		s    SuiteSettings
		want string
	}{
		{SuiteSettings{MEntropy: "song-mittal"}, "batch-size 0: must be positive"},
		{SuiteSettings{MEntropy: "x", BatchSize: 1}, `m-entropy "x": must be song-mittal or salun-code`},
	} {
		if _, err := c.s.Options(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.s, err, c.want)
		}
	}
}
