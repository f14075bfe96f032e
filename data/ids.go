package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// ReadIDs reads an ids file naming the forget set: see ParseIDs.
func ReadIDs(path string, n int) ([]int, error) {
	f, err := fsread.Open(path, "ids file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseIDs(f, path, n)
}

// ParseIDs reads ids, one 0-based index into a training split of n examples
// per line, in file order. '#' starts a comment (a whole line or the end of
// one); blank lines, surrounding whitespace and a UTF-8 byte order mark at
// the start are ignored. name is used in
// errors ("ids.txt:7: id 60000 out of range [0, 60000)"). Negative, non-integer,
// out-of-range and repeated ids are errors, and so are a file with no ids and
// one that names every training example (nothing would be left to retain).
// ParseForget also reads file names, for image folders.
func ParseIDs(r io.Reader, name string, n int) ([]int, error) {
	ids, _, err := parseForget(r, name, n, nil)
	return ids, err
}

// parseForget reads a forget-set file of ids or, when files (the relative
// path of each of the n training examples) is not nil, of file names: the
// first line that is not blank or a comment decides which (an integer:
// ids), and every later line must be of the same form. It returns the ids
// in file order and GivenIDs or GivenNames.
func parseForget(r io.Reader, name string, n int, files []string) ([]int, string, error) {
	br := bufio.NewReader(r)
	var (
		ids       []int
		given     string
		firstLine int
		index     map[string]int // relative file name -> id, for names
	)
	seen := map[int]int{} // id -> line
	var cols tableColumns // set by a header line
	for line := 1; ; line++ {
		raw, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, "", &FileError{Path: name, Line: line, Err: rerr}
		}
		if line == 1 {
			// A UTF-8 byte order mark, as some Windows editors write, is
			// not part of the first id.
			raw = strings.TrimPrefix(raw, "\uFEFF")
		}
		text := raw
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text != "" {
			lineErr := func(format string, args ...any) error {
				return &FileError{Path: name, Line: line, Err: fmt.Errorf(format, args...)}
			}
			// A line is quoted only once an earlier line was read as an id
			// or a name, i.e. the file is a forget file: the first line of
			// a file that is none (--forget /etc/shadow) is never printed.
			quote := func(s string) string {
				if len(ids) == 0 {
					return "the line"
				}
				return strconv.Quote(shorten(s))
			}
			if given == "" && cols.sep == "" {
				// A header line naming the id (or file) column makes the
				// file a table of comma- or tab-separated fields.
				if c, ok := headerColumn(text); ok {
					cols = c
					if !cols.ids && files == nil {
						return nil, "", lineErr("the header names column %q, and this dataset has no file "+
							"names: a forget table needs an id column", cols.name)
					}
					continue
				}
			}
			if fields := nonEmptyFields(text); cols.sep == "" && strings.ContainsAny(text, ",\t") &&
				len(fields) > 0 && integerLike(fields[0]) {
				// An id followed by more fields (a name with a comma is left
				// whole: its first field is no integer).
				if len(fields) > 1 {
					return nil, "", lineErr("%s has %d fields: a forget file with several columns needs a "+
						"header line naming its id column (id,label,...)", quote(text), len(fields))
				}
				// "12," (a spreadsheet's one-column CSV) is the id 12.
				text = strings.Join(fields, "")
			}
			isID := integerLike(text)
			if cols.sep != "" {
				if !cols.ids {
					// In a file name, '#' starts a comment only at the start of
					// the line or after white space: "img#2.png" is a name.
					text = nameText(raw)
				}
				fields := strings.Split(text, cols.sep)
				if cols.col >= len(fields) {
					return nil, "", lineErr("%s has %d field%s, and the header's %q column is field %d",
						quote(text), len(fields), map[bool]string{true: "", false: "s"}[len(fields) == 1], cols.name,
						cols.col+1)
				}
				text = strings.TrimSpace(fields[cols.col])
				isID = integerLike(text)
				if cols.ids != isID {
					return nil, "", lineErr("%s in the %q column is not %s", quote(text), cols.name,
						map[bool]string{true: "an integer id", false: "a file name"}[cols.ids])
				}
			} else if !isID && files != nil {
				text = nameText(raw)
			}
			if given == "" {
				given, firstLine = GivenIDs, line
				if !isID && files != nil {
					given = GivenNames
					index = make(map[string]int, len(files))
					for id, f := range files {
						index[f] = id
					}
				}
			}
			var id int
			switch {
			case given == GivenIDs && !isID && files != nil:
				return nil, "", lineErr("%q is not an integer id, and line %d gives an id: "+
					"a forget file lists ids or file names, not both", shorten(text), firstLine)
			case given == GivenIDs && !isID && looksLikeFile(text):
				return nil, "", lineErr("%s is not an integer id: this dataset has no file names, "+
					"so ids are 0-based positions in its training split (`unlearn data` lists "+
					"them); only image folders take file names", quote(text))
			case given == GivenIDs:
				v, err := strconv.ParseInt(text, 10, 64)
				switch {
				case errors.Is(err, strconv.ErrRange):
					return nil, "", lineErr("id %s out of range [0, %d)", shorten(text), n)
				case err != nil:
					return nil, "", lineErr("%s is not an integer id", quote(text))
				case v < 0:
					return nil, "", lineErr("negative id %d", v)
				case v >= int64(n):
					return nil, "", lineErr("id %d out of range [0, %d)", v, n)
				}
				id = int(v)
			case isID:
				return nil, "", lineErr("%q is an id, and line %d names a file: "+
					"a forget file lists ids or file names, not both", shorten(text), firstLine)
			default:
				var ok bool
				if id, ok = lookupName(index, text); !ok {
					return nil, "", lineErr("%s is not an image of the training split (names are "+
						"paths relative to the split folder, like %q)", quote(text), files[0])
				}
			}
			if prev, dup := seen[id]; dup {
				if given == GivenNames {
					return nil, "", lineErr("%q repeats line %d (both name %s, id %d)", shorten(text), prev, files[id], id)
				}
				return nil, "", lineErr("id %d repeats line %d", id, prev)
			}
			seen[id] = line
			ids = append(ids, id)
		}
		if rerr == io.EOF {
			break
		}
	}
	if len(ids) == 0 {
		return nil, "", &FileError{Path: name, Err: errors.New("no ids (the forget set would be empty)")}
	}
	if len(ids) == n {
		what := "ids name"
		if given == GivenNames {
			what = "file names cover"
		}
		return nil, "", &FileError{Path: name, Err: fmt.Errorf(
			"%s all %d training examples; nothing would be left to retain", what, n)}
	}
	return ids, given, nil
}

