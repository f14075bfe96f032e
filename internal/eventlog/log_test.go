package eventlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
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

func TestLoggerTextAndJSON(t *testing.T) {
	var b bytes.Buffer
	l := &Logger{W: &b, Prefix: "tool: error: "}
	l.Info("step", "doing it", "n", 1)
	l.Result("result", "n", 1) // text mode: results go to tables, not stderr
	l.Fail("bad", 1)
	if got := b.String(); got != "doing it\ntool: error: bad\n" {
		t.Errorf("text: %q", got)
	}
	b.Reset()
	l.JSON = true
	l.Info("step", "doing it", "n", 1)
	l.Bar("stage")(3, 3)
	l.Fail("bad", 2)
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		events = append(events, m)
	}
	if len(events) != 3 || events[0]["msg"] != "doing it" || events[0]["n"] != 1.0 || events[1]["event"] != "progress" ||
		events[2]["level"] != "error" || events[2]["exit_code"] != 2.0 {
		t.Errorf("events %v", events)
	}
	// A note's or warning's msg is its message without the label.
	b.Reset()
	l.Info("warning", "warning: the model scores 10%", "accuracy", 0.1)
	l.Info("note", "note: the batch was made symbolic")
	l.Info("warning", "warning [test-drop]: short", "msg", "the whole text")
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		msgs = append(msgs, m["msg"].(string))
	}
	if got := strings.Join(msgs, "|"); got != "the model scores 10%|the batch was made symbolic|the whole text" {
		t.Errorf("msgs %q", got)
	}
	b.Reset()
	l.Quiet = true
	l.Info("step", "x")
	l.Bar("stage")(1, 1)
	if b.Len() != 0 {
		t.Errorf("quiet wrote %q", b.String())
	}
}

// TestPace: no rate in a stage's first second (a first step over
// microseconds read as 35,804,196/s), then the rate and the time left.
func TestPace(t *testing.T) {
	if got := pace(1, 100, 30*time.Microsecond); got != "" {
		t.Errorf("first step: %q", got)
	}
	if got := pace(20, 100, 10*time.Second); got != "  2.0/s, about 40s left" {
		t.Errorf("20 of 100 in 10 s: %q", got)
	}
}

// TestBarClearedBeforeLines: on a terminal, a line of text written while a
// bar is drawn clears the bar first, and a stage that ends early (done ==
// total, with done as its total) clears its bar and leaves none behind.
func TestBarClearedBeforeLines(t *testing.T) {
	var b bytes.Buffer
	l := &Logger{W: &b}
	p := &progress{l: l, label: "rft", start: time.Now(), tty: true}
	p.update(5, 20)
	l.Info("epoch", "epoch 1  loss 0.5")
	want := "\r\033[Kepoch 1  loss 0.5\n"
	if got := b.String(); !strings.Contains(got, "5/20") || !strings.HasSuffix(got, want) {
		t.Errorf("a line after a bar: %q, want the bar then %q", got, want)
	}
	b.Reset()
	p.last = time.Time{}
	p.update(9, 20)
	p.update(9, 9) // the auto schedule stopped after 9 of at most 20
	if got := b.String(); !strings.HasSuffix(got, "\r\033[K") || !strings.Contains(got, "9/9") {
		t.Errorf("a stage that ended early: %q, want the bar at 9/9 then cleared", got)
	}
	b.Reset()
	l.Info("verdict", "verdict: x")
	if got := b.String(); got != "verdict: x\n" {
		t.Errorf("a line after a cleared bar: %q", got)
	}
	b.Reset()
	p.tty = false
	p.update(1, 2)
	if b.Len() != 0 {
		t.Errorf("a bar with stderr not a terminal: %q", b.String())
	}
}
