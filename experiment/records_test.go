package experiment

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recordLine is a record as the runner writes it, with key k and forget
// accuracy acc, as one line.
func testRecordLine(t testing.TB, k string, acc float64) string {
	rec := Record{Schema: RecordSchema, Key: k, Kind: "run", ForgetSet: "iid", Seed: 1, Name: "DEL", Strategy: "del", Algorithm: "rft",
		Budget: 0.3, Accuracy: map[string]float64{"forget": acc, "test": 0.9}, MIA: map[string]float64{"confidence": 0.2},
		Delta: map[string]float64{"forget": 0.01, "mia_confidence": -0.1}, Seconds: 12, OracleSeconds: 100, Forget: 40,
		Estimate: map[string]float64{"forget": 0.8}, EpochsEquivalent: 2.5}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	keyA = "0123456789abcdef"
	keyB = "fedcba9876543210"
)

// TestRecordValuesChecked: every value of a record read back is checked
// against its range (issue 45, item 8: 1e308 and −7 reached RESULTS.md as
// "+Inf"), and the error names the file, the line, the field and the
// repair.
func TestRecordValuesChecked(t *testing.T) {
	good := testRecordLine(t, keyB, 0.5)
	for _, c := range []struct{ from, to, want string }{
		{`"forget":0.5`, `"forget":5.0043`, "accuracy.forget 5.0043: outside [0, 1]"},
		{`"forget":0.01`, `"forget":1e308`, "delta.forget 1e+308: outside [-1, 1]"},
		{`"confidence":0.2`, `"confidence":-7`, "mia.confidence -7: outside [0, 1]"},
		{`"seconds":12`, `"seconds":-7`, "seconds -7: outside [0, 1e+09]"},
		{`"oracle_seconds":100`, `"oracle_seconds":1e308`, "oracle_seconds 1e+308: outside"},
		{`"oracle_seconds":100`, `"oracle_seconds":1e-300`, "oracle_seconds 1e-300: want 0 (untimed)"},
		{`"budget":0.3`, `"budget":7`, "budget 7: outside [0, 1]"},
		{`"epochs_equivalent":2.5`, `"epochs_equivalent":-1`, "epochs_equivalent -1: outside"},
		{`"estimate":{"forget":0.8}`, `"estimate":{"forget":80}`, "estimate.forget 80: outside [0, 1]"},
		{`"forget":40`, `"forget":-3`, "forget -3: want the forget set's size"},
		{`"kind":"run"`, `"kind":"rum"`, `kind "rum": want oracle or run`},
		{`"name":"DEL"`, `"name":""`, `name "": want a name of 1 to 100 bytes`},
		{`"schema":"unlearn.experiment/v1"`, `"schema":"v0"`, `schema "v0", want "unlearn.experiment/v1"`},
		{`"seed":1`, `"seed":-1`, "not a record (json: cannot unmarshal number -1"},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		if bad == good {
			t.Fatalf("case %q: nothing replaced", c.want)
		}
		var s RecordSet
		err := s.Decode(strings.NewReader(testRecordLine(t, keyA, 0.5)+"\n"+bad+"\n"), "out/results.jsonl")
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if !errors.Is(err, ErrRecords) || !strings.Contains(msg, "out/results.jsonl:2: ") || !strings.Contains(msg, c.want) ||
			!strings.Contains(msg, "delete line 2") ||
			// the step's own copy is named where the kind says which folder holds it
			!strings.HasPrefix(c.want, "kind") && !strings.Contains(msg, "copy it back from runs/run-"+keyB+"/record.json") {
			t.Errorf("%s: error %v, want ErrRecords naming out/results.jsonl:2, %q and the repair", c.to, err, c.want)
		}
	}
	// A key that is no key: the hint cannot name the step's folder.
	var s RecordSet
	err := s.Decode(strings.NewReader(testRecordLine(t, "../x", 0.5)+"\n"), "r.jsonl")
	if !errors.Is(err, ErrRecords) || !strings.Contains(err.Error(), `r.jsonl:1: key "../x": want 16 lower-case hexadecimal digits`) ||
		strings.Contains(err.Error(), "runs/run-") {
		t.Errorf("bad key: %v", err)
	}
}

