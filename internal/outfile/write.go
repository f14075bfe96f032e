package outfile

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Temporary names. Each encodes the PID of the process that made it and a
// tag of the host it ran on (HOST: 8 base-36 digits of a hash of the host
// name), so that a later run on the same host can tell a temporary of a
// killed process (removed) from one of a run in flight (kept). A PID means
// nothing on another host, or in another container's PID namespace (in a
// pod the tool is PID 1 in every container): temporaries with another
// host's tag are left alone.
//
//	.NAME.tmp-PID.HOST-RANDOM    a file or folder being written for NAME
//	.NAME.partial-PID.HOST       NAME staged complete, renamed when its
//	                             companions are written (Stage)
//	..NAME.partial-PID.HOST.tmp-PID.HOST-RANDOM   the temporary of that
//	                             staged file
//
// Names without .HOST (written by earlier versions) are judged by PID alone.

// hostTag is this host's tag in temporary names (see above).
var hostTag = func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "unknown"
	}
	f := fnv.New64a()
	f.Write([]byte(h))
	t := strconv.FormatUint(f.Sum64()%2821109907456, 36) // 36^8: at most 8 digits
	return strings.Repeat("0", 8-len(t)) + t
}()

// owner is the PID.HOST part of this process's temporary names.
func owner() string { return strconv.Itoa(os.Getpid()) + "." + hostTag }

// temps holds the temporary files and folders in flight.
var temps sync.Map

// Track registers a temporary file or folder for RemoveTracked, until
// Untrack.
func Track(path string) { temps.Store(path, true) }

// Untrack forgets a path given to Track (it was renamed into place or
// removed).
func Untrack(path string) { temps.Delete(path) }

// RemoveTracked removes every tracked temporary file and folder (a folder
// with what it holds), for a process that must exit at once (a second
// Ctrl-C): every output is then either complete or absent.
func RemoveTracked() {
	temps.Range(func(k, _ any) bool {
		os.RemoveAll(k.(string))
		temps.Delete(k)
		return true
	})
}

// tempName is a new temporary name beside final.
func tempName(final string) string {
	name := fmt.Sprintf(".%s.tmp-%s-%s", filepath.Base(final), owner(), strconv.FormatUint(rand.Uint64(), 36))
	return filepath.Join(filepath.Dir(final), name)
}

// Stage removes the stale temporaries beside final (RemoveStale) and
// returns the name under which this process stages final: a complete file
// that is renamed to final only once the files that go with it are written.
// The caller tracks and removes it.
func Stage(final string) string {
	RemoveStale(final)
	return filepath.Join(filepath.Dir(final), fmt.Sprintf(".%s.partial-%s", filepath.Base(final), owner()))
}

// File is a temporary file beside its final path. Write to it, then
// Commit (sync, close, rename over the final path) or Abort (remove).
type File struct {
	f          *os.File
	tmp, final string
	closed     bool
	done       bool
}

// Create removes the stale temporaries beside final (RemoveStale) and
// creates a new temporary file beside it, tracked for RemoveTracked. The
// file is created with mode 0666 less the umask, like any new file.
func Create(final string) (*File, error) {
	RemoveStale(final)
	for range 100 {
		tmp := tempName(final)
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", final, err)
		}
		Track(tmp)
		return &File{f: f, tmp: tmp, final: final}, nil
	}
	return nil, fmt.Errorf("writing %s: no free temporary name beside it", final)
}

// Name is the temporary file's path.
func (t *File) Name() string { return t.tmp }

func (t *File) Write(b []byte) (int, error) { return t.f.Write(b) }

// Close syncs and closes the temporary file, so that a rename of it is
// durable; it keeps the file for Commit. Calling it again returns nil.
func (t *File) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	err := t.f.Sync()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", t.final, err)
	}
	return nil
}

// Commit closes the temporary file and renames it over the final path.
// On error the temporary file is removed.
func (t *File) Commit() error {
	if err := t.Close(); err != nil {
		t.Abort()
		return err
	}
	if err := os.Rename(t.tmp, t.final); err != nil {
		t.Abort()
		return fmt.Errorf("writing %s: %w", t.final, err)
	}
	Untrack(t.tmp)
	t.done = true
	return nil
}

