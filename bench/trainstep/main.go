package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

type result struct {
	Impl       string  `json:"impl"`
	Model      string  `json:"model"`
	Threads    int     `json:"threads"`
	Batch      int     `json:"batch"`
	Steps      int     `json:"steps"`
	MedianS    float64 `json:"median_s"`
	MinS       float64 `json:"min_s"`
	ImagesPerS float64 `json:"images_per_s"`
	PeakMB     float64 `json:"peak_mb"`
	BaseMB     float64 `json:"base_mb"`
	// UpdateS is the median time of the SGD update (Go) within a step.
	UpdateS  float64 `json:"update_s"`
	BuildS   float64 `json:"build_s"`   // autodiff.Build
	SessionS float64 `json:"session_s"` // encoding + ONNX Runtime session creation
	Nodes    int     `json:"nodes"`     // nodes of the training graph
	// CPUShare is the process's CPU time over the wall time of the timed
	// steps: about the thread count when nothing else ran on the machine.
	CPUShare float64 `json:"cpu_share"`
	// OthersCores is the CPU other processes used meanwhile, in cores
	// (contention: the machine's busy time less this process's).
	OthersCores float64 `json:"others_cores"`
	// CPUS is the median CPU time of the process per step: with one
	// thread, a measure that other processes barely disturb.
	CPUS  float64 `json:"cpu_s"`
	ORT   string  `json:"ort"`
	NCHWc int64   `json:"nchwc"` // the NCHWc block size (-nchwc; 0: plain Conv)
	// Mask: the share of each layer's output channels selected (-mask),
	// the parameters differentiated, the weights whose gradient is
	// restricted to the selected channels (-grad-channels) and the
	// selected share of all parameters.
	Mask         float64 `json:"mask,omitempty"`
	MaskParams   int     `json:"mask_params,omitempty"`
	Restricted   int     `json:"restricted,omitempty"`
	MaskSelected float64 `json:"mask_selected,omitempty"`
}

// maskOpts is the channel mask of a masked step (-mask).
type maskOpts struct {
	share    float64 // of each layer's output channels
	seed     uint64
	channels bool // autodiff.Spec.GradChannels
	deep     int  // >0: only the layers of the deepest `deep` depths
}

func main() {
	model := flag.String("model", "", "ONNX model (training export)")
	name := flag.String("name", "", "model name in the output (default: the file name)")
	threads := flag.Int("threads", runtime.NumCPU(), "ONNX Runtime intra-op threads")
	batch := flag.Int("batch", 128, "batch size")
	warmup := flag.Int("warmup", 3, "untimed steps")
	steps := flag.Int("steps", 10, "timed steps")
	dump := flag.String("dump", "", "write the training graph to this file")
	lib := flag.String("ort-lib", "", "libonnxruntime.so.1 (default: ONNXRUNTIME_LIB, then beside the executable; "+
		"with -device cuda the GPU build: ONNXRUNTIME_GPU_LIB, then .ort-gpu/)")
	device := flag.String("device", "cpu", "cpu or cuda (ONNX Runtime's GPU build, `make ort-gpu`; "+
		"weights and gradients cross the bus each step: onnxruntime_go binds CPU memory only)")
	var spec autodiff.Spec
	var forms cpu.Lowering
	flag.StringVar(&forms.Forward, "conv-forward", "", "force the forward Conv's form (direct, winograd)")
	flag.StringVar(&forms.Input, "conv-input", "", "force the Conv input-gradient form (convtranspose, flipped, winograd)")
	flag.StringVar(&forms.Weight, "conv-weight", "",
		"force the Conv weight-gradient form (trick, gemm, bmm, valid, winograd)")
	nchwc := flag.Bool("nchwc", false, "run Conv on ONNX Runtime's NCHWc kernels (cpu.Lowering.NCHWcBlock; "+
		"train.NewEngine's default; without it the plain graph that artifacts export)")
	var mo maskOpts
	flag.Float64Var(&mo.share, "mask", 0, "masked step: select this share of every layer's output channels "+
		"(at least 1, at random; weight slice, bias, normalization), differentiate only the parameters it touches "+
		"and update only the selected elements")
	flag.Uint64Var(&mo.seed, "mask-seed", 1, "seed of the -mask channel choice")
	flag.BoolVar(&mo.channels, "grad-channels", false, "with -mask: compute weight gradients for the selected "+
		"output channels only (autodiff.Spec.GradChannels)")
	flag.IntVar(&mo.deep, "mask-deep", 0, "with -mask: select channels only in the layers of the deepest N depths")
	flag.Parse()
	spec.BN = autodiff.BNTraining
	if forms != (cpu.Lowering{}) || *device == "cpu" {
		spec.Lowering = forms
	}
	if *model == "" {
		fmt.Fprintln(os.Stderr, "trainstep: -model is required")
		os.Exit(2)
	}
	if *device != "cpu" && *device != "cuda" {
		fmt.Fprintf(os.Stderr, "trainstep: -device %q: must be cpu or cuda\n", *device)
		os.Exit(2)
	}
	if *device == "cuda" && *nchwc {
		fmt.Fprintln(os.Stderr, "trainstep: -nchwc is the CPU provider's; not with -device cuda")
		os.Exit(2)
	}
	rt := onnxrt.Options{LibPath: *lib, Threads: *threads, Device: *device}
	if err := run(*model, *name, spec, mo, *nchwc, *batch, *warmup, *steps, *dump, rt); err != nil {
		fmt.Fprintln(os.Stderr, "trainstep:", err)
		os.Exit(1)
	}
}

