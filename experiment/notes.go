package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// MaxNotesSize bounds the notes file RESULTS.md includes.
const MaxNotesSize = 1 << 20

// MaxConfigSize bounds an experiment file.
const MaxConfigSize = 1 << 20

// notesPath resolves notes, as an experiment file in folder dir names it,
// to a path from the current directory: notes must be relative, stay
// inside dir, pass through no symbolic link, and name a regular file of
// at most MaxNotesSize bytes (or none yet: RESULTS.md is written after
// the grid, and its reading says so then).
func notesPath(dir, notes string) (string, error) {
	if !filepath.IsLocal(notes) {
		return "", fmt.Errorf("%w: notes %q: must be a relative path inside the experiment file's folder %s", ErrConfig,
			clip(notes), dir)
	}
	if _, err := readNotes(dir, notes); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return filepath.Join(dir, notes), nil
}

// readNotes checks the path notes under dir (checkNotes, whose errors say
// what is wrong in the experiment file's terms), then reads the file
// through fsread.FileBeneath: every folder on the way opened relative to
// the one before and checked to be the folder checked, the file read from
// the descriptor opened, with one hard link. A folder swapped for a link
// between the check and the read (/etc/shadow reached RESULTS.md that
// way) or a hard link to a file elsewhere is refused.
func readNotes(dir, notes string) ([]byte, error) {
	if _, err := checkNotes(dir, notes); err != nil {
		return nil, err
	}
	b, err := fsread.FileBeneath(dir, notes, "notes file", MaxNotesSize)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: notes %q: %w", ErrConfig, clip(notes), err)
	}
	return b, err
}

// checkNotes checks, without following links, every element of the path
// notes under dir: folders, then a regular file of at most MaxNotesSize
// bytes, which it returns the information of.
func checkNotes(dir, notes string) (os.FileInfo, error) {
	elems := strings.Split(filepath.Clean(notes), string(filepath.Separator))
	p := dir
	for i, e := range elems {
		p = filepath.Join(p, e)
		st, err := os.Lstat(p)
		if err != nil {
			return nil, fmt.Errorf("notes %s: %w", p, err)
		}
		switch m := st.Mode(); {
		case m&os.ModeSymlink != 0:
			return nil, fmt.Errorf("%w: notes %q: %s is a symbolic link; the notes must lie inside the experiment file's "+
				"folder %s, without links", ErrConfig, notes, p, dir)
		case i < len(elems)-1 && !m.IsDir():
			return nil, fmt.Errorf("%w: notes %q: %s is not a folder", ErrConfig, notes, p)
		case i == len(elems)-1 && !m.IsRegular():
			return nil, fmt.Errorf("%w: notes %q: %s is not a regular file (a %s)", ErrConfig, notes, p, kind(m))
		case i == len(elems)-1 && st.Size() > MaxNotesSize:
			return nil, fmt.Errorf("%w: notes %q: %s has %d bytes, more than the %d a notes file can have", ErrConfig, notes, p,
				st.Size(), MaxNotesSize)
		}
		if i == len(elems)-1 {
			return st, nil
		}
	}
	return nil, fmt.Errorf("%w: notes %q: no file named", ErrConfig, notes)
}

func kind(m os.FileMode) string {
	if m.IsDir() {
		return "folder"
	}
	return fsread.FileKind(m)
}

// ReadNotes reads the config's notes file (nil when it names none) with
// the checks of Load: inside the experiment file's folder, no link on the
// way, a regular file with one hard link of at most MaxNotesSize bytes,
// read from the descriptor those checks were made on (readNotes).
func (c *Config) ReadNotes() ([]byte, error) {
	if c.Notes == "" {
		return nil, nil
	}
	dir, rel := c.notesDir, c.notesRel
	if dir == "" {
		// A Config not from Load: Notes is relative to the current
		// directory, with the same rules.
		dir, rel = ".", c.Notes
		if _, err := notesPath(dir, rel); err != nil {
			return nil, err
		}
	}
	return readNotes(dir, rel)
}
