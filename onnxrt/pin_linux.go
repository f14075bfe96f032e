//go:build linux

package onnxrt

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// A checked library is loaded as exactly the file that was checked: pinFile
// opens it once, compares the descriptor's identity (device and inode) with
// the file resolveTrusted accepted, checks type, owner and mode again on the
// descriptor itself, and the loader is given /proc/self/fd/N, which names
// that open file and no path another user can redirect. Checking a path and
// then loading it by name would let a symlink swapped in between (a link the
// user owns inside a root-owned sticky folder, say) bring in another file.

var (
	pinMu sync.Mutex
	// pinnedFiles stay open for the life of the process: the loader keeps
	// each library's /proc/self/fd name as its identity, so a closed and
	// reused descriptor number would make a later load of another file
	// match an earlier one by name.
	pinnedFiles []*os.File
	// linkDir is the private folder of links for the GPU build (pinLinked).
	linkDir string
)

// afterCheck, when set (tests only), runs between the trust check and the
// open: the window in which a swapped link would be followed.
var afterCheck func(p string)

// pin opens and checks the library p names and returns the name to load it
// by.
func pin(p string) (string, error) {
	f, err := pinFile(p)
	if err != nil {
		return "", err
	}
	return fdName(f), nil
}

func fdName(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// pinFile opens the file p leads to, once checkTrusted's rules accept it,
// and keeps it open for the process.
func pinFile(p string) (*os.File, error) {
	cur, fi, err := resolveTrusted(p)
	if err != nil {
		return nil, err
	}
	if afterCheck != nil {
		afterCheck(p)
	}
	// O_NOFOLLOW: cur is the end of the chain already followed; a link
	// there now is a swap. O_NONBLOCK: a FIFO swapped in cannot block the
	// open.
	fd, err := syscall.Open(cur, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, refuse(p, cur, fmt.Sprintf("it could not be opened after it was checked (%v): was it replaced?", err))
	}
	f := os.NewFile(uintptr(fd), cur)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrLibrary, p, err)
	}
	if !os.SameFile(fi, st) {
		f.Close()
		return nil, refuse(p, cur, "it was replaced by another file while it was checked; "+
			"run again, and find out who changes it")
	}
	if err := checkFile(p, cur, st); err != nil {
		f.Close()
		return nil, err
	}
	pinMu.Lock()
	pinnedFiles = append(pinnedFiles, f)
	pinMu.Unlock()
	return f, nil
}

// pinLinked pins each library and returns, for each, a path in a private
// folder (mode 0700, made in the temporary folder) under the library's own
// file name, linked to its /proc/self/fd name. The GPU build needs this
// rather than bare /proc/self/fd names: ONNX Runtime and its providers find
// each other by file name in their own folder ($ORIGIN, the runtime path),
// which is then this folder, holding nothing but the pinned files. Only the
// current user can add to or swap entries in it, and the temporary folder
// above it must pass checkFolder's rules, so the folder itself cannot be
// renamed away. RemovePinned removes it.
func pinLinked(paths []string) ([]string, error) {
	files := make([]*os.File, len(paths))
	for i, p := range paths {
		f, err := pinFile(p)
		if err != nil {
			return nil, err
		}
		files[i] = f
	}
	pinMu.Lock()
	defer pinMu.Unlock()
	if linkDir == "" {
		parent, err := filepath.EvalSymlinks(os.TempDir())
		if err != nil {
			return nil, fmt.Errorf("%w: the temporary folder %s: %v", ErrLibrary, os.TempDir(), err)
		}
		if err := checkFolder(parent, parent); err != nil {
			return nil, fmt.Errorf("%w (it would hold the private links to the libraries; "+
				"point TMPDIR at a folder of your own)", err)
		}
		d, err := os.MkdirTemp(parent, "unlearn-ort-")
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLibrary, err)
		}
		linkDir = d
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Join(linkDir, filepath.Base(p))
		if err := os.Symlink(fdName(files[i]), out[i]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLibrary, err)
		}
	}
	return out, nil
}

// RemovePinned removes the private folder of links pinLinked made, if any:
// call it when the process is done with ONNX Runtime (the CUDA provider is
// loaded through the folder when the first CUDA session opens). What is
// loaded stays loaded.
func RemovePinned() {
	pinMu.Lock()
	defer pinMu.Unlock()
	if linkDir != "" {
		_ = os.RemoveAll(linkDir)
		linkDir = ""
	}
}