// TestRecordKeyTwice: a second, different record of a key is refused,
// naming both lines, in one file or across files (issue 45, item 8: it
// silently replaced the first); the same line twice (a shard's file
// appended to results.jsonl and kept) counts once.
func TestRecordKeyTwice(t *testing.T) {
	a, a2, b := testRecordLine(t, keyA, 0.5), testRecordLine(t, keyA, 0.25), testRecordLine(t, keyB, 0.5)
	var s RecordSet
	err := s.Decode(strings.NewReader(a+"\n"+b+"\n"+a2+"\n"), "results.jsonl")
	if !errors.Is(err, ErrRecords) || !strings.Contains(err.Error(), "results.jsonl:1 and results.jsonl:3 are two different records of key "+keyA) {
		t.Errorf("one file: %v", err)
	}
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "results.shard-0.jsonl")
	for p, text := range map[string]string{p1: a + "\n" + b + "\n", p2: "\n" + a2 + "\n"} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s = RecordSet{}
	if err := s.Read(p1); err != nil {
		t.Fatal(err)
	}
	if err := s.Read(p2); !errors.Is(err, ErrRecords) || !strings.Contains(err.Error(), p1+":1 and "+p2+":2 are two different records") {
		t.Errorf("two files: %v", err)
	}
	s = RecordSet{}
	if err := s.Decode(strings.NewReader(a+"\n"+b+"\n"+a+"\n"), "results.jsonl"); err != nil || len(s.Records) != 2 {
		t.Errorf("the same line twice: %d records, %v; want 2, no error", len(s.Records), err)
	}
}

// TestRecordLastLineCutShort: a last line cut short (an append stopped by
// a full disk) is left out with a warning naming the file and line, and
// RepairTail cuts it off the file so that the next append starts on a
// clean line (issue 45, item 8: it stopped every later run with no hint);
// the same damage before the last line is an error naming the line.
func TestRecordLastLineCutShort(t *testing.T) {
	a, b := testRecordLine(t, keyA, 0.5), testRecordLine(t, keyB, 0.5)
	cut := b[:len(b)/2]
	p := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(p, []byte(a+"\n"+a+"\n"+cut), 0o644); err != nil {
		t.Fatal(err)
	}
	var s RecordSet
	if err := s.Read(p); err != nil || len(s.Records) != 1 || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], p+":3: the last line is cut short") {
		t.Fatalf("read: %d records, warnings %q, %v; want 1 record and a warning naming %s:3", len(s.Records), s.Warnings, err, p)
	}
	w, err := RepairTail(p)
	if err != nil || !strings.Contains(w, p+":3: the last line was cut short ("+itoa(len(cut))+" bytes") {
		t.Fatalf("RepairTail: %q, %v", w, err)
	}
	if got, _ := os.ReadFile(p); string(got) != a+"\n"+a+"\n" {
		t.Fatalf("repaired file %q, want the complete lines only", got)
	}
	// The next append starts on a clean line.
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(b + "\n")
	f.Close()
	s = RecordSet{}
	if err := s.Read(p); err != nil || len(s.Records) != 2 || len(s.Warnings) != 0 {
		t.Fatalf("after the append: %d records, warnings %q, %v", len(s.Records), s.Warnings, err)
	}
	// A last record complete but for its newline is kept, and gets one.
	if err := os.WriteFile(p, []byte(a+"\n"+b), 0o644); err != nil {
		t.Fatal(err)
	}
	s = RecordSet{}
	if err := s.Read(p); err != nil || len(s.Records) != 2 || len(s.Warnings) != 0 {
		t.Fatalf("last record without newline: %d records, %q, %v", len(s.Records), s.Warnings, err)
	}
	if w, err := RepairTail(p); w != "" || err != nil {
		t.Fatalf("RepairTail of a complete last record: %q, %v", w, err)
	}
	if got, _ := os.ReadFile(p); string(got) != a+"\n"+b+"\n" {
		t.Fatalf("file %q, want its newline added", got)
	}
	// Cut short before the last line: not an interrupted append.
	s = RecordSet{}
	err = s.Decode(strings.NewReader(a+"\n"+cut+"\n"+b+"\n"), "r.jsonl")
	if !errors.Is(err, ErrRecords) || !strings.Contains(err.Error(), "r.jsonl:2: not a record") {
		t.Errorf("cut line inside the file: %v", err)
	}
}

