package experiment

import (
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
		if c.Notes != "" {
			if rel, err := filepath.Rel(dir, c.Notes); err != nil || !filepath.IsLocal(rel) {
				t.Errorf("notes %q resolved outside %s", c.Notes, dir)
			}
		}
	})
}
