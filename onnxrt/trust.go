package onnxrt

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxLinks bounds the symlink chain checkTrusted follows (Linux's own limit
// is 40).
const maxLinks = 40

// checkTrusted refuses a library that a user other than root or the current
// effective user could have written, or could swap for another file before it
// is loaded: loading a library runs its constructors with the tool's
// privileges. It follows p through every symlink. For each link and for the
// file it ends at, the folder holding it must be owned by root or the current
// user and must not be writable by group or others unless it has the sticky
// bit (as /tmp has: then others cannot rename or delete entries they do not
// own). The file itself must be a regular file owned by root or the current
// user and not writable by group or others. Folders above the containing one
// are not checked.
func checkTrusted(p string) error {
	_, _, err := resolveTrusted(p)
	return err
}

// resolveTrusted is checkTrusted returning the file the symlinks led to and
// its FileInfo, for pin to open and compare against what it opened.
func resolveTrusted(p string) (string, os.FileInfo, error) {
	cur := p
	for hops := 0; ; hops++ {
		// The folder with its own symlinks resolved: a relative link target
		// is read against it, as the kernel does.
		dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s: %v", ErrLibrary, p, err)
		}
		cur = filepath.Join(dir, filepath.Base(cur))
		if err := checkFolder(p, dir); err != nil {
			return "", nil, err
		}
		fi, err := os.Lstat(cur)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s: %v", ErrLibrary, p, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if err := checkFile(p, cur, fi); err != nil {
				return "", nil, err
			}
			return cur, fi, nil
		}
		if hops == maxLinks {
			return "", nil, refuse(p, cur, fmt.Sprintf("more than %d symlinks to follow", maxLinks))
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s: %v", ErrLibrary, p, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		cur = target
	}
}

// checkFile checks the file a library path ends at (cur, after symlinks).
func checkFile(p, cur string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return refuse(p, cur, fmt.Sprintf("it is not a regular file (%s)", fi.Mode().Type()))
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return refuse(p, cur, fmt.Sprintf("it is writable by group or others (mode %04o), "+
			"so another user could replace its code; run chmod go-w %s", perm, cur))
	}
	return checkOwner(p, cur, fi, "it")
}

// checkFolder checks a folder holding a library or a link to it: whoever may
// create, rename or delete entries in it can put another file in its place.
func checkFolder(p, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrLibrary, p, err)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return refuse(p, p, fmt.Sprintf("its folder %s is writable by group or others without the sticky bit (mode %04o), "+
			"so another user could swap the file; run chmod go-w %s or move the library", dir, perm, dir))
	}
	return checkOwner(p, p, fi, "its folder "+dir)
}

// checkOwner refuses a file or folder owned by anyone but root or the current
// effective user: its owner can change it whatever its mode.
func checkOwner(p, cur string, fi os.FileInfo, what string) error {
	uid, ok := fileOwner(fi)
	if !ok {
		if ownersKnown {
			return refuse(p, cur, what+" has no known owner")
		}
		return nil
	}
	if uid != 0 && uid != uint64(os.Geteuid()) {
		return refuse(p, cur, fmt.Sprintf("%s is owned by uid %d, neither root nor the current user (uid %d), "+
			"who could replace it", what, uid, os.Geteuid()))
	}
	return nil
}

// refuse builds the error for a library checkTrusted does not load; it names
// the path as given and, when symlinks led elsewhere, the file reached.
func refuse(p, cur, reason string) error {
	name := p
	if cur != p {
		name = fmt.Sprintf("%s (through symlinks: %s)", p, cur)
	}
	return fmt.Errorf("%w: refusing to load %s: %s", ErrLibrary, name, reason)
}
