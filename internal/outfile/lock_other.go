//go:build !unix

package outfile

// LockDir is a no-op where flock is not available: concurrent runs into one
// folder are then not serialized.
func LockDir(dir string) (unlock func(), err error) { return func() {}, nil }
