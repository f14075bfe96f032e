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
func ParseIDs(r io.Reader, name string, n int) ([]int, error) {
	br := bufio.NewReader(r)
	var ids []int
	seen := map[int]int{} // id -> line
	for line := 1; ; line++ {
		text, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, &FileError{Path: name, Line: line, Err: rerr}
		}
		if line == 1 {
			// A UTF-8 byte order mark, as some Windows editors write, is
			// not part of the first id.
			text = strings.TrimPrefix(text, "\uFEFF")
		}
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text != "" {
			lineErr := func(format string, args ...any) error {
				return &FileError{Path: name, Line: line, Err: fmt.Errorf(format, args...)}
			}
			v, err := strconv.ParseInt(text, 10, 64)
			switch {
			case errors.Is(err, strconv.ErrRange):
				return nil, lineErr("id %s out of range [0, %d)", shorten(text), n)
			case err != nil:
				return nil, lineErr("%q is not an integer id", shorten(text))
			case v < 0:
				return nil, lineErr("negative id %d", v)
			case v >= int64(n):
				return nil, lineErr("id %d out of range [0, %d)", v, n)
			}
			id := int(v)
			if prev, dup := seen[id]; dup {
				return nil, lineErr("id %d repeats line %d", id, prev)
			}
			seen[id] = line
			ids = append(ids, id)
		}
		if rerr == io.EOF {
			break
		}
	}
	if len(ids) == 0 {
		return nil, &FileError{Path: name, Err: errors.New("no ids (the forget set would be empty)")}
	}
	if len(ids) == n {
		return nil, &FileError{Path: name, Err: fmt.Errorf("ids name all %d training examples; nothing would be left to retain", n)}
	}
	return ids, nil
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
