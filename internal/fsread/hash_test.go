package fsread

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
