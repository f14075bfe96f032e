//go:build unix

package outfile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
)

func write(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantRefused checks that err is an *Error of kind with every part in its text.
func wantRefused(t *testing.T, err error, kind error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want a refusal (%v)", kind)
	}
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("error %q (%T); want an *Error of kind %v", err, err, kind)
	}
	msg := flagtext.Render(err) // as the command prints it
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not contain %q", msg, p)
		}
	}
}

func TestCheckAcceptsNewAndExistingFiles(t *testing.T) {
	dir := t.TempDir()
	in := write(t, filepath.Join(dir, "ids.txt"), "1\n")
	old := write(t, filepath.Join(dir, "old.json"), "{}")
	err := Check([]Output{{Setting: "out", Path: filepath.Join(dir, "new.onnx")}, {Setting: "metrics", Path: old}, {Setting: "json", Path: "-"}, {Setting: "report"}},
		[]Input{{Setting: "forget", Path: in}})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries after Check; want the 2 files (the probe removed)", len(ents))
	}
}

func TestCheckRefusesInputs(t *testing.T) {
	dir := t.TempDir()
	ids := write(t, filepath.Join(dir, "ids.txt"), "1\n2\n")
	hard := filepath.Join(dir, "hard.txt")
	if err := os.Link(ids, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(dir, "soft.txt")
	if err := os.Symlink(ids, soft); err != nil {
		t.Fatal(err)
	}
	// A folder reached through a symbolic link: the same file by another
	// name that does not exist yet is caught by the resolved path.
	linkDir := filepath.Join(dir, "via")
	if err := os.Symlink(dir, linkDir); err != nil {
		t.Fatal(err)
	}
	inputs := []Input{{Setting: "model", Path: filepath.Join(dir, "m.onnx")}, {Setting: "forget", Path: ids}}
	for _, c := range []struct{ name, out string }{
		{"same path", ids},
		{"relative and unclean path", filepath.Join(dir, ".", "x", "..", "ids.txt")},
		{"hard link", hard},
		{"through a linked folder", filepath.Join(linkDir, "ids.txt")},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check([]Output{{Setting: "metrics", Path: c.out}}, inputs)
			wantRefused(t, err, ErrCollision, "--metrics "+c.out, "is the --forget input", "never overwrite inputs")
		})
	}
	// The input given as a symbolic link, the output as its target.
	err := Check([]Output{{Setting: "json", Path: ids}}, []Input{{Setting: "forget", Path: soft}})
	wantRefused(t, err, ErrCollision, "--json", "--forget")
	// An input that does not exist yet, by a path through a linked folder.
	err = Check([]Output{{Setting: "out", Path: filepath.Join(linkDir, "m.onnx")}}, inputs)
	wantRefused(t, err, ErrCollision, "is the --model input")
	// A positional input.
	err = Check([]Output{{Setting: "json", Path: ids}}, []Input{{Name: "model argument", Path: hard}})
	wantRefused(t, err, ErrCollision, "is the model argument")
	if b, _ := os.ReadFile(ids); string(b) != "1\n2\n" {
		t.Errorf("input changed: %q", b)
	}
}

func TestCheckRefusesOutputsInsideData(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "train"), 0o755); err != nil {
		t.Fatal(err)
	}
	img := write(t, filepath.Join(data, "train", "0.png"), "png")
	outside := write(t, filepath.Join(dir, "r.html"), "old")
	inputs := []Input{{Setting: "data", Path: data, Tree: true}}
	for _, out := range []string{img, filepath.Join(data, "new.json"), filepath.Join(data, "train", "new.json")} {
		wantRefused(t, Check([]Output{{Setting: "report", Path: out}}, inputs), ErrCollision, "--report "+out, "inside the --data input folder")
	}
	// A hard link to a data file outside the folder is still that file.
	link := filepath.Join(dir, "link.png")
	if err := os.Link(img, link); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, Check([]Output{{Setting: "report", Path: link}}, inputs), ErrCollision, "same file as "+img)
	if err := Check([]Output{{Setting: "report", Path: outside}}, inputs); err != nil {
		t.Errorf("an output beside the data folder: %v", err)
	}
	// A dataset file (not a folder) is compared as a file.
	npz := write(t, filepath.Join(dir, "d.npz"), "PK")
	wantRefused(t, Check([]Output{{Setting: "json", Path: npz}}, []Input{{Setting: "data", Path: npz, Tree: true}}), ErrCollision, "is the --data input")
}

func TestCheckRefusesTwoOutputsInOneFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	err := Check([]Output{{Setting: "out", Path: out}, {Setting: "metrics", Path: filepath.Join(dir, "u.onnx"), Note: "default: beside --out"}}, nil)
	wantRefused(t, err, ErrCollision, "--metrics "+out+" (default: beside --out)", "is also the --out output "+out)
	// Existing hard links are one file.
	a := write(t, filepath.Join(dir, "a.json"), "{}")
	b := filepath.Join(dir, "b.html")
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, Check([]Output{{Setting: "json", Path: a}, {Setting: "report", Path: b}}, nil), ErrCollision, "--report", "--json")
}

func TestCheckRefusesSymlinkOutput(t *testing.T) {
	dir := t.TempDir()
	target := write(t, filepath.Join(dir, "target.json"), "keep")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, dangling} {
		wantRefused(t, Check([]Output{{Setting: "json", Path: p}}, nil), ErrSymlink, "--json "+p, "symbolic link", "pass the target path")
		if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link (%v)", p, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("link target changed: %q", b)
	}
}

func TestCheckRefusesSpecialFiles(t *testing.T) {
	st, err := os.Stat(os.DevNull)
	if err != nil {
		t.Skipf("%s: %v", os.DevNull, err)
	}
	wantRefused(t, Check([]Output{{Setting: "metrics", Path: os.DevNull}}, nil), ErrNotRegular, "--metrics /dev/null", "character device", "regular file")
	if after, err := os.Stat(os.DevNull); err != nil || after.Mode() != st.Mode() || !os.SameFile(st, after) {
		t.Errorf("/dev/null changed: %v %v", after.Mode(), err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, Check([]Output{{Setting: "json", Path: fifo}}, nil), ErrNotRegular, "--json "+fifo, "FIFO")
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced (%v)", err)
	}
	folder := t.TempDir()
	wantRefused(t, Check([]Output{{Setting: "out", Path: folder}}, nil), ErrNotRegular, "is a folder")
}

func TestCheckFolders(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "x.json")
	wantRefused(t, Check([]Output{{Setting: "json", Path: missing}}, nil), ErrFolder, "folder "+filepath.Dir(missing)+" does not exist")
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if f, err := os.CreateTemp(ro, "p"); err == nil { // root writes through mode bits
		f.Close()
		os.Remove(f.Name())
		t.Log("running as root: the not-writable case is covered by the command's tests (/sys)")
	} else {
		wantRefused(t, Check([]Output{{Setting: "out", Path: filepath.Join(ro, "x")}}, nil), ErrFolder, "not writable")
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	model := write(t, filepath.Join(dir, "m.onnx"), "model")
	if err := CheckDir(Output{Setting: "out", Path: filepath.Join(dir, "new")}, nil); err != nil {
		t.Errorf("an absent folder: %v", err)
	}
	wantRefused(t, CheckDir(Output{Setting: "out", Path: model}, []Input{{Setting: "model", Path: model}}), ErrCollision, "is the --model input")
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o755)
	write(t, filepath.Join(full, "x"), "")
	wantRefused(t, CheckDir(Output{Setting: "out", Path: full}, nil), ErrNotRegular, "not empty")
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(empty, link)
	wantRefused(t, CheckDir(Output{Setting: "out", Path: link}, nil), ErrSymlink, "symbolic link")
	wantRefused(t, CheckDir(Output{Setting: "out", Path: filepath.Join(dir, "no", "a")}, nil), ErrFolder, "does not exist")
}

