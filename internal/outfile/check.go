package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/setting"
)

// The kinds of refusal, for errors.Is. ErrCollision is a mistake on the
// command line (two flags naming one file); the others describe the file
// system.
var (
	// ErrCollision: an output is an input, lies inside an input folder,
	// or is another output.
	ErrCollision = errors.New("output path collides with another path")
	// ErrSymlink: the output path is a symbolic link; the link is never
	// replaced.
	ErrSymlink = errors.New("output path is a symbolic link")
	// ErrNotRegular: the output path exists and is a device, FIFO,
	// socket or folder.
	ErrNotRegular = errors.New("output path is not a regular file")
	// ErrFolder: the output's folder is missing or not writable.
	ErrFolder = errors.New("output folder unusable")
)

// Output is one file a command will write.
type Output struct {
	// Setting names the setting that gives the path ("metrics"); errors
	// start with it and the path, in their reader's terms ("--metrics
	// PATH" on the command line).
	Setting string
	// Label, when set, names the output in errors instead of Setting: the
	// experiment runner's "config exp.yaml, out:".
	Label setting.Message
	// Path is the file. "" (not requested) and "-" (standard output)
	// are skipped.
	Path string
	// Note, when set, follows the path in errors, for a path the user
	// did not type: "default: beside --out", "external data of --out".
	Note string
}

func (o Output) label() setting.Message {
	s := setting.Msgf("%s", setting.Use(o.Setting, o.Path))
	if o.Label != nil {
		s = setting.Msgf("%s %s", o.Label, o.Path)
	}
	if o.Note != "" {
		s = setting.Msgf("%s (%s)", s, o.Note)
	}
	return s
}

// Input is one file or folder a command reads.
type Input struct {
	// Setting names the setting that gives the path ("forget"); for a
	// positional argument it is empty. Name, when set, is what errors call
	// the input instead of "the forget input" ("model argument m.onnx").
	Setting string
	Name    string
	// Path is the file or folder; "" is skipped.
	Path string
	// Tree marks a folder whose every file is an input (a dataset):
	// no output may be the folder or lie anywhere inside it.
	Tree bool
}

// what names the input in errors: "the " + Name when set, else "the
// --forget input".
func (in Input) what() setting.Message {
	switch {
	case in.Name != "":
		return setting.Msgf("the %s", in.Name)
	case in.Setting != "":
		return setting.Msgf("the %s input", setting.Of(in.Setting))
	}
	return setting.Msgf("an input")
}

// Error is a refused output path: Label names the flag and the path,
// Msg says why, Kind is one of the Err values above.
type Error struct {
	Label, Msg setting.Message
	Kind       error
}

func (e *Error) Error() string { return e.text().Error() }

// Unwrap gives Kind, and the message as a *setting.Error, whose settings
// the command renders as flags.
func (e *Error) Unwrap() []error { return []error{e.text(), e.Kind} }

func (e *Error) text() error { return &setting.Error{Msg: setting.Msgf("%s: %s", e.Label, e.Msg)} }

// Check refuses, before any work, every output that would overwrite an
// input or another output, replace a link, a device, a FIFO, a socket or
// a folder, or cannot be written because its folder is missing or not
// writable. Files are compared as files: os.SameFile for paths that exist
// (which sees hard links and symbolic links), and otherwise absolute
// paths with symbolic links in their folders resolved. An output may not
// be a Tree input's folder nor lie anywhere inside it, and may not be the
// same file as any file in it. The first refusal is returned as an *Error.
func Check(outputs []Output, inputs []Input) error {
	var seen []Output
	for _, o := range outputs {
		if o.Path == "" || o.Path == "-" {
			continue
		}
		if err := checkOne(o, inputs, seen); err != nil {
			return err
		}
		seen = append(seen, o)
	}
	return nil
}

// maxNameLen is the longest file name Linux file systems take (NAME_MAX);
// maxTempExtra is what the longest temporary name adds to an output's name:
// "..", ".partial-", a PID of up to 7 digits and its ".HOST" tag (9),
// ".tmp-", another PID and tag, "-" and a base-36 uint64 of up to 13 digits.
const (
	maxNameLen   = 255
	maxTempExtra = 2 + len(".partial-") + 7 + 9 + len(".tmp-") + 7 + 9 + 1 + 13
)

func checkOne(o Output, inputs []Input, earlier []Output) error {
	fail := func(kind error, format string, a ...any) error {
		return &Error{Label: o.label(), Msg: setting.Msgf(format, a...), Kind: kind}
	}
	dir := filepath.Dir(o.Path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fail(ErrFolder, "folder %s does not exist", dir)
	}
	// The longest name written beside an output is its staged file's
	// temporary (..NAME.partial-PID.tmp-PID-RANDOM); a name that leaves no
	// room for it would fail only after the work.
	if n := len(filepath.Base(o.Path)); n+maxTempExtra > maxNameLen {
		return fail(ErrFolder, "file name of %d bytes: at most %d, since the temporary files written beside it add %d",
			n, maxNameLen-maxTempExtra, maxTempExtra)
	}
	lst, lerr := os.Lstat(o.Path)
	exists := lerr == nil
	if exists {
		if err := fileType(lst, o.Path); err != nil {
			return fail(err.Kind, "%s", err.Msg)
		}
	}
	if err := collision(o, exists, inputs, earlier); err != nil {
		return fail(ErrCollision, "%s", err)
	}
	if err := probe(dir); err != nil {
		return fail(ErrFolder, "folder %s is not writable (%v)", dir, err)
	}
	return nil
}

