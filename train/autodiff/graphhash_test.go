package autodiff_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// hashVariants are the specs the tool builds training graphs with: the
// startup check's default, localization's inference-mode CE, the methods'
// training-mode CE (with Dropout) and KL (scrub), on the plain and the CPU
// lowerings at a few thread counts, a subset of the parameters (a mask)
// and a restricted weight gradient.
// Negated-gradient methods build the CE graph (they negate the weights).
var hashVariants = []struct {
	name string
	spec func(m *graph.Model) autodiff.Spec
}{
	{"check", func(*graph.Model) autodiff.Spec { return autodiff.Spec{} }},
	{"ce-eval-cpu", func(*graph.Model) autodiff.Spec {
		return autodiff.Spec{BN: autodiff.BNInference, Lowering: cpu.Lowering{NCHWcBlock: 8}, Threads: 2}
	}},
	{"ce-train-dropout-cpu", func(*graph.Model) autodiff.Spec {
		return autodiff.Spec{BN: autodiff.BNTraining, Dropout: true, DropoutSeed: 42,
			Lowering: cpu.Lowering{NCHWcBlock: 16}, Threads: 4}
	}},
	{"ce-train-plain", func(*graph.Model) autodiff.Spec {
		return autodiff.Spec{BN: autodiff.BNTraining, Threads: 1}
	}},
	{"kl-train-cpu", func(*graph.Model) autodiff.Spec {
		return autodiff.Spec{BN: autodiff.BNTraining, Loss: autodiff.Loss{Kind: autodiff.LossKL, Temperature: 4},
			Lowering: cpu.Lowering{NCHWcBlock: 8}, Threads: 2}
	}},
	{"kl-eval-plain", func(*graph.Model) autodiff.Spec {
		return autodiff.Spec{BN: autodiff.BNInference, Loss: autodiff.Loss{Kind: autodiff.LossKL}}
	}},
	{"ce-train-subset-cpu", func(m *graph.Model) autodiff.Spec {
		// Every other trainable parameter, as a mask that leaves some out.
		s := autodiff.Spec{BN: autodiff.BNTraining, Lowering: cpu.Lowering{NCHWcBlock: 8}, Threads: 2}
		for i, p := range graph.Parameters(m.Graph) {
			if i%2 == 0 {
				s.Params = append(s.Params, p.Value.Name)
			}
		}
		return s
	}},
	{"gradchannels-cpu", func(m *graph.Model) autodiff.Spec {
		s := autodiff.Spec{BN: autodiff.BNTraining, Lowering: cpu.Lowering{}, Threads: 2,
			GradChannels: map[string][]int64{}}
		// The first two layers' weights, channels 0 and 1 of each.
		if nm, err := graph.Neurons(m.Graph); err == nil {
			for _, l := range nm.Layers {
				if l.Standalone || len(s.GradChannels) == 2 {
					continue
				}
				s.GradChannels[l.Weight.Name] = []int64{0, 1}
			}
		}
		for name := range s.GradChannels {
			s.Params = append(s.Params, name)
		}
		slices.Sort(s.Params)
		return s
	}},
}

// hashModels lists the repository's ONNX models (testdata/, recursively).
func hashModels(t *testing.T) []string {
	root := filepath.Join("..", "..", "testdata")
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".onnx") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// trainingGraphHashes builds every variant's training graph of every model
// and returns one line each: the model, the variant, the sha256 of the
// encoded graph and of its description (inputs, outputs, parameters,
// BatchNormalization statistics, restricted gradients, the Conv forms),
// or the build error.
func trainingGraphHashes(t *testing.T) string {
	var b strings.Builder
	for _, f := range hashModels(t) {
		m, err := onnxio.Load(filepath.Join("..", "..", "testdata", filepath.FromSlash(f)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fmt.Fprintf(&b, "%s analysis %x\n", f, sha256.Sum256([]byte(analysisText(m.Graph))))
		for _, v := range hashVariants {
			m, err := onnxio.Load(filepath.Join("..", "..", "testdata", filepath.FromSlash(f)))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			art, err := autodiff.Build(m, v.spec(m))
			if err != nil {
				fmt.Fprintf(&b, "%s %s error %x\n", f, v.name, sha256.Sum256([]byte(err.Error())))
				continue
			}
			data, err := onnxio.Encode(art.Model)
			if err != nil {
				t.Fatalf("%s %s: encode: %v", f, v.name, err)
			}
			desc := fmt.Sprintf("%+v|%+v|%v|%+v|%+v|%v", art.Inputs, art.Outputs, art.Params, art.BN,
				art.GradChannels, art.Lowered())
			fmt.Fprintf(&b, "%s %s %x %x\n", f, v.name, sha256.Sum256(data), sha256.Sum256([]byte(desc)))
		}
	}
	return b.String()
}

// analysisText describes what package graph finds in g: the trainable
// parameters and their kinds, the layers with their members, and the
// folded BatchNormalization.
func analysisText(g *graph.Graph) string {
	var b strings.Builder
	for _, p := range graph.Parameters(g) {
		fmt.Fprintf(&b, "param %s %s", p.Value.Name, p.Kind)
		for _, u := range p.Consumers {
			fmt.Fprintf(&b, " %s:%d", u.Node.Name, u.Index)
		}
		b.WriteString("\n")
	}
	nm, err := graph.Neurons(g)
	if err != nil {
		fmt.Fprintf(&b, "neurons: %v\n", err)
	} else {
		for _, l := range nm.Layers {
			fmt.Fprintf(&b, "layer %s %s %d depth %d standalone %v first %d:", l.Name, l.Op.Name, l.Channels,
				l.Depth, l.Standalone, l.First)
			for _, m := range l.Members {
				fmt.Fprintf(&b, " %s/%s/%d/%d/%s", m.Param.Name, m.Role, m.Axis, m.Groups, m.Node.Name)
			}
			b.WriteString("\n")
		}
	}
	if f := graph.DetectFoldedBN(g); f != nil {
		fmt.Fprintf(&b, "folded %d %s:", f.Convs, f.Example)
		for _, n := range f.Nodes {
			fmt.Fprintf(&b, " %s", n.Name)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "training-mode BN %d\n", graph.TrainingModeBN(g))
	return b.String()
}

// TestTrainingGraphHashes pins the training graphs: every variant of every
// test model must encode to the bytes recorded in testdata/graph_hashes.txt
// (-update rewrites it; go generate does not, so that a change to a graph
// is a decision). A change that alters a graph
// shows here; one meant to must say why and rewrite the file.
func TestTrainingGraphHashes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds about a hundred training graphs")
	}
	path := filepath.Join("testdata", "graph_hashes.txt")
	got := trainingGraphHashes(t)
	if *autodiff.Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if again := trainingGraphHashes(t); again != got {
		t.Fatal("two builds of the same graphs differ: the build is not deterministic")
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("line %d: got %q, want %q", i+1, g, w)
			}
		}
	}
}
