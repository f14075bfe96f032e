package data

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseIDs(t *testing.T) {
	in := "# forget these\n  7\n\n3 # trailing comment\r\n\t0\n+12\n5"
	ids, err := ParseIDs(strings.NewReader(in), "ids.txt", 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{7, 3, 0, 12, 5}; !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v (file order)", ids, want)
	}
	// A UTF-8 byte order mark before the first id is not part of it.
	if ids, err := ParseIDs(strings.NewReader("\uFEFF4\n2\n"), "bom.txt", 10); err != nil || !slices.Equal(ids, []int{4, 2}) {
		t.Errorf("with a BOM: %v, %v", ids, err)
	}
}

func TestParseIDsErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
		line int
	}{
		{"1\n2\n3\n4\n5\n6\n60000\n", 60000, "ids.txt:7: id 60000 out of range [0, 60000)", 7},
		{"1\n-2\n", 10, "ids.txt:2: negative id -2", 2},
		{"1\n\n2.5\n", 10, `ids.txt:3: "2.5" is not an integer id`, 3},
		{"abc", 10, `ids.txt:1: the line is not an integer id`, 1},
		{"1 2\n", 10, `ids.txt:1: the line is not an integer id`, 1},
		{"4\n# x\n5\n4 # again\n", 10, "ids.txt:4: id 4 repeats line 1", 4},
		{"99999999999999999999999\n", 10, "ids.txt:1: id 99999999999999999999999 out of range [0, 10)", 1},
		// A 100,000-digit id is cut in the message, not echoed in full.
		{strings.Repeat("9", 100000) + "\n", 10, "ids.txt:1: id " + strings.Repeat("9", 40) + "… out of range [0, 10)", 1},
		{"# nothing\n\n   \n", 10, "ids.txt: no ids", 0},
		{"", 10, "ids.txt: no ids", 0},
		{"0\n2\n1\n", 3, "ids.txt: ids name all 3 training examples; nothing would be left to retain", 0},
	} {
		_, err := ParseIDs(strings.NewReader(c.in), "ids.txt", c.n)
		wantErr(t, err, c.want)
		var fe *FileError
		if !errors.As(err, &fe) || fe.Line != c.line || fe.Path != "ids.txt" {
			t.Errorf("%q: error %#v, want line %d", c.in, err, c.line)
		}
	}
}

func TestReadIDs(t *testing.T) {
	p := writeFile(t, t.TempDir(), "forget.txt", []byte("3\n1\n"))
	ids, err := ReadIDs(p, 5)
	if err != nil || !slices.Equal(ids, []int{3, 1}) {
		t.Fatalf("ids %v err %v", ids, err)
	}
	_, err = ReadIDs(filepath.Join(t.TempDir(), "none.txt"), 5)
	wantErr(t, err, "none.txt")
	p = writeFile(t, t.TempDir(), "bad.txt", []byte("3\n9\n"))
	_, err = ReadIDs(p, 5)
	wantErr(t, err, p+":2: id 9 out of range [0, 5)")
}

func TestForgetRetain(t *testing.T) {
	ids := []int{7, 3, 0, 3}
	before := slices.Clone(ids)
	forget, retain := ForgetRetain(9, ids)
	if !slices.Equal(forget, []int{0, 3, 7}) || !slices.Equal(retain, []int{1, 2, 4, 5, 6, 8}) {
		t.Fatalf("forget %v retain %v", forget, retain)
	}
	if !slices.Equal(ids, before) {
		t.Errorf("input modified: %v", ids)
	}
	forget, retain = ForgetRetain(3, []int{-1, 5, 1})
	if !slices.Equal(forget, []int{1}) || !slices.Equal(retain, []int{0, 2}) {
		t.Errorf("out-of-range ids: forget %v retain %v", forget, retain)
	}
}

