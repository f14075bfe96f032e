// Package deploy holds the container image's and the clusters' example
// files (Dockerfile at the repository root, k8s/, slurm/). Nothing here is
// built; this test checks that the Kubernetes manifests parse and agree
// with each other and with `unlearn score`'s sharding, and that the Slurm
// scripts parse (make test-slurm runs them on a one-node cluster).
package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type job struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Image string   `yaml:"image"`
					Args  []string `yaml:"args"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func read(t *testing.T, path string) job {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j job
	if err := yaml.Unmarshal(b, &j); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if j.APIVersion != "batch/v1" || j.Kind != "Job" || j.Spec.Template.Spec.RestartPolicy != "Never" || len(j.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: want one batch/v1 Job with one container and restartPolicy Never, got %+v", path, j)
	}
	return j
}

// TestManifests: the score Job is Indexed with completions = --shards, and
// the gather Job runs the same arguments with --gather instead of
// --shards (a results folder refuses other settings).
func TestManifests(t *testing.T) {
	s, g := read(t, "k8s/score-job.yaml"), read(t, "k8s/score-gather-job.yaml")
	if s.Spec.CompletionMode != "Indexed" || s.Spec.Completions == nil || s.Spec.Parallelism == nil {
		t.Fatalf("score Job: completionMode %q, completions and parallelism must be set", s.Spec.CompletionMode)
	}
	sa, ga := s.Spec.Template.Spec.Containers[0].Args, g.Spec.Template.Spec.Containers[0].Args
	shards := -1
	var rest []string
	for _, a := range sa {
		if v, ok := strings.CutPrefix(a, "--shards="); ok {
			shards, _ = strconv.Atoi(v)
			continue
		}
		rest = append(rest, a)
	}
	if shards != *s.Spec.Completions {
		t.Errorf("--shards=%d, completions %d: every index must be a shard", shards, *s.Spec.Completions)
	}
	if len(sa) == 0 || sa[0] != "score" || !slices.Equal(append(rest, "--gather"), ga) {
		t.Errorf("gather args %q, want the score Job's %q without --shards, with --gather", ga, sa)
	}
}

// TestExperimentManifest: the experiment Job is Indexed with completions =
// --shards and runs the experiment command (its shards are whole seeds).
func TestExperimentManifest(t *testing.T) {
	e := read(t, "k8s/experiment-job.yaml")
	args := e.Spec.Template.Spec.Containers[0].Args
	if e.Spec.CompletionMode != "Indexed" || e.Spec.Completions == nil || len(args) == 0 || args[0] != "experiment" ||
		!slices.Contains(args, fmt.Sprintf("--shards=%d", *e.Spec.Completions)) {
		t.Fatalf("experiment Job: completionMode %q, completions %v, args %q; want Indexed with --shards = completions", e.Spec.CompletionMode, e.Spec.Completions, args)
	}
}

// TestSlurmScripts: the batch scripts parse (bash -n), and every #SBATCH
// line comes before the first command, where sbatch stops reading them
// (a later one would be silently ignored). make test-slurm runs them.
func TestSlurmScripts(t *testing.T) {
	files, err := filepath.Glob("slurm/*")
	if err != nil || len(files) < 6 {
		t.Fatalf("deploy/slurm: %v %v", files, err)
	}
	for _, f := range files {
		if out, err := exec.Command("bash", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", f, err, out)
		}
		if !strings.HasSuffix(f, ".sbatch") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if lines[0] != "#!/bin/bash" {
			t.Errorf("%s: first line %q, want #!/bin/bash", f, lines[0])
		}
		commands, directives := false, 0
		for i, l := range lines {
			l = strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "#SBATCH"):
				directives++
				if commands {
					t.Errorf("%s:%d: #SBATCH after the first command is ignored by sbatch", f, i+1)
				}
			case l != "" && !strings.HasPrefix(l, "#"):
				commands = true
			}
		}
		if directives == 0 {
			t.Errorf("%s: no #SBATCH directives", f)
		}
	}
}
