//go:build unix

package onnxrt

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
)

// writeLib writes a stand-in library file at p with exactly the given mode
// (umask does not apply), creating its folder.
func writeLib(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("\x7fELF stand-in"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// wantRefused checks that err wraps ErrLibrary and names every string in want.
func wantRefused(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil || !errors.Is(err, ErrLibrary) {
		t.Fatalf("want a refusal wrapping ErrLibrary, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(flagtext.Render(err), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

// plantParentLib makes root/.ort/libonnxruntime.so.1 (a well-formed,
// trusted-looking file) and moves the working directory to root/a/b, with
// ONNXRUNTIME_LIB unset: the layout the old parent search picked up.
func plantParentLib(t *testing.T) (root, planted string) {
	t.Helper()
	root = t.TempDir()
	planted = filepath.Join(root, ".ort", LibName)
	writeLib(t, planted, 0o644)
	child := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(child, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ONNXRUNTIME_LIB", "")
	t.Chdir(child)
	return root, planted
}

// The working directory and its parents are never searched: a library in
// <parent>/.ort/ is neither returned nor named in the "not found" error.
func TestResolveLibraryIgnoresWorkingDirectory(t *testing.T) {
	root, planted := plantParentLib(t)
	for _, wd := range []string{filepath.Join(root, "a", "b"), root} {
		t.Chdir(wd)
		p, _, err := ResolveLibrary("")
		if p == planted {
			t.Fatalf("cwd %s: ResolveLibrary returned the planted %s", wd, planted)
		}
		if err != nil && strings.Contains(err.Error(), root) {
			t.Errorf("cwd %s: error %q names the planted folder %s", wd, err, root)
		}
	}
	// The same through the default search with a known executable folder
	// that has no library beside it: only its three candidates are listed.
	exeDir := filepath.Join(t.TempDir(), "bin")
	_, err := findBesideExe(exeDir)
	wantRefused(t, err, "not found", filepath.Join(exeDir, LibName), filepath.Join(exeDir, ".ort", LibName),
		filepath.Join(filepath.Dir(exeDir), ".ort", LibName))
	if strings.Contains(err.Error(), root) || strings.Contains(err.Error(), "/tmp/.ort") {
		t.Errorf("error %q lists a place that is not searched", err)
	}
}

// End to end: a library with a constructor that writes a marker file is
// planted in a parent of the working directory, and the real binary (built
// into a folder with no library beside it) runs `unlearn version` there. The
// marker must not appear. As a control, naming the planted file with
// --ort-lib does load it (the marker appears), so its absence means the
// library was never loaded rather than that the constructor cannot run.
func TestPlantedParentLibraryNotLoaded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the unlearn binary; skipped with -short")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: cannot build the planted library with a constructor")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found: cannot build the unlearn binary")
	}
	pkgDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bin", "unlearn")
	build := exec.Command(goBin, "build", "-o", bin, "../cmd/unlearn")
	build.Dir = pkgDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	root, planted := plantParentLib(t)
	marker := filepath.Join(t.TempDir(), "constructor-ran")
	src := filepath.Join(t.TempDir(), "evil.c")
	code := `#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
	FILE *f = fopen(MARKER, "w");
	if (f) { fputs("loaded\n", f); fclose(f); }
}
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := exec.Command(gcc, "-shared", "-fPIC", "-o", planted, `-DMARKER="`+marker+`"`, src)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if err := os.Chmod(planted, 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ONNXRUNTIME_LIB=") {
			env = append(env, kv)
		}
	}
	runVersion := func(args ...string) string {
		cmd := exec.Command(bin, append([]string{"version"}, args...)...)
		cmd.Dir = filepath.Join(root, "a", "b")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("unlearn version %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	out := runVersion()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the library planted at %s was loaded (its constructor wrote %s); output:\n%s", planted, marker, out)
	}
	if !strings.Contains(out, "not loaded") || strings.Contains(out, root) {
		t.Errorf("want \"not loaded\" without naming %s, got:\n%s", root, out)
	}

	out = runVersion("--ort-lib", planted)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: --ort-lib %s did not run the constructor (%v), so the marker proves nothing; output:\n%s", planted, err, out)
	}
}

// A library writable by group or others is refused from --ort-lib and from
// ONNXRUNTIME_LIB, with the path and the reason in the error.
func TestRefuseWritableLibrary(t *testing.T) {
	for _, mode := range []os.FileMode{0o666, 0o620, 0o602} {
		p := filepath.Join(t.TempDir(), LibName)
		writeLib(t, p, mode)
		_, _, err := ResolveLibrary(p)
		wantRefused(t, err, "--ort-lib", p, "writable by group or others", "chmod go-w")
		t.Setenv("ONNXRUNTIME_LIB", p)
		_, _, err = ResolveLibrary("")
		wantRefused(t, err, "ONNXRUNTIME_LIB", p, "writable by group or others")
	}
	// The same file made private is accepted: the mode is what was refused.
	p := filepath.Join(t.TempDir(), LibName)
	writeLib(t, p, 0o644)
	if got, _, err := ResolveLibrary(p); err != nil || got != p {
		t.Fatalf("a 0644 library in a private folder must load: %q %v", got, err)
	}
}

// A library in a folder that others may write without the sticky bit is
// refused (they could rename another file over it); with the sticky bit, as
// /tmp has, others cannot, and it is accepted.
func TestRefuseWritableFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	p := filepath.Join(dir, LibName)
	writeLib(t, p, 0o644)
	for _, mode := range []os.FileMode{0o777, 0o775} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, _, err := ResolveLibrary(p)
		wantRefused(t, err, p, "folder "+dir, "without the sticky bit")
	}
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if got, _, err := ResolveLibrary(p); err != nil || got != p {
		t.Fatalf("a sticky folder must be accepted: %q %v", got, err)
	}
	// The default search applies the same check: a writable .ort/ beside
	// the executable is refused, not skipped.
	exeDir := t.TempDir()
	ortDir := filepath.Join(exeDir, ".ort")
	writeLib(t, filepath.Join(ortDir, LibName), 0o644)
	if err := os.Chmod(ortDir, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := findBesideExe(exeDir)
	wantRefused(t, err, filepath.Join(ortDir, LibName), "without the sticky bit")
}

// A library (or its folder) owned by another user is refused: its owner can
// rewrite it whatever its mode. Needs root to chown.
func TestRefuseOtherOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown files to another user")
	}
	const nobody = 65534
	p := filepath.Join(t.TempDir(), LibName)
	writeLib(t, p, 0o644)
	if err := os.Chown(p, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	_, _, err := ResolveLibrary(p)
	wantRefused(t, err, p, "owned by uid 65534")

	dir := filepath.Join(t.TempDir(), "theirs")
	q := filepath.Join(dir, LibName)
	writeLib(t, q, 0o644)
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	_, _, err = ResolveLibrary(q)
	wantRefused(t, err, q, "folder "+dir, "owned by uid 65534")

	// A binary in a folder under a shared parent (say /tmp/build/unlearn)
	// has <parent>/.ort/ among its defaults: a library another user planted
	// there is refused, not loaded.
	shared := t.TempDir()
	planted := filepath.Join(shared, ".ort", LibName)
	writeLib(t, planted, 0o644)
	if err := os.Chown(filepath.Dir(planted), nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(planted, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	_, err = findBesideExe(filepath.Join(shared, "build"))
	wantRefused(t, err, planted, "owned by uid 65534")
}

// Symlinks are followed and every hop is checked: a link in a private folder
// to a file in a world-writable one is refused; a link to a private file is
// accepted. A path that is not a regular file is refused.
func TestTrustFollowsSymlinks(t *testing.T) {
	base := t.TempDir()
	good := filepath.Join(base, "real", "libonnxruntime.so.1.24.3")
	writeLib(t, good, 0o644)
	link := filepath.Join(base, "private", LibName)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../real/libonnxruntime.so.1.24.3", link); err != nil {
		t.Fatal(err)
	}
	if got, _, err := ResolveLibrary(link); err != nil || got != link {
		t.Fatalf("a link to a private file must be accepted: %q %v", got, err)
	}
	if err := os.Chmod(filepath.Dir(good), 0o777); err != nil {
		t.Fatal(err)
	}
	_, _, err := ResolveLibrary(link)
	wantRefused(t, err, link, filepath.Dir(good), "without the sticky bit")

	fifo := filepath.Join(t.TempDir(), LibName)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = ResolveLibrary(fifo)
	wantRefused(t, err, fifo, "not a regular file")
}

// The default beside the executable is still found, in order: <exe dir>,
// <exe dir>/.ort, then <exe dir>/../.ort (the repository's .ort/ seen from
// bin/unlearn, what `make demo` relies on).
func TestFindBesideExe(t *testing.T) {
	repo := t.TempDir()
	exeDir := filepath.Join(repo, "bin")
	repoOrt := filepath.Join(repo, ".ort", LibName)
	writeLib(t, repoOrt, 0o644)
	if err := os.MkdirAll(exeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := findBesideExe(exeDir)
	if err != nil || got != repoOrt {
		t.Fatalf("want the repository's %s, got %q %v", repoOrt, got, err)
	}
	exeOrt := filepath.Join(exeDir, ".ort", LibName)
	writeLib(t, exeOrt, 0o644)
	if got, err := findBesideExe(exeDir); err != nil || got != exeOrt {
		t.Fatalf("want %s before ../.ort, got %q %v", exeOrt, got, err)
	}
	beside := filepath.Join(exeDir, LibName)
	writeLib(t, beside, 0o644)
	if got, err := findBesideExe(exeDir); err != nil || got != beside {
		t.Fatalf("want %s first, got %q %v", beside, got, err)
	}
}

// --device cuda applies the same checks to the provider libraries ONNX
// Runtime loads from beside the main library.
func TestCheckDeviceRefusesWritableProvider(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, LibName)
	writeLib(t, lib, 0o644)
	for _, f := range cudaProviderLibs {
		writeLib(t, filepath.Join(dir, f), 0o644)
	}
	if err := CheckDevice("cuda", lib); err != nil {
		t.Fatalf("private provider libraries must be accepted: %v", err)
	}
	bad := filepath.Join(dir, cudaProviderLibs[1])
	if err := os.Chmod(bad, 0o666); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, CheckDevice("cuda", lib), "--device cuda", bad, "writable by group or others")
}
