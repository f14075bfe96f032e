package yamlerr

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestMessageQuotesNoContent (issue 64, item 8): the errors of decoding
// /etc/shadow (every line an unknown key), a value of the wrong kind and
// a syntax error are named by line and what was expected, with no text of
// the file; a key that looks like a key name is quoted.
func TestMessageQuotesNoContent(t *testing.T) {
	type cfg struct {
		Seeds []uint64 `yaml:"seeds"`
		Title string   `yaml:"title"`
		LR    float64  `yaml:"lr"`
	}
	const secret = "saltsalt"
	for _, c := range []struct{ text, want string }{
		{"root:$6$" + secret + "$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
			"line 1: unknown key (not a key name); line 2: unknown key (not a key name)"},
		{"seeds: " + secret + "\ntitle: [a]\nlr: " + secret + "\n",
			"line 1: text where a list of integers was expected; line 2: a list where text was expected; line 3: text where a number was expected"},
		{"seed: [1]\n", `line 1: unknown key "seed"`},
		{"title: [" + secret + ", 2\n", "line 1: not valid YAML (did not find expected ',' or ']')"},
	} {
		var v cfg
		dec := yaml.NewDecoder(strings.NewReader(c.text))
		dec.KnownFields(true)
		err := dec.Decode(&v)
		if err == nil {
			t.Fatalf("%q decoded", c.text)
		}
		if got := Message(err); got != c.want || strings.Contains(got, secret) || strings.Contains(got, "\n") {
			t.Errorf("%q:\n got %q\nwant %q", c.text, got, c.want)
		}
	}
}