func run(path, name string, spec autodiff.Spec, mo maskOpts, nchwc bool, batch, warmup, steps int, dump string,
	rt onnxrt.Options) error {
	threads := rt.Threads
	// For cuda the GPU build must be the first library loaded.
	if err := onnxrt.Setup(rt); err != nil {
		return err
	}
	if name == "" {
		name = strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".onnx")
	}
	m, err := onnxio.Load(path)
	if err != nil {
		return err
	}
	if nchwc {
		forms := spec.Lowering.(cpu.Lowering)
		if forms.NCHWcBlock = onnxrt.NCHWcBlockSize(rt); forms.NCHWcBlock == 0 {
			return fmt.Errorf("-nchwc: ONNX Runtime has no NCHWc kernels on this machine")
		}
		spec.Lowering = forms
	}
	spec.Threads = threads
	var mask map[string][]bool
	var selected float64
	if mo.share > 0 {
		nm, err := graph.Neurons(m.Graph)
		if err != nil {
			return err
		}
		mask, selected = channelMask(nm, mo)
		for _, p := range nm.Params {
			if mask[p.Value.Name] != nil {
				spec.Params = append(spec.Params, p.Value.Name)
			}
		}
		if mo.channels {
			spec.GradChannels = train.MaskChannels(nm, mask)
		}
	}
	if rt.Device == "cuda" {
		// The forms and settings the engine takes on cuda, where the flags
		// leave them open (train.EngineSpec).
		spec = train.EngineSpec(train.EngineOptions{Spec: spec, Runtime: rt})
	}
	t0 := time.Now()
	art, err := autodiff.Build(m, spec)
	if err != nil {
		return err
	}
	buildS := time.Since(t0).Seconds()
	if dump != "" {
		b, err := onnxio.Encode(art.Model)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dump, b, 0o644); err != nil {
			return err
		}
	}
	t0 = time.Now()
	e, err := train.NewEngineFromArtifacts(m, art, rt)
	if err != nil {
		return err
	}
	defer e.Close()
	sessS := time.Since(t0).Seconds()
	for _, p := range e.Params() {
		if m := mask[p.Name]; m != nil {
			p.Mask = m
		}
	}

	x, labels, weights, _, err := e.Inputs(batch)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for i := range labels {
		labels[i] = int64(rng.IntN(e.Classes()))
		weights[i] = 1
	}
	opt := &train.SGD{Momentum: 0.9, Threads: threads}
	var upd float64
	step := func() error {
		if _, err := e.StepFilled(batch); err != nil {
			return err
		}
		t := time.Now()
		err := opt.Step(e.Params(), 0.01)
		upd = time.Since(t).Seconds()
		return err
	}
	base := statusMB("VmRSS")
	for i := 0; i < warmup; i++ {
		if err := step(); err != nil {
			return err
		}
	}
	times := make([]float64, steps)
	cpus := make([]float64, steps)
	upds := make([]float64, steps)
	cpu0, busy0, wall0 := cpuSeconds(), busySeconds(), time.Now()
	for i := range times {
		t, c := time.Now(), cpuSeconds()
		if err := step(); err != nil {
			return err
		}
		times[i] = time.Since(t).Seconds()
		cpus[i] = cpuSeconds() - c
		upds[i] = upd
	}
	impl := "unlearn"
	if rt.Device == "cuda" {
		impl = "unlearn-cuda"
	}
	if nchwc {
		impl = "unlearn-nchwc"
	}
	if mo.share > 0 {
		impl += "-masked"
		if mo.channels {
			impl += "-channels"
		}
	}
	wall := time.Since(wall0).Seconds()
	own := cpuSeconds() - cpu0
	share := own / wall
	others := max(busySeconds()-busy0-own, 0) / wall
	med := median(times)
	return json.NewEncoder(os.Stdout).Encode(result{
		Impl: impl, Model: name, Threads: threads, Batch: batch, Steps: steps,
		MedianS: med, MinS: slices.Min(times), ImagesPerS: float64(batch) / med,
		PeakMB: statusMB("VmHWM"), BaseMB: base, UpdateS: median(upds),
		BuildS: buildS, SessionS: sessS, Nodes: len(art.Model.Graph.Nodes()),
		CPUShare: share, OthersCores: others, CPUS: median(cpus), ORT: onnxrt.Version(), NCHWc: nchwcBlock(spec),
		Mask: mo.share, MaskParams: len(spec.Params), Restricted: len(art.GradChannels), MaskSelected: selected,
	})
}

