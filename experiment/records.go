package experiment

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// ErrRecords marks a results file (results.jsonl, results.shard-I.jsonl)
// with a line that is not a record as the tool writes it: edited,
// corrupted, or two different records of one key.
var ErrRecords = errors.New("damaged results file")

// MaxRecordLine bounds a line of a results file. A record is a few KB (the
// committed ones at most 1.3 KB); a longer line is damage, not data.
const MaxRecordLine = 1 << 20

// MaxResultsSize bounds the results files of one out folder together
// (results.jsonl and every shard's file, as one RecordSet reads them), and
// MaxRecords their lines: 64 MiB hold some 60,000 records of about 1 KB,
// a hundred times the largest committed grid (under 600), and a report of
// that many stays far under the memory of the Job that gathers it (8 GiB
// in deploy/k8s; TestResultsFilesBounded measures it). A 1 GB file was
// read whole before, taking 70 s and 6.2 GB.
const (
	MaxResultsSize = 64 << 20
	MaxRecords     = 100_000
)

// Bounds of a record's times: a step longer than 1e9 s (30 years) is
// damage, and the bound keeps sums of times finite; an oracle's training
// time is 0 (untimed) or at least minOracleSeconds, so that a run's time ÷
// the oracle's stays finite.
const (
	maxRecordSeconds = 1e9
	minOracleSeconds = 1e-6
)

// RecordSet collects the records of one or more results files. Each line
// is checked (Record.Check) and named by file and line when it fails; a
// key recorded twice is refused, naming both lines, unless the two lines
// are identical (a shard's file appended to results.jsonl and kept: the
// same record, counted once). A last line cut short (no newline, not JSON:
// an append interrupted, e.g. by a full disk) is left out with a warning.
type RecordSet struct {
	// Records in file order, each key once.
	Records []Record
	// Warnings say what was left out, with file and line.
	Warnings []string
	at       map[string]recordLine
	// size and lines count what was read so far, against MaxResultsSize
	// and MaxRecords.
	size  int64
	lines int
}

// recordLine is where a key's record was read, and its line's digest.
type recordLine struct {
	name string
	line int
	sum  [sha256.Size]byte
}

// Read adds the records of the file at path (an error wrapping
// os.ErrNotExist when there is none). The file is opened without following
// a final link and without blocking, must be a regular file
// (fsread.OpenNoLink: a link to /etc/shadow or /dev/zero, or a FIFO, is
// refused without a byte read), and is read from that descriptor; a file
// that would take the set past MaxResultsSize is refused before it is
// read. Refusals of the file itself wrap ErrConfig (they are about the
// experiment's out: folder, exit code 2); damage inside it ErrRecords.
func (s *RecordSet) Read(path string) error {
	f, err := fsread.OpenNoLink(path, "results file")
	if errors.Is(err, os.ErrNotExist) {
		return err
	} else if err != nil {
		return fmt.Errorf("%w: out: %w", ErrConfig, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if s.size+st.Size() > MaxResultsSize {
		return fmt.Errorf("%w: out: results file %s: %d bytes, which with the %d read before is "+
			"more than the %d bytes an experiment's results files may hold together (%d records of "+
			"about 1 KB); it is not a results file the tool wrote, or the out: folder holds several experiments",
			ErrConfig, path, st.Size(), s.size, MaxResultsSize, MaxRecords)
	}
	return s.Decode(f, path)
}

// Decode adds the records of the JSON lines in r; name is the file in
// messages.
func (s *RecordSet) Decode(r io.Reader, name string) error {
	if s.at == nil {
		s.at = map[string]recordLine{}
	}
	// A reader that grows past the limit (a file appended to while it is
	// read, or any reader given to Decode) is cut one byte past it, which
	// the count below refuses.
	br := bufio.NewReader(io.LimitReader(r, MaxResultsSize-s.size+1))
	for line := 1; ; line++ {
		b, ended, err := readLine(br)
		s.size += int64(len(b))
		if ended {
			s.size++
		}
		if s.size > MaxResultsSize {
			return fmt.Errorf("%w: out: results file %s: more than the %d bytes an experiment's "+
				"results files may hold together", ErrConfig, name, MaxResultsSize)
		}
		if errors.Is(err, errLongLine) {
			return fmt.Errorf("%w: %s:%d: a line longer than %d bytes (a record is a few KB): the file is damaged; delete "+
				"line %d, or restore the file",
				ErrRecords, name, line, MaxRecordLine, line)
		} else if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			if !ended {
				return nil
			}
			continue
		}
		if s.lines++; s.lines > MaxRecords {
			return fmt.Errorf("%w: out: results file %s:%d: more than the %d records an "+
				"experiment's results files may hold together", ErrConfig, name, line, MaxRecords)
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			var syn *json.SyntaxError
			if !ended && errors.As(err, &syn) {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: the last line is cut short (%d bytes without a newline, not "+
					"JSON: an append was interrupted, e.g. by a full disk); left out, so its step runs again (a run of the grid "+
					"removes it from the file)",
					name, line, len(b)))
				return nil
			}
			return fmt.Errorf("%w: %s:%d: not a record (%v); %s", ErrRecords, name, line, err, repairHint(rec, line))
		}
		if err := rec.Check(); err != nil {
			return fmt.Errorf("%w: %s:%d: %v; %s", ErrRecords, name, line, err, repairHint(rec, line))
		}
		here := recordLine{name, line, sha256.Sum256(b)}
		if prev, ok := s.at[rec.Key]; ok {
			if prev.sum != here.sum {
				return fmt.Errorf("%w: %s:%d and %s:%d are two different records of key %s: keep the right one "+
					"(runs/%s-%s/record.json is the step's own copy) and delete the other line",
					ErrRecords, prev.name, prev.line, name, line, rec.Key, rec.Kind, rec.Key)
			}
		} else {
			s.at[rec.Key] = here
			s.Records = append(s.Records, rec)
		}
		if !ended {
			return nil
		}
	}
}

