package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad: any experiment file is loaded or refused without a panic, and
// one that loads keeps Load's promises: forget set names that are file
// names, bounded counts, notes inside the file's folder.
func FuzzLoad(f *testing.F) {
	good := "architecture: a.onnx\ntrain: {epochs: 1, lr: 0.1}\nforget_sets: [{name: f, kind: iid, fraction: 0.1}]\nseeds: [0]\nout: o\nmethods: [{name: DEL, method: del, budgets: [0.3]}]\n"
	f.Add([]byte(good))
	f.Add([]byte(strings.Replace(good, "budgets: [0.3]}", "budgets: [0.3], batch_size: 32}", 1)))
	f.Add([]byte(good + "notes: n.md\nscore: {k: 4, forget_sets: [f], methods: [DEL]}\n"))
	f.Add([]byte(strings.Replace(good, "name: f,", `name: "/../../victim",`, 1)))
	f.Add([]byte(strings.Replace(good, "lr: 0.1}", "lr: .inf, batch_size: 2000000000, momentum: .nan}", 1)))
	f.Add([]byte(good + "notes: ../../etc/shadow\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(p)
		if err != nil {
			return
		}
		for _, fs := range c.ForgetSets {
			if FileName(fs.Name) != fs.Name {
				t.Errorf("forget set name %q loaded", fs.Name)
			}
		}
		if tr := c.Train; tr.BatchSize < 1 || tr.BatchSize > MaxBatchSize || tr.Epochs < 1 || tr.Epochs > MaxEpochs || !(tr.Momentum >= 0 && tr.Momentum < 1) {
			t.Errorf("recipe %+v loaded", tr)
		}
		for _, m := range c.Methods {
			if m.BatchSize < 0 || m.BatchSize > MaxBatchSize || (m.Default && m.BatchSize != 0) {
				t.Errorf("method %s: batch_size %d loaded", m.Name, m.BatchSize)
			}
		}
		if c.Notes != "" {
			if rel, err := filepath.Rel(dir, c.Notes); err != nil || !filepath.IsLocal(rel) {
				t.Errorf("notes %q resolved outside %s", c.Notes, dir)
			}
		}
	})
}

// FuzzDecodeRecords: any results file is read or refused without a panic,
// and what is read keeps RecordSet's promises: every record passes Check,
// each key once.
func FuzzDecodeRecords(f *testing.F) {
	good := testRecordLine(f, keyA, 0.5)
	f.Add([]byte(good + "\n" + testRecordLine(f, keyB, 0.5) + "\n"))
	f.Add([]byte(good + "\n" + good[:40]))
	f.Add([]byte(good + "\n" + testRecordLine(f, keyA, 0.25) + "\n"))
	f.Add([]byte(strings.Replace(good, `"forget":0.5`, `"forget":1e308`, 1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s RecordSet
		if err := s.Decode(bytes.NewReader(b), "f"); err != nil {
			return
		}
		seen := map[string]bool{}
		for _, rec := range s.Records {
			if err := rec.Check(); err != nil || seen[rec.Key] {
				t.Errorf("record %+v read (%v, seen %v)", rec, err, seen[rec.Key])
			}
			seen[rec.Key] = true
		}
	})
}