// tableColumns is the column a forget table's header names: its index,
// the separator of its fields (a comma or a tab), its name and whether it
// holds ids (else file names).
type tableColumns struct {
	sep, name string
	col       int
	ids       bool
}

// headerColumn reads a header line of a forget table ("id,label" or
// "id\tlabel\tclass\tfile", as spreadsheets and `unlearn data` write): the
// fields, split at commas or else at tabs, one of which is id (or else
// file, name or path; case and surrounding white space ignored).
func headerColumn(text string) (tableColumns, bool) {
	sep := ","
	if !strings.Contains(text, sep) {
		sep = "\t"
	}
	fields := strings.Split(text, sep)
	for _, want := range []string{"id", "file", "name", "path"} {
		for i, f := range fields {
			if strings.EqualFold(strings.TrimSpace(f), want) {
				return tableColumns{sep: sep, name: strings.TrimSpace(f), col: i, ids: want == "id"}, true
			}
		}
	}
	return tableColumns{}, false
}

// nonEmptyFields splits a line at commas and tabs and drops the empty
// fields.
func nonEmptyFields(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == '\t' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// ForgetRetain splits 0..n-1 into the sorted, de-duplicated forget ids and
// their sorted complement. Ids outside [0, n) are ignored; ids from
// ParseIDs/ReadIDs never are.
func ForgetRetain(n int, ids []int) (forget, retain []int) {
	if n < 0 {
		n = 0
	}
	in := make([]bool, n)
	for _, id := range ids {
		if id >= 0 && id < n {
			in[id] = true
		}
	}
	forget = make([]int, 0, len(ids))
	retain = make([]int, 0, n)
	for i, f := range in {
		if f {
			forget = append(forget, i)
		} else {
			retain = append(retain, i)
		}
	}
	return forget, retain
}
