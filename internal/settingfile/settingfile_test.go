package settingfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: values come sorted by name with lists joined by commas; an
// unknown key, a key without a value and a file that is no regular file
// are usage errors, and a file that is not a mapping is an error of
// another kind.
func TestRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.yaml")
	known := func(n string) bool { return n == "model" || n == "mean" }
	os.WriteFile(p, []byte("model: m.onnx\nmean: [0.5, 0.25]\n"), 0o644)
	vals, err := Read(p, known, nil)
	if err != nil || len(vals) != 2 || vals[0] != (Value{"mean", "0.5,0.25"}) || vals[1] != (Value{"model", "m.onnx"}) {
		t.Fatalf("Read = %v, %v", vals, err)
	}
	for _, c := range []struct{ text, want string }{
		{"modle: m\n", "unknown key"},
		{"model:\n", "has no value"},
		{"model:\n  a: 1\n", "a mapping is not a flag value"},
	} {
		os.WriteFile(p, []byte(c.text), 0o644)
		_, err := Read(p, known, []string{"model"})
		if !errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), c.want) ||
			!strings.HasPrefix(err.Error(), "config "+p) {
			t.Errorf("%q: %v; want a usage error about config %s saying %q", c.text, err, p, c.want)
		}
	}
	os.WriteFile(p, []byte("- a\n"), 0o644)
	if _, err := Read(p, known, nil); err == nil || errors.As(err, new(UsageError)) {
		t.Errorf("a list: %v; want an error that is no usage error", err)
	}
	if _, err := Read("/dev/zero", known, nil); !errors.As(err, new(UsageError)) {
		t.Errorf("a device: %v; want a usage error", err)
	}
}
