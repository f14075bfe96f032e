package onnxrt

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/unlearn-tool/unlearn/internal/textio"
)

// The dynamic loader finds ONNX Runtime's own dependencies (librt, libdl,
// libstdc++, cuDNN's parts) through LD_LIBRARY_PATH before the system's
// folders, and it reads the variable once, when the process starts: an
// empty entry (what `export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH`
// gives when the variable was unset) or a relative one means the working
// directory, and a folder others can write holds whatever they put there.
// Changing the variable inside the process changes nothing the loader sees,
// so the command re-executes itself once without such entries
// (ReexecSafeLibraryPath), and Setup refuses to load anything in a process
// that still has them (a library user, a test).

// droppedEntry is an LD_LIBRARY_PATH entry left out, with the reason.
type droppedEntry struct{ entry, why string }

func (d droppedEntry) String() string { return fmt.Sprintf("%q (%s)", d.entry, d.why) }

// safeLibraryPath splits an LD_LIBRARY_PATH value into the entries the tool
// lets the loader use and those it leaves out: empty and relative entries,
// and existing folders that a user other than root or the current one owns
// or that group or others may write (the sticky bit does not help here:
// anyone may still add a new library to such a folder). A missing folder is
// kept: nothing in it can be loaded.
func safeLibraryPath(v string) (keep []string, dropped []droppedEntry) {
	for _, e := range strings.Split(v, ":") {
		switch {
		case e == "":
			dropped = append(dropped, droppedEntry{e, "empty: the working directory"})
		case !filepath.IsAbs(e):
			dropped = append(dropped, droppedEntry{e, "relative: read from the working directory"})
		default:
			if why := untrustedFolder(e); why != "" {
				dropped = append(dropped, droppedEntry{e, why})
			} else {
				keep = append(keep, e)
			}
		}
	}
	return keep, dropped
}

// untrustedFolder says why a library folder is not safe to search, or "".
func untrustedFolder(dir string) string {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return ""
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Sprintf("writable by group or others, mode %04o", perm)
	}
	if uid, ok := fileOwner(fi); ok && uid != 0 && uid != uint64(os.Geteuid()) {
		return fmt.Sprintf("owned by uid %d", uid)
	}
	return ""
}

// startLibraryPath returns LD_LIBRARY_PATH as the process started with it,
// which is what the loader uses: /proc/self/environ keeps the initial
// environment whatever Setenv did since. Without /proc the current value
// stands in.
func startLibraryPath() (string, bool) {
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return os.LookupEnv("LD_LIBRARY_PATH")
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("LD_LIBRARY_PATH=")); ok {
			return string(v), true
		}
	}
	return "", false
}

// checkLibraryPath refuses to load ONNX Runtime in a process whose loader
// would search the entries safeLibraryPath leaves out.
func checkLibraryPath() error {
	v, ok := startLibraryPath()
	if !ok {
		return nil
	}
	if _, dropped := safeLibraryPath(v); len(dropped) > 0 {
		return fmt.Errorf("%w: not loading anything while LD_LIBRARY_PATH holds %s: the loader would take "+
			"ONNX Runtime's dependencies from there; remove %s from LD_LIBRARY_PATH",
			ErrLibrary, describeDropped(dropped), pluralIt(len(dropped)))
	}
	return nil
}

func describeDropped(d []droppedEntry) string {
	s := make([]string, len(d))
	for i, e := range d {
		s[i] = e.String()
	}
	return textio.JoinAnd(s)
}

func pluralIt(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// ReexecSafeLibraryPath re-executes the running program once, with the same
// arguments and environment but LD_LIBRARY_PATH without the entries
// safeLibraryPath leaves out, after saying on w, in one line, what it left
// out. It returns nil without doing anything when there is nothing to
// leave out; it returns only on failure otherwise. Call it first thing in
// main: the loader has read the variable before main runs.
func ReexecSafeLibraryPath(w io.Writer) error {
	v, ok := startLibraryPath()
	if !ok {
		return nil
	}
	keep, dropped := safeLibraryPath(v)
	if len(dropped) == 0 {
		return nil
	}
	fmt.Fprintf(w, "unlearn: LD_LIBRARY_PATH: leaving out %s; the tool loads no code from the working directory "+
		"or from folders other users control\n", describeDropped(dropped))
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") {
			env = append(env, kv)
		}
	}
	if len(keep) > 0 {
		env = append(env, "LD_LIBRARY_PATH="+strings.Join(keep, ":"))
	}
	exe := "/proc/self/exe"
	if _, err := os.Stat(exe); err != nil {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("re-executing without those LD_LIBRARY_PATH entries: %v", err)
		}
	}
	err := syscall.Exec(exe, os.Args, env)
	return fmt.Errorf("re-executing %s without those LD_LIBRARY_PATH entries: %v", exe, err)
}