func FuzzParseIDs(f *testing.F) {
	f.Add("1\n2 # c\n# x\n\n3", 10)
	f.Add("-1", 5)
	f.Add("1\n1", 5)
	f.Add("\xff\x00#\r\n 4\t", 60000)
	f.Add("0", 1)
	f.Fuzz(func(t *testing.T, in string, n int) {
		if n > 1<<20 {
			n = 1 << 20
		}
		ids, err := ParseIDs(strings.NewReader(in), "fuzz.txt", n)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(ids) == 0 || len(ids) >= n {
			t.Fatalf("%d ids for n=%d accepted", len(ids), n)
		}
		seen := map[int]bool{}
		for _, id := range ids {
			if id < 0 || id >= n || seen[id] {
				t.Fatalf("bad id %d (n=%d, seen %v)", id, n, seen[id])
			}
			seen[id] = true
		}
		forget, retain := ForgetRetain(n, ids)
		if len(forget) != len(ids) || len(forget)+len(retain) != n {
			t.Fatalf("forget %d retain %d ids %d n %d", len(forget), len(retain), len(ids), n)
		}
	})
}

// TestIDsErrorsQuoteNoUnrecognizedLine (issue 64, item 8): the first line
// of a file that is no forget file (/etc/shadow given as --forget or ids:)
// is named by file and line, never printed; a bad line after ids were read
// is quoted, cut to 40 characters.
func TestIDsErrorsQuoteNoUnrecognizedLine(t *testing.T) {
	const secret = "root:$6$saltsalt$hashhashhash:19000:0:99999:7:::"
	for _, text := range []string{secret + "\n", "# comment\n\n" + secret + "\n1\n"} {
		_, err := ParseIDs(strings.NewReader(text), "shadow", 10)
		if err == nil || strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "shadow:") || !strings.Contains(err.Error(), "not an integer id") {
			t.Errorf("%q: %v; want file and line, what was expected, and no content", text, err)
		}
	}
	_, err := ParseIDs(strings.NewReader("1\n"+secret+"\n"), "ids.txt", 10)
	if err == nil || !strings.Contains(err.Error(), `ids.txt:2: "root:$6$saltsalt$hashhashhash:19000:0:99…" is not an integer id`) {
		t.Errorf("a bad line after an id: %v", err)
	}
}

// Forget tables: a header line naming the id column makes every later line
// a row of comma- (or tab-) separated fields, of which that column is read;
// without a header, a line that holds an id and more fields is refused
// (it could be a table whose other columns would be read as ids), and a
// trailing comma is ignored.
func TestParseIDsTables(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []int
	}{
		{"csv header", "id,label\n7,3\n2,1\n", []int{7, 2}},
		{"short row", "id,label\n7,3\n2\n", []int{7, 2}},
		{"id not first", "\uFEFFlabel, ID ,class\r\n3,7,pullover\n1,2,sandal\n", []int{7, 2}},
		{"tab header", "# from a listing\nid\tlabel\tclass\tfile\n7\t3\tDress\t-\n2\t1\tTrouser\t-\n", []int{7, 2}},
		{"one column", "id\n7\n2\n", []int{7, 2}},
		{"trailing commas", "7,\n2,,\n", []int{7, 2}},
	} {
		ids, err := ParseIDs(strings.NewReader(c.in), "ids.csv", 10)
		if err != nil || !slices.Equal(ids, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, ids, err, c.want)
		}
	}
	for _, c := range []struct {
		in, want string
		line     int
	}{
		{"7,3\n2,1\n", `ids.csv:1: the line has 2 fields: a forget file with several columns needs a header line ` +
			`naming its id column (id,label,...)`, 1},
		{"7\n2\t1\tTrouser\n", `ids.csv:2: "2\t1\tTrouser" has 3 fields`, 2},
		{"label,id\n3,7\n1\n", `ids.csv:3: "1" has 1 field, and the header's "id" column is field 2`, 3},
		{"id,label\n7,3\nx,1\n", `ids.csv:3: "x" in the "id" column is not an integer id`, 3},
		{"file\ncat/a.png\n", `ids.csv:1: the header names column "file", and this dataset has no file names`, 1},
		{"id,label\n7,3\n7,1\n", "ids.csv:3: id 7 repeats line 2", 3},
	} {
		_, err := ParseIDs(strings.NewReader(c.in), "ids.csv", 10)
		wantErr(t, err, c.want)
		var fe *FileError
		if c.line > 0 && (!errors.As(err, &fe) || fe.Line != c.line) {
			t.Errorf("%q: error %v, want line %d", c.in, err, c.line)
		}
	}
}
