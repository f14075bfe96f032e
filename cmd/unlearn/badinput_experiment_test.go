package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

// goodExperiment is a small experiment file the cases of experimentCases
// change one thing in; out is its out folder.
func goodExperiment(out string) string {
	return "data: testdata/fashion\narchitecture: testdata/resnet_small_train.onnx\ntrain: {epochs: 1, lr: 0.05}\n" +
		"forget_sets: [{name: iid, kind: iid, fraction: 0.01}]\nseeds: [0]\nthreads: 2\nout: " + out + "\n" +
		"methods: [{name: Finetune, method: finetune, epochs: 1, lr: 0.05}]\n"
}

// experimentFixtures writes the experiment files of experimentCases under
// root/regimes/ (fixture "exp-<name>"; its out folder, which no case
// may create, is fixture "exp-<name>-out").
func experimentFixtures(t *testing.T, fx *badFixtures) {
	dir := filepath.Join(fx.root, "experiments")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exp := func(name string, edit func(string) string) {
		out := filepath.Join(dir, "out-"+name)
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(edit(goodExperiment(out))), 0o644); err != nil {
			t.Fatal(err)
		}
		fx.m["exp-"+name], fx.m["exp-"+name+"-out"] = p, out
	}
	replace := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				panic("no " + old)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	exp("escaping-name", replace("name: iid,", `name: "/../../../../victim",`))
	exp("batch-2e9", replace("lr: 0.05}", "lr: 0.05, batch_size: 2000000000}"))
	exp("batch-negative", replace("lr: 0.05}", "lr: 0.05, batch_size: -5}"))
	exp("lr-inf", replace("{epochs: 1, lr: 0.05}", "{epochs: 1, lr: .inf}"))
	exp("momentum-nan", replace("lr: 0.05}", "lr: 0.05, momentum: .nan}"))
	exp("weight-decay-nan", replace("lr: 0.05}", "lr: 0.05, weight_decay: .nan}"))
	exp("epochs-9e18", replace("{epochs: 1,", "{epochs: 9000000000000000000,"))
	exp("duplicate-seeds", replace("seeds: [0]", "seeds: [0, 0]"))
	exp("method-lr-nan", replace("epochs: 1, lr: 0.05}]", "epochs: 1, lr: .nan}]"))
	// out: under the output rules of every command (item 6).
	inData := filepath.Join(fx.p("idx-good"), "out")
	exp("out-in-data", func(s string) string {
		s = replace("data: testdata/fashion", "data: "+fx.p("idx-good"))(s)
		return replace("out: "+filepath.Join(dir, "out-out-in-data"), "out: "+inData)(s)
	})
	fx.m["exp-out-in-data-out"] = inData
	exp("out-root", replace("out: "+filepath.Join(dir, "out-out-root"), "out: /"))
	exp("one-seed", func(s string) string { return s }) // for the --shards cases

	// notes: relative to the experiment file's folder and inside it, a
	// regular file, no link.
	secret := filepath.Join(fx.root, "secret.txt")
	if err := os.WriteFile(secret, []byte("not for RESULTS.md\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.m["secret"] = secret
	if err := os.Symlink("../secret.txt", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := func(n string) func(string) string { return func(s string) string { return s + "notes: " + n + "\n" } }
	exp("notes-outside", notes("../secret.txt"))
	exp("notes-absolute", notes(secret))
	exp("notes-device", notes("/dev/zero"))
	exp("notes-fifo", notes("fifo.md"))
	exp("notes-link", notes("link.md"))

	// Audit folders (`unlearn score --results`) with a file that is a
	// link to /dev/zero, a FIFO or a huge sparse file.
	for _, name := range []string{"settings.json", "tasks/oracle-0000.json"} {
		for _, bad := range []string{"zero-link", "fifo", "sparse"} {
			key := "audit-" + strings.TrimSuffix(filepath.Base(name), ".json") + "-" + bad
			p := filepath.Join(fx.root, key, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			switch bad {
			case "zero-link":
				err = os.Symlink("/dev/zero", p)
			case "fifo":
				err = syscall.Mkfifo(p, 0o644)
			case "sparse":
				var f *os.File
				if f, err = os.Create(p); err == nil {
					err = f.Truncate(6 << 30)
					f.Close()
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			fx.m[key], fx.m[key+"-file"] = filepath.Join(fx.root, key), p
		}
	}
	// A shared oracles folder of another recipe (item 7).
	oracles := filepath.Join(fx.root, "audit-oracles-other", "oracles.json")
	if err := os.MkdirAll(filepath.Dir(oracles), 0o755); err != nil {
		t.Fatal(err)
	}
	other := `{"schema": "` + schema.ScoreSettingsSchema + `", "setup": {"recipe": {"epochs": 30, "lr": 0.1, "schedule": "cosine", "batch_size": 128}}}` + "\n"
	if err := os.WriteFile(oracles, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	fx.m["audit-oracles-other"], fx.m["audit-oracles-other-file"] = filepath.Dir(oracles), oracles
}

// experimentCases are issue 45's cases for `unlearn experiment`: each
// experiment file must be refused at load, before any work, with exit
// code 2, naming the file and the key at fault, and creating nothing.
func experimentCases(fx *badFixtures, add func(badCase)) {
	expCase := func(group, name, fixture string, culprits []string, absent ...string) {
		p := fx.p("exp-" + fixture)
		add(badCase{group: group, name: name, cmd: "experiment", set: [][2]string{{"--config", p}}, code: exitUsage,
			culprits: append([]string{filepath.Base(p)}, culprits...), absent: append([]string{fx.p("exp-" + fixture + "-out")}, absent...)})
	}
	out := fx.p("exp-escaping-name-out")
	expCase("experiment file", "forget set name that leaves out", "escaping-name", []string{"forget_sets[0]", `"/../../../../victim"`},
		filepath.Join(out, "runs", "forget-/../../../../victim-seed0.txt"))
	// Every value is checked at load (item 5): --dry-run used to pass a
	// batch of 2e9, and the oracle's training to be the first to refuse -5.
	for _, c := range []struct {
		name, fixture string
		culprits      []string
	}{
		{"batch size 2e9", "batch-2e9", []string{"train: batch_size 2000000000", "[1, 65536]"}},
		{"batch size negative", "batch-negative", []string{"train: batch_size -5"}},
		{"lr Inf", "lr-inf", []string{"train: lr +Inf", "finite"}},
		{"momentum NaN", "momentum-nan", []string{"train: momentum NaN", "[0, 1)"}},
		{"weight decay NaN", "weight-decay-nan", []string{"train: weight_decay NaN"}},
		{"epochs 9e18", "epochs-9e18", []string{"train: epochs 9000000000000000000", "[1, 10000]"}},
		{"duplicate seeds", "duplicate-seeds", []string{"seeds: 0 appears twice"}},
		{"method lr NaN", "method-lr-nan", []string{"method Finetune: lr NaN"}},
	} {
		p := fx.p("exp-" + c.fixture)
		add(badCase{group: "experiment file", name: c.name, cmd: "experiment", set: [][2]string{{"--config", p}}, args: []string{"--dry-run"},
			code: exitUsage, culprits: append([]string{filepath.Base(p)}, c.culprits...), absent: []string{fx.p("exp-" + c.fixture + "-out")}})
	}
	add(badCase{group: "experiment file", name: "out inside the dataset folder", cmd: "experiment", set: [][2]string{{"--config", fx.p("exp-out-in-data")}},
		code: exitUsage, culprits: []string{"out:", fx.p("exp-out-in-data-out"), "inside", "dataset"}, absent: []string{fx.p("exp-out-in-data-out")}})
	add(badCase{group: "experiment file", name: "out the root of the file system", cmd: "experiment", set: [][2]string{{"--config", fx.p("exp-out-root")}},
		code: exitUsage, culprits: []string{"out:", "root of the file system"}, absent: []string{"/runs", "/results.jsonl"}})
	for _, c := range []struct{ name, fixture, notes, why string }{
		{"notes outside the file's folder", "notes-outside", "../secret.txt", "relative path inside the experiment file's folder"},
		{"notes an absolute path", "notes-absolute", fx.p("secret"), "relative path inside the experiment file's folder"},
		{"notes a device (/dev/zero)", "notes-device", "/dev/zero", "relative path inside the experiment file's folder"},
		{"notes a FIFO", "notes-fifo", "fifo.md", "FIFO"},
		{"notes a link out of the folder", "notes-link", "link.md", "symbolic link"},
	} {
		p := fx.p("exp-" + c.fixture)
		add(badCase{group: "experiment file", name: c.name, cmd: "experiment", set: [][2]string{{"--config", p}}, args: []string{"--report-only"},
			code: exitUsage, culprits: []string{filepath.Base(p), "notes", c.notes, c.why},
			absent: []string{fx.p("exp-" + c.fixture + "-out")}, unchanged: []string{fx.p("secret")}})
	}
}

// scoreCases are issue 45's cases for `unlearn score`: counts that size an
// allocation are bounded before any work (item 3).
func scoreCases(fx *badFixtures, add func(badCase)) {
	for _, c := range []struct{ name, flag, value string }{
		{"K of a billion", "--k", "1000000000"},
		{"K of 100 million", "--k", "100000000"},
		{"K of 1", "--k", "1"},
		{"a billion bootstrap resamples", "--bootstrap", "1000000000"},
		{"oracle batch size of 2 billion", "--train-batch-size", "2000000000"},
		{"oracle batch size 0", "--train-batch-size", "0"},
	} {
		add(badCase{group: "flags", name: c.name, cmd: "score", set: [][2]string{{c.flag, c.value}}, args: []string{"--gather"},
			code: exitUsage, culprits: []string{c.flag, c.value}, absent: []string{"{out}/audit"}})
	}
	// A sharded run's shard, checked before any work (item 9): with exit
	// code 2 for both commands, saying what to set. The variables a batch
	// engine sets are not set here.
	for _, c := range []struct {
		name     string
		set      [][2]string
		culprits []string
	}{
		{"negative number of shards", [][2]string{{"--shards", "-3"}}, []string{"--shards -3", "must be 0"}},
		{"shards without a shard or a task index", [][2]string{{"--shards", "2"}}, []string{"--shards 2 without --shard", "--shard I", "Indexed Job", "--array=0-1"}},
		{"shard past the shards", [][2]string{{"--shards", "2"}, {"--shard", "7"}}, []string{"--shard 7", "[0, 2)"}},
		{"more shards than work units", [][2]string{{"--shards", "1000000000"}, {"--shard", "5"}}, []string{"--shards 1000000000", "would run nothing"}},
	} {
		add(badCase{group: "flags", name: c.name, cmd: "score", set: c.set,
			code: exitUsage, culprits: c.culprits, absent: []string{"{out}/audit"}})
		add(badCase{group: "flags", name: c.name, cmd: "experiment", set: append([][2]string{{"--config", fx.p("exp-one-seed")}}, c.set...),
			args: []string{"--dry-run"}, code: exitUsage, culprits: c.culprits, absent: []string{fx.p("exp-one-seed-out")}})
	}
	// Every file read from the audit folder is a regular file, not a
	// link, within a size limit (item 4).
	for _, f := range []struct{ name, file string }{{"settings.json", "settings"}, {"task file", "oracle-0000"}} {
		for _, c := range []struct{ name, bad, why string }{
			{"a link to /dev/zero", "zero-link", "symbolic link"},
			{"a FIFO", "fifo", "FIFO"},
			{"a 6 GB sparse file", "sparse", "6442450944 bytes, more than the"},
		} {
			key := "audit-" + f.file + "-" + c.bad
			var unchanged []string
			if c.bad != "sparse" { // a snapshot would read its 6 GB
				unchanged = []string{fx.p(key + "-file")}
			}
			// A task file is read once the folder's settings are in
			// place: a run without --gather writes them first.
			var args []string
			if f.file == "settings" {
				args = []string{"--gather"}
			}
			add(badCase{group: "audit folder", name: f.name + " " + c.name, cmd: "score", set: [][2]string{{"--results", fx.p(key)}},
				args: args, code: exitError, culprits: []string{f.file + ".json", c.why}, unchanged: unchanged})
		}
	}
	// A refused run leaves nothing behind (item 7): the output folder
	// must stay empty, so that the corrected run is not refused too.
	add(badCase{group: "audit folder", name: "gathering a folder that holds no audit (a mistyped path)", cmd: "score",
		set: [][2]string{{"--results", "{out}/audit"}}, args: []string{"--gather"},
		code: exitError, culprits: []string{"{out}/audit/settings.json", "no audit to gather"}, absent: []string{"{out}/audit"}})
	add(badCase{group: "audit folder", name: "a shared oracles folder of another recipe", cmd: "score",
		set:  [][2]string{{"--oracles", fx.p("audit-oracles-other")}},
		code: exitError, culprits: []string{fx.p("audit-oracles-other-file"), "records another audit", "recipe.epochs"},
		absent: []string{"{out}/audit"}, unchanged: []string{fx.p("audit-oracles-other-file")}})
}
