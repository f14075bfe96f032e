package fsread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestHashPath(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b", "c.bin"), []byte{0, 1, 2}, 0o644)
	os.WriteFile(filepath.Join(dir, "B.txt"), []byte("upper"), 0o644)
	got, err := HashPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines string
	for _, f := range []string{"B.txt", "a.txt", "b/c.bin"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		s := sha256.Sum256(b)
		lines += fmt.Sprintf("%s  ./%s\n", hex.EncodeToString(s[:]), f)
	}
	s := sha256.Sum256([]byte(lines))
	if want := hex.EncodeToString(s[:]); got != want {
		t.Errorf("HashPath %s, want %s", got, want)
	}
	// The documented shell line, where the tools exist.
	if _, err := exec.LookPath("sha256sum"); err == nil {
		out, err := exec.Command("sh", "-c", "(cd "+dir+" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum").Output()
		if err == nil && strings.Fields(string(out))[0] != got {
			t.Errorf("shell gives %s, HashPath %s", out, got)
		}
	}
	f, _ := HashPath(filepath.Join(dir, "a.txt"))
	if s := sha256.Sum256([]byte("one\n")); f != hex.EncodeToString(s[:]) {
		t.Errorf("file hash %s", f)
	}
}

// TestHashInputChecksBeforeHashing (issue 64, item 4): a folder, a device,
// a FIFO and a file over the limit are refused before a byte is hashed,
// without blocking and at once, naming what and the path; a cancelled
// context stops the hash.
func TestHashInputChecksBeforeHashing(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.onnx")
	f, err := os.Create(sparse)
	if err == nil {
		err = f.Truncate(20 << 30) // 20 GiB, no block on disk
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.onnx")
	if err := os.WriteFile(small, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "character device"},
		{fifo, "FIFO"},
		{"/usr", "is a folder"},
		{sparse, "21474836480 bytes, more than the 2147483648"},
	} {
		done := make(chan error, 1)
		start := time.Now()
		go func() { _, err := HashInput(context.Background(), c.path, "model", 2<<30); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "model "+c.path) {
				t.Errorf("%s: error %v, want one naming the model %s and %q", c.path, err, c.path, c.want)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s: refused after %v; the check comes before any hashing", c.path, d)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still hashing after 5 s", c.path)
		}
	}
	if got, err := HashInput(context.Background(), small, "model", 4); err != nil || got != "2c8b08da5ce60398e1f19af0e5dccc744df274b826abe585eaba68c525434806" {
		t.Errorf("a file at the limit: %s, %v", got, err)
	}
	if _, err := HashInput(context.Background(), small, "model", 3); err == nil {
		t.Error("a file of 4 bytes passed a limit of 3")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := HashInput(ctx, small, "model", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// TestHashPathFollowsLinks (issue 64, item 6): a dataset given as a link
// to its folder hashes as the folder (it hashed as an empty folder, the
// SHA-256 of nothing, so that two linked datasets shared every cache key),
// a linked class folder or file inside is hashed by its content as the
// documented `find -L` line does, a FIFO inside is skipped without
// blocking, and a link back to a folder that contains it is an error
// naming the link.
func TestHashPathFollowsLinks(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	real, other := filepath.Join(root, "data"), filepath.Join(root, "other")
	write(filepath.Join(real, "train", "a", "1.png"), "one")
	write(filepath.Join(real, "test", "a", "2.png"), "two")
	write(filepath.Join(other, "train", "a", "1.png"), "ONE") // other labels
	write(filepath.Join(other, "test", "a", "2.png"), "two")
	linkA, linkB := filepath.Join(root, "linkA"), filepath.Join(root, "linkB")
	if err := errors.Join(os.Symlink(real, linkA), os.Symlink(other, linkB)); err != nil {
		t.Fatal(err)
	}
	sum := func(p string) string {
		t.Helper()
		s, err := HashPath(p)
		if err != nil {
			t.Fatalf("HashPath %s: %v", p, err)
		}
		return s
	}
	empty := sha256.Sum256(nil)
	a, b := sum(linkA), sum(linkB)
	if a != sum(real) || a == hex.EncodeToString(empty[:]) || a == b {
		t.Errorf("linked datasets: %s (real %s), other %s; want the real folder's hash, not that of nothing, and two datasets told apart", a, sum(real), b)
	}
	// A class folder and a file inside that are links count by content.
	copyDir, linked := filepath.Join(root, "copy"), filepath.Join(root, "linked")
	write(filepath.Join(copyDir, "train", "a", "1.png"), "one")
	write(filepath.Join(copyDir, "test", "a", "2.png"), "two")
	write(filepath.Join(linked, "test", "a", "2.png"), "two")
	if err := os.MkdirAll(filepath.Join(linked, "train"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "train", "a"), filepath.Join(linked, "train", "a")); err != nil {
		t.Fatal(err)
	}
	if got, want := sum(linked), sum(copyDir); got != want {
		t.Errorf("a linked class folder: %s, want the copy's %s", got, want)
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		out, err := exec.Command("sh", "-c", "(cd "+linked+" && find -L . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum").Output()
		if err == nil && strings.Fields(string(out))[0] != sum(linked) {
			t.Errorf("shell gives %s, HashPath %s", out, sum(linked))
		}
	}
	// A FIFO is no file of the dataset and is not opened.
	if err := syscall.Mkfifo(filepath.Join(copyDir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- sum(copyDir) }()
	select {
	case got := <-done:
		if got != sum(linked) {
			t.Errorf("with a FIFO: %s, want %s", got, sum(linked))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO in the folder blocks the hash")
	}
	// Loops: a link to the folder itself or to the root of the file system.
	for _, to := range []string{real, "/"} {
		loop := filepath.Join(real, "loop")
		if err := os.Symlink(to, loop); err != nil {
			t.Fatal(err)
		}
		if _, err := HashPath(linkA); err == nil || !strings.Contains(err.Error(), filepath.Join(linkA, "loop")+": a symbolic link to a folder that contains it") {
			t.Errorf("link to %s: %v, want a loop naming the link", to, err)
		}
		os.Remove(loop)
	}
}
