package clilog

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestFailNamesTheProgramOnce: an error of the library package named like
// the program ("unlearn: invalid input: ...") is printed after the error
// prefix without the name again, in text and JSON; other messages are
// kept whole.
func TestFailNamesTheProgramOnce(t *testing.T) {
	var b bytes.Buffer
	l := &Logger{W: &b, Prefix: "unlearn: error: "}
	l.Fail("unlearn: invalid input: shard 7 of 2", 1)
	l.Fail("unlearned 0: interrupted", 130)
	if got, want := b.String(), "unlearn: error: invalid input: shard 7 of 2\nunlearn: error: unlearned 0: interrupted\n"; got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	l.JSON = true
	l.Fail("unlearn: unknown algorithm", 2)
	var ev map[string]any
	if err := json.Unmarshal(b.Bytes(), &ev); err != nil || ev["msg"] != "unknown algorithm" {
		t.Errorf("JSON: %q (%v), want msg \"unknown algorithm\"", b.String(), err)
	}
}
