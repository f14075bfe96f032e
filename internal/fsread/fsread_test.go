package fsread

import (
	"errors"
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

// TestFileBeneathReadsWhatItChecked (issue 64, item 7): FileBeneath reads
// the file inside its folder, and when a folder on the way or the file
// itself is swapped for a link (to a folder outside, or to a file inside)
// or a FIFO right after its check, it refuses instead of reading through
// the new name; a link, a hard link, a FIFO or a path leaving the folder
// is refused outright.
func TestFileBeneathReadsWhatItChecked(t *testing.T) {
	root := t.TempDir()
	dir, outside := filepath.Join(root, "exps"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(dir, "sub"), filepath.Join(dir, "other"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{"outside/NOTES.md": "SECRET", "exps/sub/NOTES.md": "notes", "exps/other/NOTES.md": "other"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := FileBeneath(dir, "sub/NOTES.md", "notes file", 100); err != nil || string(b) != "notes" {
		t.Fatalf("plain read: %q, %v", b, err)
	}
	sub, file := filepath.Join(dir, "sub"), filepath.Join(dir, "sub", "NOTES.md")
	swaps := []struct {
		name, at string
		swap     func() error
	}{
		{"folder to a link outside", sub, func() error {
			return errors.Join(os.Rename(sub, sub+".aside"), os.Symlink(outside, sub))
		}},
		{"folder to a link inside", sub, func() error {
			return errors.Join(os.Rename(sub, sub+".aside"), os.Symlink("other", sub))
		}},
		{"file to a link outside", file, func() error {
			return errors.Join(os.Remove(file), os.Symlink(filepath.Join(outside, "NOTES.md"), file))
		}},
		{"file to a FIFO", file, func() error { return errors.Join(os.Remove(file), syscall.Mkfifo(file, 0o600)) }},
	}
	for _, c := range swaps {
		restore := func() {
			if st, err := os.Lstat(sub); err == nil && st.Mode()&os.ModeSymlink != 0 {
				os.Remove(sub)
				os.Rename(sub+".aside", sub)
			}
			os.Remove(file)
			os.WriteFile(file, []byte("notes"), 0o644)
		}
		afterCheck = func(p string) {
			if p == c.at {
				if err := c.swap(); err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
			}
		}
		done := make(chan struct{})
		var b []byte
		var err error
		go func() { b, err = FileBeneath(dir, "sub/NOTES.md", "notes file", 100); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", c.name)
		}
		afterCheck = nil
		if err == nil || len(b) > 0 {
			t.Errorf("%s after the check: read %q, %v; want a refusal", c.name, b, err)
		}
		restore()
	}
	if err := os.Link(filepath.Join(outside, "NOTES.md"), filepath.Join(dir, "hard.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/NOTES.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ rel, want string }{
		{"hard.md", "has 2 hard links"},
		{"link.md", "is a symbolic link"},
		{"../outside/NOTES.md", "not a relative path inside"},
	} {
		if b, err := FileBeneath(dir, c.rel, "notes file", 100); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want %q", c.rel, b, err, c.want)
		}
	}
	// FileNoLink, which refuses a link, refuses a hard link too.
	if b, err := FileNoLink(filepath.Join(dir, "hard.md"), "step file", 100); err == nil || !strings.Contains(err.Error(), "has 2 hard links") {
		t.Errorf("FileNoLink of a hard link: %q, %v", b, err)
	}
}
