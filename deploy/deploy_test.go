// Package deploy holds the container image's and the clusters' example
// files (Dockerfile at the repository root, k8s/, slurm/) and the overlay
// make test-k8s applies (k8s-test/). Nothing here is built; this test
// checks that the Kubernetes manifests and the overlay parse and agree with
// each other and with `unlearn score`'s sharding, and that the Slurm
// scripts parse; make test-slurm and make test-k8s run the scripts and the
// manifests on one-node clusters.
package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	s, g := read(t, "k8s/score-job.yaml"), read(t, "k8s/gather/score-gather-job.yaml")
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

// podSpec is what TestManifestsRestricted reads of a Job: the settings of
// the "restricted" Pod Security Standard, limits, and the image.
type podSpec struct {
	Spec struct {
		ActiveDeadlineSeconds   *int `yaml:"activeDeadlineSeconds"`
		TTLSecondsAfterFinished *int `yaml:"ttlSecondsAfterFinished"`
		Template                struct {
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot *bool `yaml:"runAsNonRoot"`
					RunAsUser    int   `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []struct {
					Image           string `yaml:"image"`
					SecurityContext struct {
						AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
						ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
						Capabilities             struct {
							Drop []string `yaml:"drop"`
						} `yaml:"capabilities"`
						SeccompProfile struct {
							Type string `yaml:"type"`
						} `yaml:"seccompProfile"`
					} `yaml:"securityContext"`
					Resources struct {
						Limits map[string]string `yaml:"limits"`
					} `yaml:"resources"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name                  string         `yaml:"name"`
					EmptyDir              map[string]any `yaml:"emptyDir"`
					PersistentVolumeClaim struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// jobFiles lists the Jobs of deploy/k8s: the score and experiment Jobs of
// its kustomization and the gather Job of gather/.
func jobFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("k8s/*-job.yaml")
	gather, _ := filepath.Glob("k8s/gather/*-job.yaml")
	if files = append(files, gather...); len(files) != 3 {
		t.Fatalf("jobs %v", files)
	}
	return files
}

// TestManifestsRestricted (hardening issue 45, item 13): every Job meets the
// "restricted" Pod Security Standard (non-root, no privilege escalation, all
// capabilities dropped, RuntimeDefault seccomp) with a read-only root file
// system and a /tmp emptyDir, has a deadline, a TTL and a memory limit,
// names a registry-qualified image that image/kustomization.yaml (a
// component of both kustomizations) rewrites, and mounts a claim
// results-pvc.yaml defines as ReadWriteMany; the Dockerfile starts FROM
// build arguments, so that its images can be pinned by digest.
func TestManifestsRestricted(t *testing.T) {
	var kust struct {
		Kind       string   `yaml:"kind"`
		Resources  []string `yaml:"resources"`
		Components []string `yaml:"components"`
		Images     []struct {
			Name string `yaml:"name"`
		} `yaml:"images"`
	}
	b, err := os.ReadFile("k8s/image/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &kust); err != nil || kust.Kind != "Component" || len(kust.Images) != 1 {
		t.Fatalf("image/kustomization.yaml: want a Component with one image: %v %+v", err, kust)
	}
	image := kust.Images[0].Name
	for dir, want := range map[string]int{"k8s": 3, "k8s/gather": 1} {
		kust.Resources, kust.Components, kust.Images = nil, nil, nil
		if b, err = os.ReadFile(filepath.Join(dir, "kustomization.yaml")); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &kust); err != nil || len(kust.Resources) != want || len(kust.Images) != 0 ||
			len(kust.Components) != 1 || filepath.Clean(filepath.Join(dir, kust.Components[0])) != "k8s/image" {
			t.Errorf("%s/kustomization.yaml: want %d resources and the image component only: %v %+v", dir, want, err, kust)
		}
		for _, r := range kust.Resources {
			if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
				t.Errorf("%s/kustomization.yaml: resource %s: %v", dir, r, err)
			}
		}
	}
	var pvc struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Spec struct {
			AccessModes []string `yaml:"accessModes"`
		} `yaml:"spec"`
	}
	if b, err = os.ReadFile("k8s/results-pvc.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &pvc); err != nil || pvc.Kind != "PersistentVolumeClaim" || !slices.Equal(pvc.Spec.AccessModes, []string{"ReadWriteMany"}) {
		t.Fatalf("results-pvc.yaml: %v %+v", err, pvc)
	}
	for _, f := range jobFiles(t) {
		if b, err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		var j podSpec
		if err := yaml.Unmarshal(b, &j); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s := j.Spec.Template.Spec
		if j.Spec.ActiveDeadlineSeconds == nil || j.Spec.TTLSecondsAfterFinished == nil {
			t.Errorf("%s: activeDeadlineSeconds and ttlSecondsAfterFinished must be set", f)
		}
		if s.SecurityContext.RunAsNonRoot == nil || !*s.SecurityContext.RunAsNonRoot || s.SecurityContext.RunAsUser != 10001 {
			t.Errorf("%s: the pod must run as non-root user 10001: %+v", f, s.SecurityContext)
		}
		c := s.Containers[0]
		sc := c.SecurityContext
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || !sc.ReadOnlyRootFilesystem ||
			!slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) || sc.SeccompProfile.Type != "RuntimeDefault" {
			t.Errorf("%s: container securityContext %+v is not the restricted level's", f, sc)
		}
		if c.Resources.Limits["memory"] == "" {
			t.Errorf("%s: no memory limit", f)
		}
		if host, _, ok := strings.Cut(c.Image, "/"); !ok || !strings.Contains(host, ".") || !strings.HasPrefix(c.Image, image+":") {
			t.Errorf("%s: image %q: want the registry-qualified name image/kustomization.yaml rewrites (%s)", f, c.Image, image)
		}
		mounts := map[string][]string{} // a volume may be mounted twice (the claim's inputs/ read-only)
		for _, m := range c.VolumeMounts {
			mounts[m.Name] = append(mounts[m.Name], m.MountPath)
		}
		claims := 0
		for _, v := range s.Volumes {
			switch {
			case v.Name == "tmp" && v.EmptyDir != nil && slices.Equal(mounts["tmp"], []string{"/tmp"}):
			case v.PersistentVolumeClaim.ClaimName == pvc.Metadata.Name && slices.Contains(mounts[v.Name], "/results"):
				claims++
			default:
				t.Errorf("%s: volume %q is neither /tmp's emptyDir nor the claim %s at /results", f, v.Name, pvc.Metadata.Name)
			}
		}
		if claims != 1 || !slices.Equal(mounts["tmp"], []string{"/tmp"}) {
			t.Errorf("%s: want /tmp (emptyDir) and /results (claim %s) mounted", f, pvc.Metadata.Name)
		}
	}
	if b, err = os.ReadFile("../Dockerfile"); err != nil {
		t.Fatal(err)
	}
	pinned, digest := 0, regexp.MustCompile(`^[a-z0-9./-]+:[a-z0-9.-]+@sha256:[0-9a-f]{64}$`)
	for i, l := range strings.Split(string(b), "\n") {
		if img, ok := strings.CutPrefix(l, "FROM "); ok && !strings.HasPrefix(img, "${") && !strings.HasPrefix(img, "scratch") {
			t.Errorf("Dockerfile:%d: %q: FROM a fixed reference cannot be pinned by digest with --build-arg", i+1, l)
		}
		for _, arg := range []string{"ARG GO_IMAGE=", "ARG BASE="} {
			if ref, ok := strings.CutPrefix(l, arg); ok {
				pinned++
				if !digest.MatchString(ref) {
					t.Errorf("Dockerfile:%d: %q: the default image is not pinned by digest (NAME:TAG@sha256:…)", i+1, l)
				}
			}
		}
	}
	if pinned != 2 {
		t.Errorf("Dockerfile: %d of the ARGs GO_IMAGE and BASE found, want both", pinned)
	}
}

