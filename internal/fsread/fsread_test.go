package fsread

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "character device"},
		{fifo, "named pipe"},
		{dir, "is a folder"},
	} {
		done := make(chan error, 1)
		go func() { _, err := File(c.path, "model", 0); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), "model") {
				t.Errorf("%s: error %v, want one naming the model, the path and %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", c.path)
		}
	}
}

func TestFileLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ids.txt")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := File(p, "ids file", 10); err != nil || string(b) != "0123456789" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	if _, err := File(p, "ids file", 9); err == nil || !strings.Contains(err.Error(), "more than the 9") {
		t.Errorf("over the limit: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if _, err := File(link, "ids file", 0); err != nil {
		t.Errorf("a symlink to a regular file is read: %v", err)
	}
}

// FileNoLink refuses a link, whatever it points to, besides what File
// refuses, and reads a regular file as File does.
func TestFileNoLinkRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := FileNoLink(p, "settings file", 10); err != nil || string(b) != "{}" {
		t.Errorf("a regular file: %q, %v", b, err)
	}
	if _, err := FileNoLink(p, "settings file", 1); err == nil || !strings.Contains(err.Error(), "more than the 1") {
		t.Errorf("over the limit: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]string{p: "symbolic link", "/dev/zero": "symbolic link", fifo: "symbolic link"} {
		link := filepath.Join(dir, "link-"+filepath.Base(target))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := FileNoLink(link, "task file", 0); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), link) {
			t.Errorf("a link to %s: %v, want an error naming %s and %q", target, err, link, want)
		}
	}
	for path, want := range map[string]string{"/dev/zero": "character device", fifo: "named pipe", dir: "is a folder"} {
		done := make(chan error, 1)
		go func() { _, err := FileNoLink(path, "task file", 0); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", path)
		}
	}
}
