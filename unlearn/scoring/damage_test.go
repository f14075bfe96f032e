package scoring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

// goodTask is a task file of the folder tinyState sets up: oracle 0 with
// two forget examples, one retain and one test example.
func goodTask() string {
	return `{"schema": "` + schema.ScoreTaskSchema + `", "settings_sha256": "d", "kind": "oracle", "index": 0, "seed": 0,` +
		` "model_sha256": "` + strings.Repeat("ab", 32) + `",` +
		` "forget": {"margins": [0.5, -1], "correct": [1, 0], "svc_non_member": [0, 1]},` +
		` "retain": {"margins": [2], "correct": [1]}, "test": {"margins": [1], "correct": [1]},` +
		` "timings": {"train_s": 12.5, "eval_s": 0.25}}`
}

// tinyState is a folder (dir/tasks) whose audit has two forget examples and
// one retain and one test example, with its warnings collected in warns.
func tinyState(t testing.TB, warns *[]string) (*state, task) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tasks"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &state{dirs: map[string]string{schema.ScoreOracle: dir}, digest: map[string]string{schema.ScoreOracle: "d"},
		setup: schema.ScoreSetup{Forget: 2}, retain: []int{7}, test: []int{3}}
	r.job.Info = func(event, text string, _ ...any) {
		if warns != nil && event == "warning" {
			*warns = append(*warns, text)
		}
	}
	return r, task{schema.ScoreOracle, 0, 0}
}

// TestTaskFileValuesChecked: every value of a task file read back is
// checked against its range (issue 45, item 8: forget correct counts of
// 1000 and SVC verdicts of 7 gave a forget accuracy of 500.43 %), and the
// error names the file, the field and the repair.
func TestTaskFileValuesChecked(t *testing.T) {
	r, tk := tinyState(t, nil)
	if err := os.WriteFile(r.taskPath(tk), []byte(goodTask()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.readTask(tk); err != nil {
		t.Fatalf("good task file refused: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"correct": [1, 0]`, `"correct": [1000, 0]`, "forget.correct[0]: 1000, want 0 or 1"},
		{`"svc_non_member": [0, 1]`, `"svc_non_member": [0, 7]`, "forget.svc_non_member[1]: 7, want 0 or 1"},
		{`"svc_non_member": [0, 1]`, `"svc_non_member": [0]`, "forget.svc_non_member: 1 verdicts for 2 forget examples"},
		{`"retain": {"margins": [2], "correct": [1]}`, `"retain": {"margins": [2], "correct": [-7]}`, "retain.correct[0]: -7"},
		{`"margins": [0.5, -1]`, `"margins": [0.5, -1e308]`, "forget.margins[1]: -1e+308 is not a margin"},
		{`"test": {"margins": [1], "correct": [1]}`, `"test": {"margins": [1], "correct": [1], "svc_non_member": [1]}`, "test.svc_non_member: present"},
		{`"train_s": 12.5`, `"train_s": -7`, "timings.train_s: -7 seconds"},
		{`"eval_s": 0.25`, `"eval_s": 1e308`, "timings.eval_s: 1e+308 seconds"},
		{`"model_sha256": "ab`, `"model_sha256": "zz`, "model_sha256: "},
		{`"correct": [1, 0]`, `"correct": ["1", 0]`, "cannot unmarshal string"},
	} {
		b := strings.Replace(goodTask(), c.from, c.to, 1)
		if b == goodTask() {
			t.Fatalf("case %q: nothing replaced", c.want)
		}
		if err := os.WriteFile(r.taskPath(tk), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := r.readTask(tk)
		if err == nil || !errors.Is(err, ErrDamaged) || errors.Is(err, ErrCutShort) || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), r.taskPath(tk)) || !strings.Contains(err.Error(), "delete the file and run its task again") {
			t.Errorf("%s: error %v, want ErrDamaged naming the file, %q and the repair", c.to, err, c.want)
		}
		// A damaged file that is JSON is not taken for an interrupted
		// write: even a resume stops at it.
		if done, err := r.taskDone(tk, true); done || err == nil {
			t.Errorf("%s: taskDone = %v, %v, want an error", c.to, done, err)
		}
	}
}

// TestCutShortTaskRunsAgain: a task file cut short (issue 45, item 9: a
// truncated task file stopped a resume) is not done in a resume, which
// runs the task again with a warning naming the file; gathering stops at
// it, naming the file and how to repair it.
func TestCutShortTaskRunsAgain(t *testing.T) {
	var warns []string
	r, tk := tinyState(t, &warns)
	good := goodTask()
	for _, cut := range []string{good[:len(good)/2], "", "{"} {
		warns = nil
		if err := os.WriteFile(r.taskPath(tk), []byte(cut), 0o644); err != nil {
			t.Fatal(err)
		}
		r.job.Gather = false
		done, err := r.taskDone(tk, true)
		if done || err != nil {
			t.Fatalf("cut at %d bytes: taskDone = %v, %v; want not done, no error", len(cut), done, err)
		}
		if len(warns) != 1 || !strings.Contains(warns[0], r.taskPath(tk)) || !strings.Contains(warns[0], "running oracle 0 again") {
			t.Fatalf("cut at %d bytes: warnings %q, want one naming the file and the task", len(cut), warns)
		}
		// Another shard's task: not done, and no warning (its shard redoes it).
		warns = nil
		if done, err := r.taskDone(tk, false); done || err != nil || len(warns) != 0 {
			t.Fatalf("another shard's cut task: %v, %v, warnings %q", done, err, warns)
		}
		r.job.Gather = true
		_, err = r.taskDone(tk, false)
		if !errors.Is(err, ErrCutShort) || !strings.Contains(err.Error(), r.taskPath(tk)) || !strings.Contains(err.Error(), "delete the file and run its task again") {
			t.Fatalf("gathering a cut task: %v, want ErrCutShort naming the file and the repair", err)
		}
	}
}
