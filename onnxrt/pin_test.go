//go:build linux

package onnxrt

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeLib compiles a shared library whose constructor appends its name to
// the file $UNLEARN_TEST_MARKER: loading it leaves a trace. It needs gcc,
// which cgo needs anyway.
func fakeLib(t *testing.T, dir, file, name string) string {
	t.Helper()
	src := filepath.Join(dir, name+".c")
	code := `#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void mark(void) {
	const char *p = getenv("UNLEARN_TEST_MARKER");
	FILE *f = p ? fopen(p, "a") : NULL;
	if (f) { fputs("` + name + `\n", f); fclose(f); }
}
`
	if err := os.WriteFile(src, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, file)
	if b, err := exec.Command("gcc", "-shared", "-fPIC", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	if err := os.Chmod(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// markers returns what the fake libraries' constructors wrote.
func markers(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestPinLoadsTheCheckedFile: a link swapped to another library between the
// trust check and the load (issue 64, item 2: a user flipping their own
// link inside a root-owned sticky folder) does not change what is loaded.
// The control loads by name after the same swap and gets the other
// library, which is what loading by name did.
func TestPinLoadsTheCheckedFile(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	t.Setenv("UNLEARN_TEST_MARKER", marker)
	checked := fakeLib(t, dir, "libchecked.so", "checked")
	swapped := fakeLib(t, dir, "libswapped.so", "swapped")
	link := filepath.Join(dir, "libpinned.so")
	if err := os.Symlink(checked, link); err != nil {
		t.Fatal(err)
	}
	swap := func(string) {
		tmp := link + ".new"
		if err := os.Symlink(swapped, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Fatal(err)
		}
	}
	afterCheck = swap
	defer func() { afterCheck = nil }()
	name, err := pin(link)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "/proc/self/fd/") {
		t.Fatalf("pin gave %q, want a /proc/self/fd name", name)
	}
	if err := dlopenGlobal(name); err != nil {
		t.Fatal(err)
	}
	if got := markers(t, marker); got != "checked" {
		t.Fatalf("pinned load ran %q, want the checked library only", got)
	}
	// Control: the same link, loaded by name, now runs the other library.
	if err := dlopenGlobal(link); err != nil {
		t.Fatal(err)
	}
	if got := markers(t, marker); got != "checked\nswapped" {
		t.Fatalf("control: loading the swapped link by name ran %q, want checked then swapped", got)
	}
}

// TestPinRefusesReplacedFile: the checked file itself replaced (renamed
// over) before it is opened is refused, naming the path, rather than
// loaded.
func TestPinRefusesReplacedFile(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	t.Setenv("UNLEARN_TEST_MARKER", marker)
	lib := fakeLib(t, dir, "libreplaced.so", "original")
	other := fakeLib(t, dir, "libother.so", "intruder")
	afterCheck = func(string) {
		if err := os.Rename(other, lib); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { afterCheck = nil }()
	_, err := pin(lib)
	wantRefused(t, err, lib, "replaced")
	if got := markers(t, marker); got != "" {
		t.Fatalf("a refused library ran %q", got)
	}
}

// TestPinLinkedFolder: the GPU build's links sit in a private folder of the
// current user's, under each library's own name, and lead to the pinned
// files; RemovePinned removes the folder.
func TestPinLinkedFolder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	a := fakeLib(t, dir, "liba.so", "a")
	b := fakeLib(t, dir, "libb.so", "b")
	names, err := pinLinked([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	defer RemovePinned()
	folder := filepath.Dir(names[0])
	fi, err := os.Stat(folder)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("private folder %s: %v, mode %v; want 0700", folder, err, fi.Mode().Perm())
	}
	for i, p := range []string{a, b} {
		if filepath.Base(names[i]) != filepath.Base(p) || filepath.Dir(names[i]) != folder {
			t.Errorf("link %s for %s: want %s in one folder", names[i], p, filepath.Base(p))
		}
		target, err := os.Readlink(names[i])
		if err != nil || !strings.HasPrefix(target, "/proc/self/fd/") {
			t.Errorf("link %s leads to %q (%v), want a /proc/self/fd name", names[i], target, err)
		}
		fa, _ := os.Stat(p)
		fb, err := os.Stat(names[i])
		if err != nil || !os.SameFile(fa, fb) {
			t.Errorf("link %s does not reach %s", names[i], p)
		}
	}
	RemovePinned()
	if _, err := os.Lstat(folder); !os.IsNotExist(err) {
		t.Fatalf("RemovePinned left %s (%v)", folder, err)
	}
}

// TestPinLinkedRefusesOpenTempDir: a temporary folder that others may write
// without the sticky bit could have the private folder renamed away and
// replaced; pinLinked refuses it, naming TMPDIR.
func TestPinLinkedRefusesOpenTempDir(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", open)
	a := fakeLib(t, dir, "liba.so", "a")
	_, err := pinLinked([]string{a})
	wantRefused(t, err, open, "TMPDIR")
}

// TestSafeLibraryPath: the entries the loader would read from the working
// directory, or from folders other users control, are left out; the rest
// are kept in order.
func TestSafeLibraryPath(t *testing.T) {
	mine := t.TempDir()
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o1777); err != nil { // sticky does not help: anyone may add a library
		t.Fatal(err)
	}
	missing := filepath.Join(mine, "absent")
	keep, dropped := safeLibraryPath(mine + "::lib:" + open + ":" + missing + ":")
	if strings.Join(keep, ":") != mine+":"+missing {
		t.Errorf("kept %q, want %s and %s", keep, mine, missing)
	}
	var got []string
	for _, d := range dropped {
		got = append(got, d.String())
	}
	want := []string{`"" (empty: the working directory)`, `"lib" (relative: read from the working directory)`,
		`"` + open + `" (writable by group or others, mode 0777)`, `"" (empty: the working directory)`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("dropped\n %q\nwant\n %q", got, want)
	}
	if keep, dropped := safeLibraryPath("/usr/lib:/lib"); len(dropped) != 0 || len(keep) != 2 {
		t.Errorf("system folders: kept %q, dropped %v", keep, dropped)
	}
}

// TestSetupRefusesUnsafeLibraryPath: in a process that started with an
// empty LD_LIBRARY_PATH entry (a library user that did not re-execute, as
// the command does), Setup loads nothing and says which entry to remove.
func TestSetupRefusesUnsafeLibraryPath(t *testing.T) {
	lib := os.Getenv("ONNXRUNTIME_LIB")
	if lib == "" {
		_, file, _, _ := runtime.Caller(0)
		lib = filepath.Join(filepath.Dir(file), "..", ".ort", LibName)
	}
	if !fileExists(lib) {
		t.Skip("no ONNX Runtime library: ONNXRUNTIME_LIB unset and no .ort/")
	}
	if os.Getenv(childEnv) == t.Name() {
		err := Setup(Options{LibPath: lib})
		wantRefused(t, err, `"" (empty: the working directory)`, "remove it from LD_LIBRARY_PATH")
		if Version() != "" {
			t.Fatal("the runtime was loaded")
		}
		return
	}
	runChild(t, t.Name(), "LD_LIBRARY_PATH=/nonexistent:")
}
