package data

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// How a forget-set file names its examples (ParseForget's second result,
// schema.ForgetInfo.Given).
const (
	GivenIDs   = "ids"   // 0-based positions in the training split
	GivenNames = "names" // image files, relative to the training split's folder
)

// ReadForget reads a forget-set file for the training split train: see
// ParseForget.
func ReadForget(path string, train *Split) ([]int, string, error) {
	f, err := fsread.Open(path, "ids file")
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	return ParseForget(f, path, train)
}

// ParseForget reads a forget-set file for the training split train and
// returns the ids it names, in file order, and how it named them
// (GivenIDs or GivenNames).
//
// The rule: the first line that is not blank or a comment decides. An
// integer makes the file an ids file, read as ParseIDs reads one; anything
// else makes it a list of file names, which only image folders have
// (Split.File): each line must then name an image of the training split by
// its path relative to the split folder ("cat/img_001.png"), optionally
// with the split folder in front ("train/cat/img_001.png"), '/' separating
// folders. A line of the other form (a name in an ids file, an id in a name
// list) is an error naming it; so are a name that is no training image,
// a repeated example (also under the two spellings), no examples at all
// and every example. In a name list '#' starts a comment only at the start
// of a line or after white space, so that "img#2.png" is a name. For data
// without file names (IDX, CIFAR, SVHN, npz) a name is an error saying that
// ids are positions there.
func ParseForget(r io.Reader, name string, train *Split) ([]int, string, error) {
	n := train.Len()
	var files []string
	if train.HasFiles() {
		files = make([]string, n)
		for i := range files {
			files[i] = train.File(i)
		}
	}
	return parseForget(r, name, n, files)
}

// integerLike reports whether s is an optional sign and decimal digits:
// an id, however large (ParseIDs then says what is wrong with it). No
// training image's name is one, since images lie in class folders.
func integerLike(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// nameText is a line of a file-name list without its comment (a '#' at
// the start of the line or after white space) and surrounding white space.
func nameText(line string) string {
	for i, c := range line {
		if c == '#' && (i == 0 || unicode.IsSpace(rune(line[i-1]))) {
			line = line[:i]
			break
		}
	}
	return strings.TrimSpace(line)
}

// looksLikeFile reports whether s looks like a file name rather than a
// mistyped id: it has a folder separator or an image extension.
func looksLikeFile(s string) bool {
	ext := strings.ToLower(filepath.Ext(s))
	return strings.ContainsAny(s, `/\`) || decodable[ext] || torchvisionExts[ext]
}

// lookupName finds the id of the training image name names: the path as
// given, cleaned ("./cat//a.png" is "cat/a.png"), then without a leading
// "train/".
func lookupName(index map[string]int, name string) (int, bool) {
	clean := path.Clean(name)
	for _, k := range []string{name, clean, strings.TrimPrefix(clean, "train/")} {
		if id, ok := index[k]; ok {
			return id, true
		}
	}
	return 0, false
}

// Listing is one split of a dataset example by example, as `unlearn data`
// prints it: the ids forget sets refer to, with what each one is.
type Listing struct {
	Data     string    `json:"data"`
	Format   string    `json:"format"`
	Split    string    `json:"split"`
	Examples []Example `json:"examples"`
}

// Example is one row of a Listing.
type Example struct {
	ID    int    `json:"id"`
	Label int    `json:"label"`
	Class string `json:"class,omitempty"` // the class name, when the dataset has them
	File  string `json:"file,omitempty"`  // image folders: the file, relative to the split folder
}

// List returns split ("train" or "test") of d in id order: for image
// folders torchvision's ImageFolder order, as ParseForget's names resolve.
func List(d *Dataset, split string) (*Listing, error) {
	var s *Split
	switch split {
	case "train":
		s = d.Train
	case "test":
		s = d.Test
	default:
		return nil, fmt.Errorf("split %q: must be train or test", split)
	}
	l := &Listing{Data: d.Path, Format: d.Format, Split: split, Examples: make([]Example, s.Len())}
	for i := range l.Examples {
		e := Example{ID: i, Label: s.Label(i), File: s.File(i)}
		if e.Label < len(d.ClassNames) {
			e.Class = d.ClassNames[e.Label]
		}
		l.Examples[i] = e
	}
	return l, nil
}

// WriteText writes l as tab-separated lines "id label class file" under a
// '#' header; a missing class or file is "-". The file column, cut out,
// is a forget file of names.
func (l *Listing) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s (%s), %s split, %d examples\n# id\tlabel\tclass\tfile\n",
		l.Data, l.Format, l.Split, len(l.Examples))
	for _, e := range l.Examples {
		fmt.Fprintf(bw, "%d\t%d\t%s\t%s\n", e.ID, e.Label, orDash(e.Class), orDash(e.File))
	}
	return bw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Bundled returns the bundled demo data (testdata/fashion) under the
// working directory or in the folder above the executable's (bin/unlearn
// finds ../testdata), or "" when neither has it.
func Bundled() string {
	cands := []string{"testdata/fashion"}
	if exe, err := os.Executable(); err == nil {
		// Not exe+"/../..": the kernel does not resolve ".." after a file.
		cands = append(cands, filepath.Join(filepath.Dir(exe), "..", "testdata", "fashion"))
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
	}
	return ""
}
