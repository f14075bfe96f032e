package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// modelGrid writes and loads an experiment whose model: is model and
// whose one forget set is an ids file with an outside oracle (so that a
// dry run trains and runs nothing), in a fresh folder it returns.
func modelGrid(t *testing.T, model string) (*experiment.Config, string) {
	t.Helper()
	return dataGrid(t, model, "../../testdata/fashion", "")
}

// dataGrid is modelGrid with the data at data and the out folder at out
// ("" for one in the grid's folder).
func dataGrid(t *testing.T, model, data, out string) (*experiment.Config, string) {
	t.Helper()
	dir := t.TempDir()
	if out == "" {
		out = filepath.Join(dir, "out")
	}
	if err := os.WriteFile(filepath.Join(dir, "forget.txt"), []byte("1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "exp.yaml")
	yaml := fmt.Sprintf(`model: %[2]s
data: %[3]s
train: {epochs: 1, lr: 0.05}
forget_sets:
  - {name: outside, kind: file, ids: "%[1]s/forget.txt", oracle: "%[1]s/oracle.onnx"}
seeds: [0]
no_mia: true
out: %[4]s
methods:
  - {name: SSD, method: ssd}
`, dir, model, data, out)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := experiment.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

// TestModelFilesCheckedBeforeHashing (issue 64, item 4): a model: that is
// /dev/zero, a FIFO, a folder (/usr) or a 20 GB sparse file is refused by a
// dry run at once, without blocking, as an error in the experiment file
// (exit code 2) naming the key and the path; so is an outside oracle:
// that is a FIFO when its sidecar is verified. A dry run whose context is
// cancelled stops (SIGTERM stops every phase).
func TestModelFilesCheckedBeforeHashing(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.onnx")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.onnx")
	f, err := os.Create(sparse)
	if err == nil {
		err = f.Truncate(20 << 30)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ model, want string }{
		{"/dev/zero", "character device"},
		{fifo, "FIFO"},
		{"/usr", "is a folder"},
		{sparse, "more than the 2147483648"},
	} {
		cfg, _ := modelGrid(t, c.model)
		done := make(chan error, 1)
		go func() { _, err := Run(context.Background(), Job{Config: cfg, DryRun: true}); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, experiment.ErrConfig) || !strings.Contains(err.Error(), "model: model "+c.model) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("model: %s: %v, want an experiment error naming model: %s and %q", c.model, err, c.model, c.want)
			}
			if _, err := os.Stat(cfg.Out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("model: %s: the dry run created %s", c.model, cfg.Out)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("model: %s: the dry run still runs after 10 s", c.model)
		}
	}

	// The oracle's sidecar is verified against the oracle's bytes: a FIFO
	// is refused there, without blocking.
	if err := os.WriteFile(filepath.Join(dir, "fifo.json"), []byte(`{"train_s": 1, "onnx_sha256": "`+strings.Repeat("a", 64)+
		`", "data_sha256": "`+strings.Repeat("b", 64)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readSidecar(context.Background(), fifo, "", true); !errors.Is(err, experiment.ErrConfig) || !strings.Contains(err.Error(), "oracle: model "+fifo) {
		t.Errorf("oracle FIFO: %v, want an experiment error naming oracle: and the FIFO", err)
	}

	// A cancelled dry run stops with ErrInterrupted before listing a step.
	cfg, _ := modelGrid(t, "../../testdata/resnet_small_train.onnx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var steps int
	if _, err := Run(ctx, Job{Config: cfg, DryRun: true, Step: func(string, string, string) { steps++ }}); !errors.Is(err, unlearn.ErrInterrupted) || steps != 0 {
		t.Errorf("cancelled dry run: %v after %d steps, want ErrInterrupted before any", err, steps)
	}
}

// TestLinkedDatasetHashedByContent (issue 64, item 6): two datasets given
// through links (data: linkA, then data: linkB, which differ in one file)
// key their steps apart, and a linked one keys them as the real folder
// does (every linked dataset hashed as an empty folder, so B's steps were
// "cached" from A's); an out: inside the real folder, reached through the
// link, is refused as an error in the experiment file and not created.
func TestLinkedDatasetHashedByContent(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "A"), filepath.Join(root, "B")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir("../../testdata/fashion")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			copyTestFile(t, filepath.Join("../../testdata/fashion", e.Name()), filepath.Join(d, e.Name()))
		}
	}
	if err := os.WriteFile(filepath.Join(b, "README.md"), []byte("another dataset\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	linkA, linkB := filepath.Join(root, "linkA"), filepath.Join(root, "linkB")
	if err := errors.Join(os.Symlink(a, linkA), os.Symlink(b, linkB)); err != nil {
		t.Fatal(err)
	}
	// A grid of the tool's own original and oracle: their keys hold the
	// data's SHA-256.
	grid := func(data, out string) *experiment.Config {
		t.Helper()
		dir := t.TempDir()
		if out == "" {
			out = filepath.Join(dir, "out")
		}
		p := filepath.Join(dir, "exp.yaml")
		yaml := "architecture: " + filepath.Join("..", "..", "testdata", "resnet_small_train.onnx") + "\ndata: " + data +
			"\ntrain: {epochs: 1, lr: 0.05}\nforget_sets: [{name: iid, kind: iid, fraction: 0.01}]\nseeds: [0]\nout: " + out +
			"\nmethods: [{name: SSD, method: ssd}]\n"
		if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := experiment.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	keys := func(data string) string {
		t.Helper()
		out, err := Run(context.Background(), Job{Config: grid(data, ""), DryRun: true})
		if err != nil {
			t.Fatalf("dry run of %s: %v", data, err)
		}
		return strings.Join(out.Keys, " ")
	}
	ka, kb := keys(linkA), keys(linkB)
	if ka == kb || ka != keys(a) {
		t.Errorf("keys: data: linkA %s, linkB %s, A %s; want linkA's to be A's and B's others", ka, kb, keys(a))
	}
	inside := filepath.Join(a, "out")
	_, err := Run(context.Background(), Job{Config: grid(linkA, inside), DryRun: true})
	if !errors.Is(err, experiment.ErrConfig) || !strings.Contains(err.Error(), "inside the dataset "+linkA) {
		t.Errorf("out: inside the real dataset through its link: %v, want an experiment error naming the dataset", err)
	}
	if _, err := os.Stat(inside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run created %s", inside)
	}
}

// TestOutFilesReadWithoutLinks (issue 64, item 7): the files the runner
// reads back from out (record.json here) are read without a second lookup
// by name and refused when a folder on the way is a link (a step's folder
// pointing elsewhere), when the file is a hard link to a file elsewhere,
// or a link; the plain file is read.
func TestOutFilesReadWithoutLinks(t *testing.T) {
	root := t.TempDir()
	out, elsewhere := filepath.Join(root, "out"), filepath.Join(root, "elsewhere")
	for _, d := range []string{filepath.Join(out, "runs", "oracle-a"), filepath.Join(out, "runs", "oracle-c"), filepath.Join(out, "runs", "oracle-d"), elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{"out/runs/oracle-a/record.json": "{}", "elsewhere/record.json": "SECRET"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(os.Symlink(elsewhere, filepath.Join(out, "runs", "oracle-b")),
		os.Link(filepath.Join(elsewhere, "record.json"), filepath.Join(out, "runs", "oracle-c", "record.json")),
		os.Symlink(filepath.Join(elsewhere, "record.json"), filepath.Join(out, "runs", "oracle-d", "record.json"))); err != nil {
		t.Fatal(err)
	}
	if b, err := readOut(out, filepath.Join(out, "runs", "oracle-a", "record.json"), "record file", maxStepFileSize); err != nil || string(b) != "{}" {
		t.Errorf("a plain record: %q, %v", b, err)
	}
	for _, c := range []struct{ step, want string }{
		{"oracle-b", "oracle-b is a symbolic link"},
		{"oracle-c", "has 2 hard links"},
		{"oracle-d", "record.json is a symbolic link"},
	} {
		b, err := readOut(out, filepath.Join(out, "runs", c.step, "record.json"), "record file", maxStepFileSize)
		if err == nil || len(b) > 0 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want a refusal saying %q", c.step, b, err, c.want)
		}
	}
}

// TestValuesChecked (issue 64, item 9): a sidecar's numbers get the
// records' bounds (train_s 1e-300 passed, then every record written from it
// was refused as damaged, and the suggested repair restored the same
// value); score.json's KLoM of −1e8, or a U-LiRA accuracy estimate of
// 1.16, is refused on read; record names with Markdown link and image
// syntax are escaped in RESULTS.md (in TestMarkdownEscapesNames too).
func TestValuesChecked(t *testing.T) {
	d := strings.Repeat("a", 64)
	side := func(extra string) []byte {
		return []byte(`{"onnx_sha256": "` + d + `", "data_sha256": "` + d + `"` + extra + `}`)
	}
	for _, c := range []struct{ extra, want string }{
		{`, "train_s": 1e-300`, "train_s 1e-300: want 0 (untimed) or a training time of at least 1e-06 s"},
		{`, "train_s": 2e9`, "train_s 2e+09: outside [0, 1e+09]"},
		{`, "train_s": -1`, "train_s -1: outside"},
		{`, "train_s": 100, "threads": -3`, "threads -3: want [0, 1024]"},
	} {
		if _, err := parseSidecar(side(c.extra), "oracle.json"); err == nil || !strings.Contains(err.Error(), "oracle.json: "+c.want) {
			t.Errorf("sidecar %s: %v, want %q", c.extra, err, c.want)
		}
	}
	if s, err := parseSidecar(side(`, "train_s": 100, "threads": 2, "machine": "m"`), "oracle.json"); err != nil || s.TrainS != 100 {
		t.Errorf("a good sidecar: %+v, %v", s, err)
	}

	files, _ := filepath.Glob("../../regimes/*/score/*/*/score.json")
	if len(files) == 0 {
		t.Fatal("no committed score.json: the test shows nothing")
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseScore(raw, files[0]); err != nil {
		t.Fatalf("a committed score.json: %v", err)
	}
	for _, c := range []struct {
		edit func(m map[string]any)
		want string
	}{
		{func(m map[string]any) { m["klom"].(map[string]any)["forget"].(map[string]any)["lo"] = -1e8 }, "klom.forget.lo -1e+08: outside [-12, 24]"},
		{func(m map[string]any) { m["klom"].(map[string]any)["forget"].(map[string]any)["estimate"] = -1e8 }, "klom.forget.estimate -1e+08: outside [0, 12]"},
		{func(m map[string]any) { m["klom"].(map[string]any)["retain"] = 40.0 }, "klom.retain 40: outside [0, 12]"},
		{func(m map[string]any) { m["ulira"].(map[string]any)["accuracy"].(map[string]any)["estimate"] = 1.16 }, "ulira.accuracy.estimate 1.16: outside [0, 1]"},
		{func(m map[string]any) { m["forget_quality"].(map[string]any)["hi"] = 7.0 }, "forget_quality.hi 7: outside [-1, 2]"},
	} {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		c.edit(m)
		b, _ := json.Marshal(m)
		if _, err := parseScore(b, "score.json"); !errors.Is(err, experiment.ErrRecords) || !strings.Contains(err.Error(), "score.json: "+c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}

	md := experiment.MarkdownText("![x](https://tracker.example/p.png) [click](https://e.example)")
	if strings.Contains(md, "](") && !strings.Contains(md, `\](`) || strings.Contains(md, "![") || strings.Contains(md, " [click]") {
		t.Errorf("Markdown link and image syntax kept: %s", md)
	}
}
