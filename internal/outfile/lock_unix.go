//go:build unix

package outfile

import (
	"fmt"
	"os"
	"syscall"
)

// LockDir takes an exclusive lock on the folder dir (flock on the folder
// itself, so no lock file is left behind) and returns its release. Runs
// that write a set of files that belong together into one folder (a model
// and its metrics) hold it from the first file's rename to the last, so two
// runs writing the same paths leave one run's complete set, never a mix.
func LockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("locking folder %s: %w", dir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking folder %s: %w", dir, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// lockedByOther reports whether another open file holds dir's lock (tests).
func lockedByOther(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
