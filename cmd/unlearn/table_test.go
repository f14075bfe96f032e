package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/unlearn"
	"github.com/unlearn-tool/unlearn/unlearn/scoring"
)

// specPaths are the paths of unlearn.Spec's settings: its fields, with a
// nested struct's (Recipe) by their paths in it; an Opt is one setting.
func specPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Struct && !strings.HasPrefix(f.Type.Name(), "Opt[") {
			out = append(out, specPaths(f.Type, prefix+f.Name+".")...)
			continue
		}
		out = append(out, prefix+f.Name)
	}
	return out
}

// TestMethodTable: the main command's table binds every field of
// unlearn.Spec to one flag, and names no field Spec lacks, so that a
// setting the library adds gets a flag, and an error that names a field
// names its flag. Recipe.Settings, the algorithms' own settings by name,
// has one flag per registered setting (Recipe.Settings.NAME).
func TestMethodTable(t *testing.T) {
	rows := (&methodOpts{}).table()
	byPath := map[string]string{}
	var own []string
	for _, r := range rows {
		if name, ok := strings.CutPrefix(r.field, "Recipe.Settings."); ok {
			if name != r.flag.Names()[0] {
				t.Errorf("--%s sets %s", r.flag.Names()[0], r.field)
			}
			own = append(own, name)
			continue
		}
		if r.field == "" {
			continue
		}
		if prev, ok := byPath[r.field]; ok {
			t.Errorf("field %s has two flags, --%s and --%s", r.field, prev, r.flag.Names()[0])
		}
		byPath[r.field] = r.flag.Names()[0]
	}
	var want []string
	for _, s := range unlearn.AlgorithmSettings() {
		want = append(want, s.Name)
	}
	if strings.Join(own, " ") != strings.Join(want, " ") || len(own) == 0 {
		t.Errorf("the algorithms' settings have flags %v; want %v", own, want)
	}
	byPath["Recipe.Settings"] = "(one per setting)"
	paths := specPaths(reflect.TypeFor[unlearn.Spec](), "")
	for _, p := range paths {
		if _, ok := byPath[p]; !ok {
			t.Errorf("unlearn.Spec.%s has no flag in the main command's table", p)
		}
		delete(byPath, p)
	}
	for p, f := range byPath {
		t.Errorf("--%s sets %s, which is not a field of unlearn.Spec", f, p)
	}
}

// TestMethodTableKeys: where an experiment file's method row has the
// setting a table row sets (experiment.Method's field of the same name as
// the path's last element), its key is the flag's name in the file's
// spelling (setting.AsKey), so that a setting reads the same in both.
func TestMethodTableKeys(t *testing.T) {
	keys := map[string]string{}
	mt := reflect.TypeFor[experiment.Method]()
	for i := range mt.NumField() {
		f := mt.Field(i)
		keys[f.Name] = strings.Split(f.Tag.Get("yaml"), ",")[0]
	}
	matched := 0
	for _, r := range (&methodOpts{}).table() {
		last := r.field[strings.LastIndexByte(r.field, '.')+1:]
		key, ok := keys[last]
		if r.field == "" || !ok {
			continue
		}
		matched++
		if want := setting.AsKey(r.flag.Names()[0]); key != want {
			t.Errorf("--%s sets %s, whose experiment key is %q; want %q", r.flag.Names()[0], r.field, key, want)
		}
	}
	if matched < 12 { // method, strategy, algorithm, epochs, lr, schedule, max_epochs, …
		t.Errorf("only %d of the table's settings are in an experiment file's method row", matched)
	}
}

// TestTableTerms: an error of a command naming a field path reads as the
// flag of the command's table, with the value as given; a negated flag
// reads as its false form; in an experiment file, as the file's key.
func TestTableTerms(t *testing.T) {
	main, score := (&methodOpts{}).table(), &scoreOptions{}
	score.own = score.scoreTable()
	for _, c := range []struct {
		rows []row
		err  error
		want string
	}{
		{main, setting.FieldErrorf("Recipe.MaxEpochs", " %d: must be ≥ 0", -2), "--max-epochs -2: must be ≥ 0"},
		{main, setting.FieldErrorf("ModelPath", " is required"), "--model is required"},
		{main, setting.Textf("%s %s: no", setting.FieldUse("Recipe.Schedule", "auto"),
			setting.FieldUse("Recipe.NoProxies", true)), "--schedule auto --proxies=false: no"},
		{main, setting.Textf("pass %s", setting.Use("no-mia", "")), "pass --no-mia"},
		{main, setting.InFile(setting.FieldErrorf("Recipe.MaxEpochs", " -2: bad")), "max_epochs -2: bad"},
		{score.tableRows(), setting.Under("Oracle", setting.FieldErrorf("LR", " 0: bad")), "--train-lr 0: bad"},
		{score.tableRows(), setting.FieldErrorf("ReportPath", " x"), "--html x"},
		{(&trainOptions{}).table(), setting.FieldErrorf("WeightDecay", " -1: bad"), "--weight-decay -1: bad"},
	} {
		if got := render(inTable{c.err, c.rows}); got != c.want {
			t.Errorf("render(%q) = %q, want %q", c.err, got, c.want)
		}
	}
	err := action(failing{main})(nil)
	if it := (inTable{}); !errors.As(err, &it) || len(it.rows) != len(main) || !isUsage(err) {
		t.Errorf("action of a command with a table: %v is not marked with it, or no longer a usage error", err)
	}
}

// failing is a command with a table whose settings are refused.
type failing struct{ rows []row }

func (failing) complete(*cli.Context) error { return nil }
func (failing) validate() error             { return usagef("refused") }
func (failing) run(*cli.Context) error      { return nil }
func (f failing) tableRows() []row          { return f.rows }

// TestScoreTable: every field path of score's own table is a field of
// scoring.Job, of the type its flag writes (the Destination is the field).
func TestScoreTable(t *testing.T) {
	o := &scoreOptions{}
	for _, r := range o.scoreTable() {
		f, ok := reflect.TypeFor[scoring.Job](), true
		for _, name := range strings.Split(r.field, ".") {
			var sf reflect.StructField
			if sf, ok = f.FieldByName(name); !ok {
				break
			}
			f = sf.Type
		}
		if !ok {
			t.Errorf("--%s sets %s, which is not a field of scoring.Job", r.flag.Names()[0], r.field)
		}
	}
	if err := (&cli.App{Flags: flagsOf(o.scoreTable()), Action: func(*cli.Context) error { return nil }}).Run(
		[]string{"x", "--results", "r", "--k", "20", "--train-lr", "0.1", "--bootstrap-seed", "5"}); err != nil {
		t.Fatal(err)
	}
	if j := o.audit; j.Dir != "r" || j.K != 20 || j.Oracle.LR != 0.1 || j.Bootstrap.Seed != 5 || j.TestSample != 2000 {
		t.Errorf("flags set %+v", j)
	}
}