// repairHint says how to repair a damaged line: from the step's own copy
// of its record, or by running the step again.
func repairHint(rec Record, line int) string {
	if validKey(rec.Key) && (rec.Kind == "oracle" || rec.Kind == "run") {
		return fmt.Sprintf("the line was edited or corrupted: copy it back from runs/%[1]s-%[2]s/record.json (the step's "+
			"own copy), or delete line %[3]d and runs/%[1]s-%[2]s/ to run the step again",
			rec.Kind, rec.Key, line)
	}
	return fmt.Sprintf("the line was edited or corrupted: delete line %d (and its step's folder under runs/) to run its "+
		"step again", line)
}

var errLongLine = errors.New("line too long")

// readLine reads one line without its newline; ended says whether it had
// one (false: the file's last bytes, or nothing at the end). A line longer
// than MaxRecordLine is errLongLine.
func readLine(br *bufio.Reader) (line []byte, ended bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxRecordLine+1 {
			return nil, false, errLongLine
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return line, false, nil
		default:
			return nil, false, err
		}
	}
}

// validKey reports whether k is a record key: 16 lower-case hexadecimal
// digits (Key).
func validKey(k string) bool {
	b, err := hex.DecodeString(k)
	return err == nil && len(b) == 8 && hex.EncodeToString(b) == k
}

