package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/schema"
)

// tinyFashion writes the first nTrain training and nTest test examples of
// the bundled Fashion-MNIST subset as an IDX folder, and a forget list of
// every 15th training example.
func tinyFashion(t *testing.T, nTrain, nTest int) (dir, forget string) {
	t.Helper()
	src := testutil.Testdata(t, "fashion")
	dir = filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		n    int
		img  bool
	}{{"train-images-idx3-ubyte", nTrain, true}, {"train-labels-idx1-ubyte", nTrain, false},
		{"t10k-images-idx3-ubyte", nTest, true}, {"t10k-labels-idx1-ubyte", nTest, false}} {
		fh, err := os.Open(filepath.Join(src, f.name+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(fh)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		head, per := 8, 1
		if f.img {
			head = 16
			per = int(binary.BigEndian.Uint32(b[8:12]) * binary.BigEndian.Uint32(b[12:16]))
		}
		out := append([]byte{}, b[:head+f.n*per]...)
		binary.BigEndian.PutUint32(out[4:8], uint32(f.n))
		if err := os.WriteFile(filepath.Join(dir, f.name), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ids bytes.Buffer
	for i := 0; i < nTrain; i += 15 {
		fmt.Fprintln(&ids, i)
	}
	return dir, writeFile(t, "forget.txt", ids.Bytes())
}

// scoreJSON reads a score.json without its timings (every "timings"
// object) and the folder-specific paths.
func scoreJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "timings")
			for _, c := range x {
				strip(c)
			}
		case []any:
			for _, c := range x {
				strip(c)
			}
		}
	}
	strip(m)
	return m
}