// withUmask runs f under umask m.
func withUmask(m int, f func()) {
	old := syscall.Umask(m)
	defer syscall.Umask(old)
	f()
}

func TestWriteFileRespectsUmask(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o077, 0o600}, {0o022, 0o644}, {0o002, 0o664}} {
		p := filepath.Join(dir, "f.json")
		os.Remove(p)
		var err error
		withUmask(c.umask, func() { err = WriteFile(p, []byte("x")) })
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != c.want {
			t.Errorf("umask %03o: mode %v (%v); want %v", c.umask, st.Mode().Perm(), err, c.want)
		}
		var d string
		withUmask(c.umask, func() { d, err = TempDir(filepath.Join(dir, "art")) })
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != c.want|0o111&^os.FileMode(c.umask) {
			t.Errorf("umask %03o: folder mode %v (%v)", c.umask, st.Mode().Perm(), err)
		}
		os.Remove(d)
		Untrack(d)
	}
}

func TestWriteFileReplacesAndLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	p := write(t, filepath.Join(dir, "a.json"), "old")
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries; want only a.json", len(ents))
	}
	tracked := 0
	temps.Range(func(_, _ any) bool { tracked++; return true })
	if tracked != 0 {
		t.Errorf("%d temporaries still tracked", tracked)
	}
}

func TestWriteFilesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a := write(t, filepath.Join(dir, "a.json"), "old a")
	missing := filepath.Join(dir, "no", "b.html")
	if err := WriteFiles(map[string][]byte{a: []byte("new a"), missing: []byte("b")}); err == nil {
		t.Fatal("wrote into a missing folder")
	}
	if b, _ := os.ReadFile(a); string(b) != "old a" {
		t.Errorf("a.json changed to %q although the set failed", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries; want only a.json", len(ents))
	}
}

func TestRemoveTrackedRemovesTemporaries(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "m.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	d, err := TempDir(filepath.Join(dir, "art"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, "training.onnx"), "x")
	RemoveTracked()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d entries left after RemoveTracked", len(ents))
	}
	f.Abort() // closes the file; nothing left to remove
}

// deadPID returns the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("running true: %v", err)
	}
	pid := cmd.Process.Pid
	if alive(pid) {
		t.Skipf("PID %d was reused", pid)
	}
	return pid
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "u.onnx")
	dead, live := deadPID(t), os.Getpid()
	// PID stands for the process's PID and this host's tag; OLD for a PID
	// alone (an earlier version's names); OTHER for a PID on another host
	// (or in another container's PID namespace).
	name := func(format string, pid int) string {
		format = strings.ReplaceAll(format, "OTHER", strconv.Itoa(pid)+".zzzzzzzz")
		format = strings.ReplaceAll(format, "OLD", strconv.Itoa(pid))
		return filepath.Join(dir, strings.ReplaceAll(format, "PID", strconv.Itoa(pid)+"."+hostTag))
	}
	stale := []string{name(".u.onnx.partial-PID", dead), name(".u.onnx.tmp-PID-k3x9", dead), name("..u.onnx.partial-PID.tmp-PID-1a", dead),
		name(".u.onnx.tmp-OLD-k3x9", dead), name("..u.onnx.partial-OLD.tmp-OLD-1a", dead)}
	kept := []string{
		name(".u.onnx.partial-PID", live), name(".u.onnx.tmp-PID-zz", live), // a run in flight
		name(".v.onnx.partial-PID", dead),                                       // another output's
		name(".u.onnx.partial-PID.bak", dead), name("u.onnx.partial-PID", dead), // not our pattern
		name(".u.onnx.tmp-PID", dead), // not our pattern (no random part)
		// Another host's (another pod's) temporaries: their PID cannot be
		// judged here, so they are kept even when no such PID runs here.
		name(".u.onnx.partial-OTHER", dead), name(".u.onnx.tmp-OTHER-k3x9", dead), name("..u.onnx.partial-OTHER.tmp-OTHER-1a", dead),
	}
	if len(hostTag) != 8 || hostTag == "zzzzzzzz" {
		t.Fatalf("host tag %q", hostTag)
	}
	for _, p := range append(append([]string{}, stale...), kept...) {
		write(t, p, "x")
	}
	got := RemoveStale(final)
	if len(got) != len(stale) {
		t.Errorf("removed %v; want %v", got, stale)
	}
	for _, p := range stale {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s kept; its process is gone", filepath.Base(p))
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
	// Writing the output removes the stale temporaries too.
	write(t, stale[0], "x")
	if err := WriteFile(final, []byte("m")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale[0]); err == nil {
		t.Errorf("WriteFile left %s", filepath.Base(stale[0]))
	}
	if got := Stage(final); got != name(".u.onnx.partial-PID", live) {
		t.Errorf("Stage = %s", got)
	}
}