// Abort removes the temporary file unless it was committed.
func (t *File) Abort() {
	if t.done {
		return
	}
	if !t.closed {
		t.closed = true
		t.f.Close()
	}
	os.Remove(t.tmp)
	Untrack(t.tmp)
}

// WriteFile writes b to path atomically: path holds either its old content
// or all of b, also after a crash.
func WriteFile(path string, b []byte) error {
	return WriteFiles(map[string][]byte{path: b})
}

// WriteFiles writes every file through a temporary file beside it and
// renames them all only when every write succeeded; a failed rename
// removes the files already renamed, so that no half set is left.
func WriteFiles(files map[string][]byte) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var tmps []*File
	abort := func() {
		for _, t := range tmps {
			t.Abort()
		}
	}
	for _, p := range paths {
		t, err := Create(p)
		if err != nil {
			abort()
			return err
		}
		tmps = append(tmps, t)
		if _, err := t.Write(files[p]); err != nil {
			abort()
			return fmt.Errorf("writing %s: %w", p, err)
		}
		if err := t.Close(); err != nil {
			abort()
			return err
		}
	}
	for i, t := range tmps {
		if err := t.Commit(); err != nil {
			abort()
			for _, done := range paths[:i] {
				os.Remove(done)
			}
			return err
		}
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		if d := filepath.Dir(p); !dirs[d] {
			dirs[d] = true
			SyncDir(d)
		}
	}
	return nil
}

// TempDir removes the stale temporaries beside final (RemoveStale) and
// creates a temporary folder beside it (mode 0777 less the umask), tracked
// for RemoveTracked: a folder written as a whole and renamed into place.
// The caller removes it with os.RemoveAll and Untrack if it is not renamed.
func TempDir(final string) (string, error) {
	RemoveStale(final)
	for range 100 {
		tmp := tempName(final)
		err := os.Mkdir(tmp, 0o777)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("writing %s: %w", final, err)
		}
		Track(tmp)
		return tmp, nil
	}
	return "", fmt.Errorf("writing %s: no free temporary name beside it", final)
}

// SyncDir makes renames in dir durable; failures are ignored (not every
// file system can sync a folder).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// RemoveStale removes, beside final, the temporaries that this package
// names after final (see the names above) and whose process no longer
// exists: what a run killed with SIGKILL, or a crash, left behind. Nothing
// else is touched: not other names, not the temporaries of live processes.
// It returns the paths removed.
func RemoveStale(final string) []string {
	dir, base := filepath.Split(final)
	if dir == "" {
		dir = "."
	}
	q := regexp.QuoteMeta(base)
	// Each pattern captures the PID and the host tag (empty in an older
	// version's name) of the process that made the temporary.
	const who = `(\d+)(?:\.([0-9a-z]{8}))?`
	own := regexp.MustCompile(`^\.` + q + `\.(?:tmp-` + who + `-[0-9a-z]+|partial-` + who + `)$`)
	staged := regexp.MustCompile(`^\.\.` + q + `\.partial-\d+(?:\.[0-9a-z]{8})?\.tmp-` + who + `-[0-9a-z]+$`)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		m := own.FindStringSubmatch(e.Name())
		if m == nil {
			m = staged.FindStringSubmatch(e.Name())
		}
		if m == nil {
			continue
		}
		pidText, host := m[1], m[2]
		if pidText == "" && len(m) > 4 {
			pidText, host = m[3], m[4]
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil || host != "" && host != hostTag || alive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() && !e.IsDir() {
			continue // a link or a special file is not one of ours
		}
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// committing counts the runs in their commit section (BeginCommit).
var committing atomic.Int32

// BeginCommit marks the start of putting a set of outputs in place (a
// model's metrics, then the model); a signal handler that would exit the
// process waits until EndCommit, so that no set is left half in place.
func BeginCommit() { committing.Add(1) }

// EndCommit ends a BeginCommit.
func EndCommit() { committing.Add(-1) }

// Committing reports whether a commit section is running.
func Committing() bool { return committing.Load() > 0 }