// fileType refuses an existing output path that is not a regular file.
func fileType(st fs.FileInfo, path string) *Error {
	m := st.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return &Error{Kind: ErrSymlink, Msg: setting.Msgf("is a symbolic link (to %s); outputs never replace a link: "+
			"pass the target path instead", target)}
	case m.IsDir():
		return &Error{Kind: ErrNotRegular, Msg: setting.Msgf("is a folder; give the path of a file to write")}
	case m.IsRegular():
		return nil
	}
	return &Error{Kind: ErrNotRegular, Msg: setting.Msgf("is a %s, not a regular file; outputs are only written to "+
		"regular files", fsread.FileKind(m))}
}

// collision says which input or earlier output o would overwrite, or nil.
func collision(o Output, exists bool, inputs []Input, earlier []Output) error {
	name := resolve(o.Path)
	for _, in := range inputs {
		if in.Path == "" {
			continue
		}
		ist, ierr := os.Stat(in.Path)
		if in.Tree && ierr == nil && ist.IsDir() {
			for _, d := range names(in.Path) {
				if within(d, name) {
					return setting.Textf("lies inside %s folder %s; outputs never go into an input dataset", in.what(), in.Path)
				}
			}
			if exists {
				if f := sameAsTreeFile(o.Path, in.Path); f != "" {
					return setting.Textf("is the same file as %s in %s folder; outputs never overwrite inputs", f, in.what())
				}
			}
			continue
		}
		if same(o.Path, name, exists, in.Path) {
			return setting.Textf("is %s; outputs never overwrite inputs", in.what())
		}
	}
	for _, e := range earlier {
		if same(o.Path, name, exists, e.Path) {
			what := e.Path
			if e.Note != "" {
				what += " (" + e.Note + ")"
			}
			return setting.Textf("is also the %s output %s; each output needs its own file", setting.Of(e.Setting), what)
		}
	}
	return nil
}

// same reports whether writing out (resolved: name) would write the file
// other: the same file when both exist, else the same resolved path.
func same(out, name string, exists bool, other string) bool {
	if exists {
		ost, err1 := os.Stat(out)
		st, err2 := os.Stat(other)
		if err1 == nil && err2 == nil {
			return os.SameFile(ost, st)
		}
	}
	for _, n := range names(other) {
		if n == name {
			return true
		}
	}
	return false
}

// resolve is path made absolute and clean, with the symbolic links of its
// folder resolved: the name under which a file that does not exist yet
// will be created. The last element is kept as it is.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return filepath.Join(dir, base)
}

// names are the resolved names of path: resolve's, and when path exists,
// the fully resolved one (following a link in its last element too).
func names(path string) []string {
	out := []string{resolve(path)}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		if a, err := filepath.Abs(r); err == nil && a != out[0] {
			out = append(out, a)
		}
	}
	return out
}

// within reports whether path is dir or lies inside it (both resolved).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// sameAsTreeFile returns the file under dir that is the same file as out
// (a hard link, or a symbolic link in dir pointing at out), or "".
func sameAsTreeFile(out, dir string) string {
	ost, err := os.Stat(out)
	if err != nil {
		return ""
	}
	found := ""
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil // an unreadable part of the dataset fails when it is read
		}
		if st, err := os.Stat(p); err == nil && os.SameFile(st, ost) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// probe creates and removes a file in dir: outputs are written through a
// temporary file beside them, so a folder that refuses one is found now
// rather than after the work.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".unlearn-probe-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return err
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// CheckDir checks an output folder that is written as a whole (a
// temporary folder beside it, renamed into place): its parent must exist
// and be writable, and the path must be absent or an empty folder that is
// not a symbolic link. An input cannot then lie inside it; an input that
// is the path itself (a file) is named as such.
func CheckDir(o Output, inputs []Input) error {
	fail := func(kind error, format string, a ...any) error {
		return &Error{Label: o.label(), Msg: setting.Msgf(format, a...), Kind: kind}
	}
	clean := filepath.Clean(o.Path)
	parent := filepath.Dir(clean)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return fail(ErrFolder, "folder %s does not exist", parent)
	}
	if st, err := os.Lstat(clean); err == nil {
		m := st.Mode()
		switch {
		case m&fs.ModeSymlink != 0:
			target, _ := os.Readlink(clean)
			return fail(ErrSymlink, "is a symbolic link (to %s); outputs never replace a link: "+
				"pass the target path instead", target)
		case !m.IsDir():
			for _, in := range inputs {
				if in.Path != "" && same(clean, resolve(clean), true, in.Path) {
					return fail(ErrCollision, "is %s; outputs never overwrite inputs", in.what())
				}
			}
			return fail(ErrNotRegular, "exists and is not a folder")
		}
		if ents, err := os.ReadDir(clean); err != nil || len(ents) > 0 {
			return fail(ErrNotRegular, "folder exists and is not empty")
		}
	}
	if err := probe(parent); err != nil {
		return fail(ErrFolder, "folder %s is not writable (%v)", parent, err)
	}
	return nil
}