// TestRecordLineTooLong: a line longer than MaxRecordLine is an error
// naming the file and line (issue 45, item 8: a 200 MB line said "token
// too long" with nothing else), and RepairTail leaves such a tail alone.
func TestRecordLineTooLong(t *testing.T) {
	a := testRecordLine(t, keyA, 0.5)
	long := strings.Repeat("x", MaxRecordLine+10)
	for _, text := range []string{a + "\n" + long + "\n", a + "\n" + long} {
		p := filepath.Join(t.TempDir(), "results.jsonl")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if w, err := RepairTail(p); w != "" || err != nil {
			t.Errorf("RepairTail: %q, %v; want nothing done", w, err)
		}
		var s RecordSet
		err := s.Read(p)
		if !errors.Is(err, ErrRecords) || !strings.Contains(err.Error(), p+":2: a line longer than 1048576 bytes") {
			t.Errorf("long line: %v", err)
		}
		if got, _ := os.ReadFile(p); string(got) != text {
			t.Errorf("the file changed")
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestResultsFileChecked (issue 64, item 5): a results file is opened
// without following a final link and without blocking, must be a regular
// file, and the results files of one set hold at most MaxResultsSize bytes
// and MaxRecords records: a link (to a records file, /etc/passwd or
// /dev/zero), a FIFO, a folder and a 2 GB sparse file are refused at once
// as errors about the out: folder (ErrConfig), naming the file; RepairTail
// refuses the same and leaves a link's target as it was.
func TestResultsFileChecked(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	a := testRecordLine(t, keyA, 0.5) + "\n"
	if err := os.WriteFile(good, []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.jsonl")
	f, err := os.Create(sparse)
	if err == nil {
		err = f.Truncate(2 << 30)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	link := func(name, to string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ path, want string }{
		{link("link-good.jsonl", good), "symbolic link"},
		{link("link-passwd.jsonl", "/etc/passwd"), "symbolic link"},
		{link("link-zero.jsonl", "/dev/zero"), "symbolic link"},
		{fifo, "FIFO"},
		{dir, "is a folder"},
		{sparse, "2147483648 bytes, which with the 0 read before is more than the 67108864"},
	} {
		done := make(chan error, 1)
		go func() { var s RecordSet; done <- s.Read(c.path) }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want an out: error naming the file and %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", c.path)
		}
		if w, err := RepairTail(c.path); c.path != dir && c.path != sparse && (err == nil || w != "") {
			t.Errorf("RepairTail %s: %q, %v; want a refusal", c.path, w, err)
		}
	}
	if got, _ := os.ReadFile(good); string(got) != a {
		t.Errorf("a link's target changed: %q", got)
	}
	// The limits hold over the files of a set together, and over records:
	// a set that read most of the bytes refuses the next file by its size,
	// and one line past MaxRecords is refused naming file and line.
	s := RecordSet{size: MaxResultsSize - 10}
	if err := s.Read(good); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "with the 67108854 read before") {
		t.Errorf("a file past the set's total: %v", err)
	}
	s = RecordSet{}
	many := strings.Repeat(a, MaxRecords) + a
	if err := s.Decode(strings.NewReader(many), "r.jsonl"); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "r.jsonl:100001: more than the 100000 records") {
		t.Errorf("one record past MaxRecords: %v", err)
	}
	s = RecordSet{}
	if err := s.Decode(strings.NewReader(strings.Repeat(a, MaxRecords)), "r.jsonl"); err != nil || len(s.Records) != 1 {
		t.Errorf("MaxRecords records: %v, %d records", err, len(s.Records))
	}
}
