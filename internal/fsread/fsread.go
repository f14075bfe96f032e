package fsread

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File returns the content of the regular file at path, refusing anything
// else and files over limit bytes (limit ≤ 0: no limit). what names the
// input in errors ("model", "ids file", ...).
func File(path, what string, limit int64) ([]byte, error) {
	f, err := Open(path, what)
	if err != nil {
		return nil, err
	}
	return read(f, path, what, limit)
}

// FileNoLink is File for a file that must not be a symbolic link either
// (the path itself; its folders are the caller's to check): the files of
// a folder other processes may write, where a link could point anywhere.
func FileNoLink(path, what string, limit int64) ([]byte, error) {
	f, err := OpenNoLink(path, what)
	if err != nil {
		return nil, err
	}
	return read(f, path, what, limit)
}

// read reads f (path, named what) whole, at most limit bytes, and closes it.
func read(f *os.File, path, what string, limit int64) ([]byte, error) {
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if limit > 0 && st.Size() > limit {
		return nil, fmt.Errorf("%s %s: %d bytes, more than the %d a %s can have", what, path, st.Size(), limit, what)
	}
	// Read at most limit+1 bytes: a file that grows while we read is caught.
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if limit > 0 && int64(len(b)) > limit {
		return nil, fmt.Errorf("%s %s: more than the %d bytes a %s can have", what, path, limit, what)
	}
	return b, nil
}

// Open opens path for reading after checking, without opening it, that it
// is a regular file (opening a FIFO would block until a writer comes), and
// checks again on the open file. The open itself does not block
// (O_NONBLOCK): a FIFO put in the file's place between the check and the
// open is opened, seen and refused, not waited on.
func Open(path, what string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(st, path, what); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err != nil {
		f.Close()
		return nil, err
	}
	if err := regular(st, path, what); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenNoLink is Open for a path that must not be a symbolic link: it is
// checked without following it, and the opened file must be the one
// checked (a link swapped in between is refused too).
func OpenNoLink(path, what string) (*os.File, error) {
	return OpenNoLinkFlag(path, what, os.O_RDONLY)
}

// OpenNoLinkFlag is OpenNoLink with the open flags flag (os.O_RDWR for a
// file that is read and then cut, such as a results file's damaged tail):
// the open neither follows a final link (O_NOFOLLOW) nor blocks
// (O_NONBLOCK), and the descriptor must be the regular file checked.
func OpenNoLinkFlag(path, what string, flag int) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %s is a symbolic link; it must be a regular file", what, path)
	}
	if err := regular(st, path, what); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag|openFlags|noFollow, 0)
	if err != nil {
		return nil, err
	}
	fst, err := f.Stat()
	if err == nil && !os.SameFile(st, fst) {
		err = fmt.Errorf("%s %s changed while it was opened", what, path)
	}
	if err == nil {
		err = regular(fst, path, what) // see FileBeneath: inode numbers are reused
	}
	if err == nil {
		err = oneLink(fst, path, what)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// oneLink refuses a file with more than one hard link: where a link is
// refused, a hard link to a file elsewhere (/etc/shadow, made by whoever
// can write the folder) would pass every other check.
func oneLink(st os.FileInfo, path, what string) error {
	if n := links(st); n > 1 {
		return fmt.Errorf("%s %s has %d hard links; it must be a file of its own, not a hard link to another", what, path, n)
	}
	return nil
}

// afterCheck, when set (by tests), runs after each element of a
// FileBeneath path is checked and before it is opened: the moment another
// process would swap it.
var afterCheck func(path string)

// FileBeneath returns the content of the file rel (a relative path that
// stays inside: filepath.IsLocal) in the folder dir, read without any
// second lookup by name: each element of rel is checked without following
// links (a folder, then a regular file with one hard link of at most limit
// bytes; a symbolic link anywhere is refused) and opened relative to the
// folder opened before it (os.Root, which cannot leave dir), and the
// opened descriptor must be the very file or folder checked. A folder on
// the way swapped for a link to /etc after the check is caught, since the
// folder then opened is not the one checked. The open does not block.
func FileBeneath(dir, rel, what string, limit int64) ([]byte, error) {
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s %s: not a relative path inside %s", what, rel, dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer func() { root.Close() }()
	elems := strings.Split(filepath.Clean(rel), string(filepath.Separator))
	p := dir
	for i, e := range elems {
		p = filepath.Join(p, e)
		st, err := root.Lstat(e)
		if err != nil {
			return nil, err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s %s: %s is a symbolic link; no link may lie on the way", what, rel, p)
		}
		if afterCheck != nil {
			afterCheck(p)
		}
		if i < len(elems)-1 {
			if !st.IsDir() {
				return nil, fmt.Errorf("%s %s: %s is not a folder", what, rel, p)
			}
			sub, err := root.OpenRoot(e)
			if err != nil {
				return nil, err
			}
			root.Close()
			root = sub
			if sst, err := root.Stat("."); err != nil || !os.SameFile(st, sst) {
				return nil, fmt.Errorf("%s %s: %s changed while it was opened", what, rel, p)
			}
			continue
		}
		if err := regular(st, p, what); err != nil {
			return nil, err
		}
		f, err := root.OpenFile(e, os.O_RDONLY|openFlags|noFollow, 0)
		if err != nil {
			return nil, err
		}
		// The type is checked again on the descriptor: a file removed after
		// its check may leave its inode number to the FIFO that replaces
		// it, which SameFile would then take for the file checked.
		fst, err := f.Stat()
		if err == nil && !os.SameFile(st, fst) {
			err = fmt.Errorf("%s %s changed while it was opened", what, p)
		}
		if err == nil {
			err = regular(fst, p, what)
		}
		if err == nil {
			err = oneLink(fst, p, what)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		return read(f, p, what, limit)
	}
	return nil, fmt.Errorf("%s %s: no file named", what, rel)
}

func regular(st os.FileInfo, path, what string) error {
	switch m := st.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("%s %s is a folder, not a file", what, path)
	default:
		return fmt.Errorf("%s %s is not a regular file (a %s); give the path of a file", what, path, FileKind(m))
	}
}

// FileKind names what a file that is not a regular file or a folder is,
// for messages about inputs (here) and outputs (internal/outfile).
func FileKind(m os.FileMode) string {
	switch {
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "block device"
	case m&os.ModeNamedPipe != 0:
		return "FIFO (named pipe)"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file (mode " + m.String() + ")"
}

// AvailableMemory is MemAvailable from /proc/meminfo in bytes, or 0 when
// it cannot be read. Readers check what an input claims to need against
// it before allocating, so that a small file cannot make the process
// allocate past what the machine has.
func AvailableMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			if f := strings.Fields(rest); len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > 0 && kb < math.MaxInt64/1024 {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