// CheckResultsDir checks a results folder that a command fills over
// several runs (resumable: it may already exist and hold results). The
// path must be absent or a folder, not a symbolic link, not the root of
// the file system, not an input and not a Tree input's folder or anything
// inside one (a dataset would gain files); subs, the entries the command
// creates in it, must not be symbolic links either. Its parent must exist.
// The folder must be writable when it exists, and its parent when it does
// not (the run creates it there): a writable folder on a read-only parent,
// such as a volume mounted at /results in a container, is accepted.
func CheckResultsDir(o Output, inputs []Input, subs ...string) error {
	return checkResultsDir(o, inputs, subs, true)
}

// CheckResultsSource checks a results folder that a command only reads
// (`unlearn score --gather`, which writes its outputs where they are
// checked as outputs): the rules of CheckResultsDir without writability,
// so that a finished audit on read-only storage can be gathered again
// with its outputs elsewhere.
func CheckResultsSource(o Output, inputs []Input, subs ...string) error {
	return checkResultsDir(o, inputs, subs, false)
}

// CheckResults checks a resumable results folder dir (CheckResultsDir,
// or CheckResultsSource for a run that only reads it: gather) with the
// entries subs it creates, then the files written beside its results
// (Check). A file in a folder that does not exist yet can meet no input or
// link: the run creates the folder.
func CheckResults(dir Output, inputs []Input, gather bool, subs []string, files ...Output) error {
	check := CheckResultsDir
	if gather {
		check = CheckResultsSource
	}
	if err := check(dir, inputs, subs...); err != nil {
		return err
	}
	var outs []Output
	for _, f := range files {
		if _, err := os.Stat(dir.Path); err == nil || filepath.Clean(filepath.Dir(f.Path)) != filepath.Clean(dir.Path) {
			outs = append(outs, f)
		}
	}
	return Check(outs, inputs)
}

// writable tells whether files can be created in dir (probe). Tests stand
// in for it where they cannot mount a read-only file system: root passes
// permission bits, so a chmod'd folder does not show the refusal.
var writable = probe

func checkResultsDir(o Output, inputs []Input, subs []string, write bool) error {
	fail := func(kind error, format string, a ...any) error {
		return &Error{Label: o.label(), Msg: setting.Msgf(format, a...), Kind: kind}
	}
	clean := filepath.Clean(o.Path)
	if abs := resolve(clean); filepath.Dir(abs) == abs {
		return fail(ErrCollision, "is the root of the file system; results are written into a folder of their own")
	}
	parent := filepath.Dir(clean)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return fail(ErrFolder, "folder %s does not exist", parent)
	}
	exists := false
	if st, err := os.Lstat(clean); err == nil {
		exists = true
		switch m := st.Mode(); {
		case m&fs.ModeSymlink != 0:
			target, _ := os.Readlink(clean)
			return fail(ErrSymlink, "is a symbolic link (to %s); pass the target path instead", target)
		case !m.IsDir():
			return fail(ErrNotRegular, "exists and is not a folder")
		}
	}
	abs := resolve(clean)
	for _, in := range inputs {
		if in.Path == "" {
			continue
		}
		// A dataset given as a link is compared by the folder it leads to
		// too (names resolves the last element), as collision does: a
		// linked dataset let results be written into the real folder.
		if in.Tree && slices.ContainsFunc(names(in.Path), func(d string) bool { return within(d, abs) }) {
			return fail(ErrCollision, "is or lies inside %s, a dataset: results would be written among its files", in.what())
		}
		if same(clean, abs, exists, in.Path) {
			return fail(ErrCollision, "is %s; outputs never overwrite inputs", in.what())
		}
	}
	for _, s := range subs {
		if st, err := os.Lstat(filepath.Join(clean, s)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fail(ErrSymlink, "holds %s, a symbolic link; the results are written only into folders of its own", s)
		}
	}
	switch {
	case !write:
	case exists:
		if err := writable(clean); err != nil {
			return fail(ErrFolder, "folder is not writable (%v)", err)
		}
	default:
		if err := writable(parent); err != nil {
			return fail(ErrFolder, "does not exist and cannot be created: folder %s is not writable (%v)", parent, err)
		}
	}
	return nil
}