// TestCrashMidWrite kills a process (this test binary, re-run) while it
// writes over a file: the file keeps its old content, and the next write
// removes the dead process's temporary file.
func TestCrashMidWrite(t *testing.T) {
	if p := os.Getenv("OUTFILE_CRASH_TARGET"); p != "" {
		f, err := Create(p)
		if err != nil {
			os.Exit(3)
		}
		f.Write(bytes.Repeat([]byte("n"), 1<<16))
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	dir := t.TempDir()
	target := write(t, filepath.Join(dir, "metrics.json"), "old")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashMidWrite$")
	cmd.Env = append(os.Environ(), "OUTFILE_CRASH_TARGET="+target)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the writer was not killed: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("target holds %d bytes after the crash; want the old content", len(b))
	}
	ents, _ := os.ReadDir(dir)
	prefix := ".metrics.json.tmp-" + strconv.Itoa(cmd.Process.Pid) + "." + hostTag + "-"
	if len(ents) != 2 || !strings.HasPrefix(ents[1].Name(), prefix) && !strings.HasPrefix(ents[0].Name(), prefix) {
		t.Fatalf("entries after the crash: %v; want metrics.json and the killed process's temporary", ents)
	}
	if err := WriteFile(target, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("entries after the rerun: %v; want only metrics.json", ents)
	}
}

// TestCheckRefusesNamesWithoutRoomForTemporaries: a 250-byte output name
// fits the file system but not the temporary written beside it; it is
// refused before the work instead of failing after it.
func TestCheckRefusesNamesWithoutRoomForTemporaries(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("a", 245)+".onnx")
	err := Check([]Output{{Setting: "--out", Path: long}}, nil)
	if err == nil || !strings.Contains(err.Error(), "file name of 250 bytes") || !strings.Contains(flagtext.Render(err), "--out") {
		t.Errorf("250-byte name: %v", err)
	}
	ok := filepath.Join(dir, strings.Repeat("a", maxNameLen-maxTempExtra-5)+".onnx")
	if err := Check([]Output{{Setting: "--out", Path: ok}}, nil); err != nil {
		t.Errorf("a name that leaves room: %v", err)
	}
	// The longest temporary of that name is indeed creatable.
	if f, err := os.Create(filepath.Join(dir, ".."+filepath.Base(ok)+".partial-4194304.zzzzzzzz.tmp-4194304.zzzzzzzz-"+strings.Repeat("z", 13))); err != nil {
		t.Errorf("longest temporary: %v", err)
	} else {
		f.Close()
	}
}

// TestLockDir: while one holder has the folder's lock, another cannot take
// it; after the release it can, and no file is left in the folder.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !lockedByOther(dir) {
		t.Error("the lock is not seen by another open file")
	}
	got := make(chan struct{})
	go func() {
		u, err := LockDir(dir)
		if err == nil {
			u()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a second LockDir did not wait")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the second LockDir still waits after the release")
	}
	if lockedByOther(dir) {
		t.Error("still locked after both released")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left: %v", ents)
	}
}