// channelMask selects max(1, round(share·C)) of the C output channels of
// every layer (or of the layers of the deepest mo.deep depths) at random
// (PCG(seed, 1)): every element of a chosen channel. It also returns the
// selected share of all parameters.
func channelMask(nm *graph.NeuronMap, mo maskOpts) (map[string][]bool, float64) {
	rng := rand.New(rand.NewPCG(mo.seed, 1))
	mask := map[string][]bool{}
	var n int64
	for _, l := range nm.Layers {
		if mo.deep > 0 && l.Depth <= nm.MaxDepth-mo.deep {
			continue
		}
		k := max(1, int(math.Round(mo.share*float64(l.Channels))))
		for _, c := range rng.Perm(l.Channels)[:k] {
			for _, s := range nm.ElementsOf(l, c) {
				mk := mask[s.Param.Name]
				if mk == nil {
					mk = make([]bool, s.Param.Init.Len())
					mask[s.Param.Name] = mk
				}
				for _, i := range s.Flat {
					mk[i] = true
				}
				n += int64(len(s.Flat))
			}
		}
	}
	return mask, float64(n) / float64(nm.NumParams)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// cpuSeconds is the user and system CPU time of the process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// busySeconds is the CPU time the whole machine has spent busy so far
// (/proc/stat: all but idle and iowait, in USER_HZ = 100 ticks a second).
func busySeconds() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var busy float64
	for i, s := range f[1:min(len(f), 9)] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		v, _ := strconv.ParseFloat(s, 64)
		busy += v
	}
	return busy / 100
}

// statusMB is a memory field of /proc/self/status in MB (VmHWM: peak
// resident set size, VmRSS: resident set size now).
func statusMB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}

// nchwcBlock is the NCHWc block size the graph was built with (0: none).
func nchwcBlock(spec autodiff.Spec) int64 {
	if l, ok := spec.Lowering.(cpu.Lowering); ok {
		return max(l.NCHWcBlock, 0)
	}
	return 0
}