// TestManifestsInputsReadOnly (issue 64, item 10): every Job mounts no
// service account token (the tool calls no Kubernetes API), mounts the
// claim's inputs/ folder read-only over itself at /results/inputs, apart
// from the writable results, and reads every input it names (model, data,
// forget ids, experiment file) from there.
func TestManifestsInputsReadOnly(t *testing.T) {
	for _, f := range jobFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var j struct {
			Spec struct {
				Template struct {
					Spec struct {
						AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
						Containers                   []struct {
							Args         []string `yaml:"args"`
							VolumeMounts []struct {
								Name      string `yaml:"name"`
								MountPath string `yaml:"mountPath"`
								SubPath   string `yaml:"subPath"`
								ReadOnly  bool   `yaml:"readOnly"`
							} `yaml:"volumeMounts"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(b, &j); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s := j.Spec.Template.Spec
		if s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must be false", f)
		}
		c := s.Containers[0]
		var rw, ro bool
		for _, m := range c.VolumeMounts {
			switch {
			case m.Name == "results" && m.MountPath == "/results" && m.SubPath == "" && !m.ReadOnly:
				rw = true
			case m.Name == "results" && m.MountPath == "/results/inputs" && m.SubPath == "inputs" && m.ReadOnly:
				ro = true
			}
		}
		if !rw || !ro {
			t.Errorf("%s: want the claim at /results (writable) and its inputs/ at /results/inputs read-only: %+v", f, c.VolumeMounts)
		}
		for _, a := range c.Args {
			name, value, ok := strings.Cut(a, "=")
			if ok && slices.Contains([]string{"--model", "--data", "--forget", "--config", "--oracle"}, name) && !strings.HasPrefix(value, "/results/inputs/") {
				t.Errorf("%s: %s reads an input outside the read-only /results/inputs", f, a)
			}
		}
	}
}

// TestSubmitDoesNotGlobSbatchArgs (issue 64, item 10): SBATCH_ARGS reaches
// sbatch split on white space but not expanded as file names: "--comment=*"
// in a folder holding a file "--comment=leak" stays "--comment=*" (it
// became that file's name). A
// stand-in sbatch on PATH records its arguments.
func TestSubmitDoesNotGlobSbatchArgs(t *testing.T) {
	bin, work := t.TempDir(), t.TempDir()
	log := filepath.Join(bin, "args.log")
	fake := "#!/bin/bash\nprintf '%s\\n' \"$@\" >>" + log + "\necho 42\n"
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	// A file the glob would match: --comment=* became "--comment=leak".
	for _, n := range []string{"--comment=leak", "b-file"} {
		if err := os.WriteFile(filepath.Join(work, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, script := range []string{"submit-score.sh", "submit-experiment.sh"} {
		os.Remove(log)
		abs, err := filepath.Abs(filepath.Join("slurm", script))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{abs, "2", "--results", "/r"}
		if script == "submit-experiment.sh" {
			args = []string{abs, "2", "exp.yaml"}
		}
		cmd := exec.Command("bash", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "UNLEARN=/bin/true", "SBATCH_ARGS=--comment=* --mem=1G")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", script, err, out)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(string(b), "\n")
		if !slices.Contains(got, "--comment=*") || !slices.Contains(got, "--mem=1G") || slices.Contains(got, "--comment=leak") {
			t.Errorf("%s: sbatch got %q; want --comment=* and --mem=1G as given, no file names", script, got)
		}
	}
}

// TestOverlay (issue 67): the overlay make test-k8s applies
// (deploy/k8s-test) keeps what TestManifests checks of the base: the score
// Job's completions equal its --shards, at most the audit's 2K tasks, and the
// gather overlay runs the same arguments with --gather; the experiment Job's
// completions equal its --shards; the namespace enforces the "restricted"
// level; both overlays name one image; and the pods that run at once (score
// and experiment) request at most the node's 2 cores.
func TestOverlay(t *testing.T) {
	type patch struct {
		Spec struct {
			Completions *int `yaml:"completions"`
			Parallelism *int `yaml:"parallelism"`
			Template    struct {
				Spec struct {
					Containers []struct {
						Args      []string `yaml:"args"`
						Resources struct {
							Requests map[string]string `yaml:"requests"`
						} `yaml:"resources"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	load := func(path string, v any) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var s, e, g patch
	load("k8s-test/score-job.yaml", &s)
	load("k8s-test/experiment-job.yaml", &e)
	load("k8s-test/gather/score-gather-job.yaml", &g)
	for name, p := range map[string]patch{"score": s, "experiment": e, "gather": g} {
		if len(p.Spec.Template.Spec.Containers) != 1 {
			t.Fatalf("%s patch: want one container", name)
		}
	}
	flag := func(args []string, name string) (int, []string) {
		v, rest := -1, []string{}
		for _, a := range args {
			if s, ok := strings.CutPrefix(a, name+"="); ok {
				v, _ = strconv.Atoi(s)
				continue
			}
			rest = append(rest, a)
		}
		return v, rest
	}
	sa := s.Spec.Template.Spec.Containers[0].Args
	shards, rest := flag(sa, "--shards")
	k, _ := flag(sa, "--k")
	if s.Spec.Completions == nil || shards != *s.Spec.Completions || shards < 1 || shards > 2*k {
		t.Errorf("score patch: completions %v, --shards=%d, --k=%d: want completions = --shards ≤ 2K", s.Spec.Completions, shards, k)
	}
	if ga := g.Spec.Template.Spec.Containers[0].Args; !slices.Equal(append(rest, "--gather"), ga) {
		t.Errorf("gather patch args %q, want the score patch's %q without --shards, with --gather", ga, sa)
	}
	if es, _ := flag(e.Spec.Template.Spec.Containers[0].Args, "--shards"); e.Spec.Completions == nil || es != *e.Spec.Completions {
		t.Errorf("experiment patch: completions %v, --shards=%d", e.Spec.Completions, es)
	}
	milli := 0
	for name, p := range map[string]patch{"score": s, "experiment": e} {
		cpu := p.Spec.Template.Spec.Containers[0].Resources.Requests["cpu"]
		m, err := strconv.Atoi(strings.TrimSuffix(cpu, "m"))
		if err != nil || !strings.HasSuffix(cpu, "m") || p.Spec.Parallelism == nil {
			t.Fatalf("%s patch: cpu request %q (want millicores) and parallelism must be set", name, cpu)
		}
		milli += m * *p.Spec.Parallelism
	}
	if milli > 2000 {
		t.Errorf("the score and experiment pods request %dm CPU at once, more than the test node's 2 cores", milli)
	}
	var ns struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name   string            `yaml:"name"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
	}
	load("k8s-test/namespace.yaml", &ns)
	type kustomization struct {
		Namespace string   `yaml:"namespace"`
		Resources []string `yaml:"resources"`
		Images    []struct {
			Name    string `yaml:"name"`
			NewName string `yaml:"newName"`
			NewTag  string `yaml:"newTag"`
		} `yaml:"images"`
	}
	var ko, kg kustomization
	load("k8s-test/kustomization.yaml", &ko)
	load("k8s-test/gather/kustomization.yaml", &kg)
	if ns.Kind != "Namespace" || ns.Metadata.Labels["pod-security.kubernetes.io/enforce"] != "restricted" ||
		ko.Namespace != ns.Metadata.Name || kg.Namespace != ns.Metadata.Name {
		t.Errorf("namespace %+v: want the overlays' namespace, labelled to enforce the restricted level", ns)
	}
	if !slices.Contains(ko.Resources, "../k8s") || !slices.Contains(kg.Resources, "../../k8s/gather") {
		t.Errorf("the overlays' resources %q and %q must be deploy/k8s and its gather Job", ko.Resources, kg.Resources)
	}
	if len(ko.Images) != 1 || len(kg.Images) != 1 || ko.Images[0] != kg.Images[0] || ko.Images[0].Name != "registry.example.com/unlearn" {
		t.Errorf("images %+v and %+v: both overlays must rewrite the base's image to one name", ko.Images, kg.Images)
	}
}