// TestScoreShardsEqualOneProcess: a K = 4 audit run as 4 shards in
// separate processes (one taking its index from JOB_COMPLETION_INDEX, as a
// Kubernetes Indexed Job sets it, one from SLURM_ARRAY_TASK_ID, as a Slurm
// job array does), then gathered, scores exactly as one
// process does; a rerun finds every task cached; other settings on the
// same folder are refused, naming the difference.
func TestScoreShardsEqualOneProcess(t *testing.T) {
	testutil.RequireORT(t)
	data, forget := tinyFashion(t, 300, 200)
	root := t.TempDir()
	args := func(dir string, extra ...string) []string {
		base := []string{"score", "--model", model(t), "--data", data, "--forget", forget, "--method", "finetune", "--epochs", "1",
			"--k", "4", "--train-epochs", "1", "--threads", "1", "--retain-sample", "100", "--test-sample", "80", "--allow-chance",
			"--bootstrap", "50", "--results", dir}
		// A flag of extra with a value replaces the base's (a flag given
		// twice with two values is refused: issue 64, item 10).
		for i := 0; i+1 < len(extra); i++ {
			if j := slices.Index(base, extra[i]); j > 0 && j+1 < len(base) && !strings.HasPrefix(base[j+1], "--") {
				base[j+1] = extra[i+1]
				extra = slices.Delete(extra, i, i+2)
				i--
			}
		}
		return append(base, extra...)
	}
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "JOB_COMPLETION_INDEX=") && !strings.HasPrefix(e, "SLURM_ARRAY_TASK_ID=") {
			env = append(env, e)
		}
	}
	sharded, single := filepath.Join(root, "sharded"), filepath.Join(root, "single")
	var wg sync.WaitGroup
	errs := make([]string, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := args(sharded, "--shards", "4")
			cmd := exec.Command(binPath, a...)
			cmd.Env = env
			switch i {
			case 0:
				// A copy each: two appends to env itself could share its
				// spare capacity, and one shard would get the other's index.
				cmd.Env = slices.Concat(env, []string{"JOB_COMPLETION_INDEX=0"})
			case 1:
				cmd.Env = slices.Concat(env, []string{"SLURM_ARRAY_TASK_ID=1"})
			default:
				cmd.Args = append(cmd.Args, "--shard", fmt.Sprint(i))
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("shard %d: %v: %s", i, err, out)
			} else if n := strings.Count(string(out), " running"); n != 2 ||
				!strings.Contains(string(out), fmt.Sprintf("oracle %d ", i)) || !strings.Contains(string(out), fmt.Sprintf("unlearned %d ", i)) {
				errs[i] = fmt.Sprintf("shard %d ran %d tasks, want 2 (oracle %d, unlearned %d): %s", i, n, i, i, out)
			}
		}()
	}
	// Meanwhile, the same audit in one process.
	r := runCLI(t, args(single)...)
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
	if r.code != 0 {
		t.Fatalf("single process: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(sharded, "score.json")); err == nil {
		t.Fatal("a shard wrote score.json; only the gathering step scores")
	}
	g := runCLI(t, args(sharded, "--gather")...)
	if g.code != 0 {
		t.Fatalf("gather: exit %d: %s", g.code, g.stderr)
	}
	a, b := scoreJSON(t, filepath.Join(sharded, "score.json")), scoreJSON(t, filepath.Join(single, "score.json"))
	if !reflect.DeepEqual(a, b) {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		t.Fatalf("sharded and single-process scores differ:\n%.2000s\n%.2000s", ja, jb)
	}
	var rep schema.ScoreReport
	raw, _ := os.ReadFile(filepath.Join(single, "score.json"))
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Schema != schema.ScoreSchema || len(rep.Models) != 8 || len(rep.Forget) != 20 || len(rep.Retain) != 100 || len(rep.Test) != 80 ||
		rep.FinalScore == nil || rep.Settings.Setup.K != 4 || rep.MaxEpsilon != 2 {
		t.Fatalf("score.json: schema %q, %d models, %d/%d/%d examples, K %d, max ε %g", rep.Schema, len(rep.Models),
			len(rep.Forget), len(rep.Retain), len(rep.Test), rep.Settings.Setup.K, rep.MaxEpsilon)
	}
	// U-LiRA from K = 4: two folds of two models, two shadows per side.
	if u := rep.ULiRA; u == nil || u.Folds != 2 || u.Shadows != 2 || u.Targets != 4 || u.Variance != "global" ||
		!(u.Accuracy.Lo <= u.Accuracy.Estimate && u.Accuracy.Estimate <= u.Accuracy.Hi) {
		t.Fatalf("score.json's U-LiRA: %+v", u)
	}
	for _, e := range rep.Forget {
		if e.ULiRA == nil || *e.ULiRA < 0 || *e.ULiRA > 1 || math.Mod(*e.ULiRA*8, 1) != 0 {
			t.Fatalf("forget example %d: U-LiRA accuracy %v, want a multiple of 1/8", e.ID, e.ULiRA)
		}
	}
	if html, err := os.ReadFile(filepath.Join(single, "score.html")); err != nil || !bytes.Contains(html, []byte("data:image/png;base64,")) ||
		!bytes.Contains(html, []byte("ε against the SVC MIA")) || !bytes.Contains(html, []byte("called non-member")) || !bytes.Contains(html, []byte("U-LiRA accuracy")) {
		t.Fatalf("score.html: %v", err)
	}
	// The SVC MIA's per-example verdicts: each side's share per forget
	// example is the mean of its tasks' verdicts, and their mean is the
	// side's SVC MIA.
	if rep.SVCMIA.Unlearned == nil || rep.SVCMIA.Retrained == nil {
		t.Fatal("score.json without the SVC MIA per side")
	}
	for _, side := range []struct {
		kind  string
		share func(schema.ScoreForgetExample) *float64
		mia   float64
	}{{"oracle", func(e schema.ScoreForgetExample) *float64 { return e.RetrainedSVCNonMember }, *rep.SVCMIA.Retrained},
		{"unlearned", func(e schema.ScoreForgetExample) *float64 { return e.UnlearnedSVCNonMember }, *rep.SVCMIA.Unlearned}} {
		sum := make([]float64, len(rep.Forget))
		for k := range 4 {
			var task schema.ScoreTask
			b, _ := os.ReadFile(filepath.Join(single, "tasks", fmt.Sprintf("%s-%04d.json", side.kind, k)))
			if err := json.Unmarshal(b, &task); err != nil || len(task.Forget.SVCNonMember) != len(rep.Forget) {
				t.Fatalf("%s %d: %v, %d verdicts", side.kind, k, err, len(task.Forget.SVCNonMember))
			}
			for i, v := range task.Forget.SVCNonMember {
				sum[i] += float64(v) / 4
			}
		}
		total := 0.0
		for i, e := range rep.Forget {
			if p := side.share(e); p == nil || math.Abs(*p-sum[i]) > 1e-12 {
				t.Fatalf("%s: example %d: share %v, want %g", side.kind, e.ID, p, sum[i])
			}
			total += sum[i] / float64(len(rep.Forget))
		}
		if math.Abs(total-side.mia) > 1e-12 {
			t.Fatalf("%s: SVC MIA %g, want the mean share %g", side.kind, side.mia, total)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(single, "work")); len(entries) != 0 {
		t.Errorf("work folder not emptied: %v", entries)
	}
	// Resumed: every task cached, the same score.
	r = runCLI(t, args(single)...)
	if r.code != 0 || strings.Contains(r.stderr, " running") || strings.Count(r.stderr, " cached") != 8 {
		t.Fatalf("rerun: exit %d, want every task cached: %s", r.code, r.stderr)
	}
	if c := scoreJSON(t, filepath.Join(single, "score.json")); !reflect.DeepEqual(c, b) {
		t.Fatal("the resumed run scored differently")
	}

	// Another method's audit reuses the folder's oracles (--oracles): it
	// runs its 4 unlearned tasks only, and its retrained side is the same.
	other := filepath.Join(root, "other")
	r = runCLI(t, args(other, "--epochs", "2", "--oracles", single)...)
	if r.code != 0 || strings.Count(r.stderr, " running") != 4 || strings.Count(r.stderr, " cached") != 4 {
		t.Fatalf("second method on shared oracles: exit %d, want 4 tasks run and the 4 oracles cached: %s", r.code, r.stderr)
	}
	var rep2 schema.ScoreReport
	raw2, _ := os.ReadFile(filepath.Join(other, "score.json"))
	if err := json.Unmarshal(raw2, &rep2); err != nil {
		t.Fatal(err)
	}
	if rep2.Accuracy.Retrained != rep.Accuracy.Retrained || rep2.Settings.Setup.Method.Config["Epochs"] != 2.0 {
		t.Fatalf("shared oracles: retrained accuracy %+v, want %+v; method config %v", rep2.Accuracy.Retrained, rep.Accuracy.Retrained, rep2.Settings.Setup.Method.Config)
	}
	// Oracles of another recipe are refused, naming the difference.
	r = runCLI(t, args(filepath.Join(root, "third"), "--train-epochs", "2", "--oracles", single)...)
	wantError(t, r, exitError, "results folder mismatch", "oracles.json", "recipe.epochs: 1 ≠ 2")

	// Other settings on the folder: refused before any work, naming them.
	r = runCLI(t, args(sharded, "--k", "5", "--train-epochs", "2", "--gather")...)
	wantError(t, r, exitError, "results folder mismatch", "k: 4 ≠ 5", "recipe.epochs: 1 ≠ 2")
	r = runCLI(t, args(sharded, "--epochs", "2", "--gather")...)
	wantError(t, r, exitError, "method.config.Epochs: 1 ≠ 2")
	// Gathering a folder with tasks missing names them.
	partial := filepath.Join(root, "partial")
	if err := os.MkdirAll(partial, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"settings.json", "oracles.json"} {
		b, err := os.ReadFile(filepath.Join(sharded, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(partial, f), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	r = runCLI(t, args(partial, "--gather")...)
	wantError(t, r, exitError, "tasks without a result", "oracle 0", "unlearned 3")
	// Gathering a folder that holds no audit (a mistyped path) says so and
	// creates nothing there.
	empty := filepath.Join(root, "empty")
	r = runCLI(t, args(empty, "--gather")...)
	wantError(t, r, exitError, "settings.json", "no audit to gather")
	if _, err := os.Lstat(empty); err == nil {
		t.Errorf("%s exists after a refused --gather", empty)
	}
	// A shard without the number of shards is a usage error.
	r = runCLI(t, args(filepath.Join(root, "x"), "--shard", "1")...)
	wantError(t, r, exitUsage, "--shard 1", "--shards")
}

// TestScoreResultsInsideData: a results folder inside the dataset (which
// would gain tasks/ and work/ folders, new "classes" of an image folder) or
// a symbolic link is refused before any work, and nothing is created.
func TestScoreResultsInsideData(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "fashion")
	if err := os.CopyFS(data, os.DirFS(filepath.Join(testutil.RepoRoot(t), "testdata", "fashion"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		results, why string
		code         int
	}{
		{filepath.Join(data, "results"), "inside the --data input", exitUsage},
		{filepath.Join(dir, "link"), "symbolic link", exitError},
	} {
		r := runCLI(t, "score", "--model", "testdata/resnet_small_train.onnx", "--forget", "testdata/demo/forget_nonIID.txt",
			"--data", data, "--k", "2", "--results", c.results)
		wantError(t, r, c.code, "--results", c.why)
	}
	if _, err := os.Stat(filepath.Join(data, "results")); err == nil {
		t.Error("a results folder was created inside the dataset")
	}
}
