//go:build unix

package outfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// CheckResultsDir: a resumable results folder may exist, but not be a
// link, a file, an input, or lie inside a dataset, and its own entries may
// not be links.
func TestCheckResultsDir(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	model := filepath.Join(dir, "m.onnx")
	for _, p := range []string{filepath.Join(data, "class0"), filepath.Join(dir, "res"), filepath.Join(dir, "res2")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(model, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "res"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(dir, "res2", "tasks")); err != nil {
		t.Fatal(err)
	}
	ins := []Input{{Setting: "data", Path: data, Tree: true}, {Setting: "model", Path: model}}
	for _, c := range []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "res"), nil},
		{filepath.Join(dir, "new"), nil},
		{filepath.Join(data, "results"), ErrCollision},
		{data, ErrCollision},
		{model, ErrNotRegular},
		{filepath.Join(dir, "link"), ErrSymlink},
		{filepath.Join(dir, "res2"), ErrSymlink},
		{filepath.Join(dir, "nope", "res"), ErrFolder},
		{"/", ErrCollision},
		{"/.", ErrCollision},
	} {
		err := CheckResultsDir(Output{Setting: "results", Path: c.path}, ins, "tasks", "work")
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.path, err, c.want)
		}
	}
}

// TestCheckResultsDirLinkedDataset (issue 64, item 6): a dataset given as
// a symbolic link to its folder is compared by the folder it leads to: a
// results folder inside the real dataset folder is refused (experiment and
// score wrote into it), and one beside it is accepted.
func TestCheckResultsDirLinkedDataset(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "train"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "linkA")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	ins := []Input{{Name: "dataset " + link, Path: link, Tree: true}}
	for _, c := range []struct {
		path string
		want error
	}{
		{filepath.Join(data, "out"), ErrCollision},
		{filepath.Join(data, "train", "out"), ErrCollision},
		{data, ErrCollision},
		{filepath.Join(dir, "out"), nil},
	} {
		err := CheckResultsDir(Output{Setting: "results", Path: c.path}, ins)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.path, err, c.want)
		}
		if c.want != nil && (err == nil || !strings.Contains(err.Error(), "inside the dataset "+link)) {
			t.Errorf("%s: %v, want it to name the dataset %s", c.path, err, link)
		}
	}
	for _, p := range []string{filepath.Join(data, "out"), filepath.Join(data, "train", "out")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the check created %s", p)
		}
	}
}

// TestCheckResultsDirTestsTheFolder (issue 45, item 10): the writability
// asked of a results folder is the folder's own when it exists, and its
// parent's only when the run must create it there; a folder that is only
// read (CheckResultsSource, a gathering run) need not be writable. A
// stand-in for writable plays the read-only file system (root writes
// through permission bits); TestCheckResultsDirReadOnlyMount does the
// same on a real read-only mount.
func TestCheckResultsDirTestsTheFolder(t *testing.T) {
	dir := t.TempDir()
	parent := filepath.Join(dir, "mnt") // read-only, like / over a volume at /results
	results := filepath.Join(parent, "results")
	done := filepath.Join(parent, "done") // a finished audit on read-only storage
	for _, p := range []string{results, done} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	readOnly := map[string]bool{parent: true, done: true}
	probed := map[string]int{}
	old := writable
	writable = func(d string) error {
		probed[d]++
		if readOnly[d] {
			return syscall.EROFS
		}
		return nil
	}
	t.Cleanup(func() { writable = old })

	if err := CheckResultsDir(Output{Setting: "results", Path: results}, nil, "tasks"); err != nil {
		t.Errorf("a writable folder on a read-only parent: %v", err)
	}
	if probed[results] != 1 || probed[parent] != 0 {
		t.Errorf("probed %v, want the folder itself and not its parent", probed)
	}
	wantRefused(t, CheckResultsDir(Output{Setting: "results", Path: filepath.Join(parent, "new")}, nil), ErrFolder,
		"--results "+filepath.Join(parent, "new")+": does not exist and cannot be created: folder "+parent+" is not writable (read-only file system)")
	wantRefused(t, CheckResultsDir(Output{Setting: "results", Path: done}, nil), ErrFolder,
		"--results "+done+": folder is not writable (read-only file system)")
	clear(probed)
	if err := CheckResultsSource(Output{Setting: "results", Path: done}, nil, "tasks"); err != nil {
		t.Errorf("reading a finished audit on read-only storage: %v", err)
	}
	if len(probed) != 0 {
		t.Errorf("a folder only read was probed: %v", probed)
	}
	// The other rules still hold for a folder only read.
	if err := os.Symlink(done, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, CheckResultsSource(Output{Setting: "results", Path: filepath.Join(dir, "link")}, nil), ErrSymlink, "symbolic link")
}

// TestCheckResultsDirReadOnlyMount: the checks on a real read-only file
// system. The test runs itself again under unshare -m (a mount namespace
// of its own, gone when it exits), where mnt is bind-mounted read-only and
// mnt/results is a writable folder mounted over it; skipped where mounting
// is not allowed.
func TestCheckResultsDirReadOnlyMount(t *testing.T) {
	if root := os.Getenv("OUTFILE_RO_MOUNT"); root != "" {
		mnt := filepath.Join(root, "mnt")
		if err := os.WriteFile(filepath.Join(mnt, "x"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
			t.Fatalf("writing into the read-only mount: %v, want EROFS", err)
		}
		if err := CheckResultsDir(Output{Setting: "results", Path: filepath.Join(mnt, "results")}, nil, "tasks"); err != nil {
			t.Errorf("a writable folder on a read-only parent: %v", err)
		}
		wantRefused(t, CheckResultsDir(Output{Setting: "results", Path: filepath.Join(mnt, "new")}, nil), ErrFolder, "read-only file system")
		wantRefused(t, CheckResultsDir(Output{Setting: "results", Path: filepath.Join(mnt, "done")}, nil), ErrFolder, "folder is not writable (read-only file system)")
		if err := CheckResultsSource(Output{Setting: "results", Path: filepath.Join(mnt, "done")}, nil, "tasks"); err != nil {
			t.Errorf("reading a finished audit on read-only storage: %v", err)
		}
		t.Log("checked on the read-only mount")
		return
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	root := t.TempDir()
	for _, p := range []string{"mnt/results", "mnt/done", "w"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := `set -e; mount --bind "$1/mnt" "$1/mnt"; mount -o remount,bind,ro "$1/mnt"; mount --bind "$1/w" "$1/mnt/results"; ` +
		`exec "$2" -test.run '^TestCheckResultsDirReadOnlyMount$' -test.v -test.count=1`
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", root, os.Args[0])
	cmd.Env = append(os.Environ(), "OUTFILE_RO_MOUNT="+root)
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "--- ") {
		t.Skipf("cannot mount here: %v: %s", err, out)
	}
	if err != nil || !strings.Contains(string(out), "checked on the read-only mount") {
		t.Fatalf("on the read-only mount: %v\n%s", err, out)
	}
}