// Check checks every field of a record read back against its range:
// the schema, a key as Key makes them, kind oracle or run, names of 1 to
// maxNameLen bytes, accuracies, MIA scores and estimates in [0, 1], Δ in
// [−1, 1], the budget in [0, 1], times in [0, 1e9] s (an oracle's 0 or at
// least a microsecond), epochs in [0, MaxEpochs], a finite learning rate ≥ 0,
// a forget set size ≥ 0, and an original's SHA-256 of 64 hexadecimal
// digits when present. The error names the field.
func (rec *Record) Check() error {
	if rec.Schema != RecordSchema {
		return fmt.Errorf("schema %q, want %q", clip(rec.Schema), RecordSchema)
	}
	switch {
	case !validKey(rec.Key):
		return fmt.Errorf("key %q: want 16 lower-case hexadecimal digits", clip(rec.Key))
	case rec.Kind != "oracle" && rec.Kind != "run":
		return fmt.Errorf("kind %q: want oracle or run", clip(rec.Kind))
	case rec.ForgetSet == "" || len(rec.ForgetSet) > maxNameLen:
		return fmt.Errorf("forget_set %q: want a name of 1 to %d bytes", clip(rec.ForgetSet), maxNameLen)
	case rec.Name == "" || len(rec.Name) > maxNameLen:
		return fmt.Errorf("name %q: want a name of 1 to %d bytes", clip(rec.Name), maxNameLen)
	case rec.Schedule != "" && rec.Schedule != "auto":
		return fmt.Errorf("schedule %q: want auto or none", clip(rec.Schedule))
	case rec.Forget < 0:
		return fmt.Errorf("forget %d: want the forget set's size, ≥ 0", rec.Forget)
	case rec.Epochs < 0 || rec.Epochs > MaxEpochs:
		return fmt.Errorf("epochs %d: want [0, %d]", rec.Epochs, MaxEpochs)
	case !(rec.LR >= 0 && rec.LR <= math.MaxFloat64):
		return fmt.Errorf("lr %g: want a finite rate ≥ 0", rec.LR)
	case rec.OriginalSHA256 != "" && len(rec.OriginalSHA256) != 64:
		return fmt.Errorf("original_sha256 %q: want 64 hexadecimal digits", clip(rec.OriginalSHA256))
	}
	if _, err := hex.DecodeString(rec.OriginalSHA256); err != nil {
		return fmt.Errorf("original_sha256 %q: want 64 hexadecimal digits", clip(rec.OriginalSHA256))
	}
	for _, g := range []struct {
		field  string
		m      map[string]float64
		lo, hi float64
	}{{"accuracy", rec.Accuracy, 0, 1}, {"mia", rec.MIA, 0, 1}, {"estimate", rec.Estimate, 0, 1},
		{"tolerances", rec.Tolerances, 0, 1}, {"delta", rec.Delta, -1, 1}} {
		keys := make([]string, 0, len(g.m))
		for k := range g.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := g.m[k]; !(v >= g.lo && v <= g.hi) {
				return fmt.Errorf("%s.%s %g: outside [%g, %g]", g.field, clip(k), v, g.lo, g.hi)
			}
		}
	}
	for _, t := range []struct {
		field  string
		v      float64
		lo, hi float64
	}{{"budget", rec.Budget, 0, 1}, {"seconds", rec.Seconds, 0, maxRecordSeconds},
		{"oracle_seconds", rec.OracleSeconds, 0, maxRecordSeconds},
		{"command_seconds", rec.CommandSeconds, 0, maxRecordSeconds},
		{"epochs_equivalent", rec.EpochsEquivalent, 0, maxRecordSeconds}, {"peak_rss_mib", rec.PeakRSSMiB, 0, 1 << 30}} {
		if !(t.v >= t.lo && t.v <= t.hi) {
			return fmt.Errorf("%s %g: outside [%g, %g]", t.field, t.v, t.lo, t.hi)
		}
	}
	return CheckOracleSeconds("oracle_seconds", rec.OracleSeconds)
}

// CheckOracleSeconds checks an oracle's training time as a record holds
// it (field names it in the error): 0 (untimed) or in [1e-6, 1e9] s. An
// outside oracle's sidecar (train_s) is checked with it too, so that a
// time the sidecar passes never makes the record written from it damaged
// (a sidecar's 1e-300 s did, on every rerun).
func CheckOracleSeconds(field string, v float64) error {
	switch {
	case !(v >= 0 && v <= maxRecordSeconds):
		return fmt.Errorf("%s %g: outside [0, %g]", field, v, float64(maxRecordSeconds))
	case v > 0 && v < minOracleSeconds:
		return fmt.Errorf("%s %g: want 0 (untimed) or a training time of at least %g s", field, v, minOracleSeconds)
	}
	return nil
}

// RepairTail makes the results file at path end on a clean line before
// records are appended to it: a last line cut short (no newline, not JSON:
// an append interrupted, e.g. by a full disk) is cut off the file, and a
// last line that is JSON but lacks its newline gets one. It returns a
// warning naming the file and line when it cut something, and leaves
// alone a missing or empty file, and a last line longer than MaxRecordLine
// (reading the file reports it). Only bytes after the file's last newline
// are ever removed: every complete line stays as it was.
func RepairTail(path string) (string, error) {
	// Opened as Read opens it: no final link, no blocking, a regular file.
	f, err := fsread.OpenNoLinkFlag(path, "results file", os.O_RDWR)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("%w: out: %w", ErrConfig, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return "", err
	}
	size := fi.Size()
	n := min(size, MaxRecordLine+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil {
		return "", err
	}
	if buf[n-1] == '\n' {
		return "", nil
	}
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 && n < size {
		return "", nil
	}
	tail := bytes.TrimSpace(buf[i+1:])
	if len(tail) == 0 || json.Valid(tail) {
		if _, err := f.WriteAt([]byte{'\n'}, size); err != nil {
			return "", err
		}
		return "", f.Close()
	}
	start := size - n + int64(i+1)
	lines, err := countLines(io.NewSectionReader(f, 0, start))
	if err != nil {
		return "", err
	}
	if err := f.Truncate(start); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s:%d: the last line was cut short (%d bytes without a newline, not JSON: an append was "+
		"interrupted, e.g. by a full disk); removed it from the file, so its step runs again",
		filepath.Clean(path), lines+1, size-start), f.Close()
}

// countLines counts the newlines in r.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
	}
}
