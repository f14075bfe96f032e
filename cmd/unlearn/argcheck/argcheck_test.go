package argcheck

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestRepeated (issue 64, item 10): a single-valued flag given twice with
// different values is refused naming both, in either spelling, at the top
// level and in a command; the same value twice, a list flag repeated, an
// argument after "--" and a value that looks like a flag pass.
func TestRepeated(t *testing.T) {
	top := []cli.Flag{&cli.IntFlag{Name: "epochs"}, &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}}}
	cmds := []*cli.Command{{Name: "score", Flags: []cli.Flag{&cli.StringFlag{Name: "results"}, &cli.StringSliceFlag{Name: "oracle"}}}}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"u", "score", "--results", "a", "--results", "b"}, "--results is given twice, as --results a and --results b"},
		{[]string{"u", "score", "--results=a", "-results", "b"}, "as --results a and --results b"},
		{[]string{"u", "--epochs", "2", "--epochs=3"}, "--epochs is given twice"},
		{[]string{"u", "--quiet", "-q=false"}, "--quiet is given twice, as --quiet true and --q false"},
		{[]string{"u", "score", "--results", "a", "--results", "a"}, ""},
		{[]string{"u", "score", "--oracle", "a", "--oracle", "b"}, ""},
		{[]string{"u", "score", "--results", "a", "--", "--results", "b"}, ""},
		{[]string{"u", "--epochs", "2"}, ""},
		{[]string{"u"}, ""},
	} {
		err := Repeated(top, cmds, c.args)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
