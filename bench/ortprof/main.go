package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

var (
	interOp  int
	parallel bool
	configs  [][2]string
)

func main() {
	model := flag.String("model", "", "ONNX model")
	threads := flag.Int("threads", 2, "intra-op threads")
	batch := flag.Int64("batch", 128, "size of dynamic dimensions")
	classes := flag.Int64("classes", 10, "int64 inputs are drawn from [0, classes)")
	runs := flag.Int("runs", 3, "profiled runs (after one warm-up run)")
	top := flag.Int("top", 25, "slowest nodes to list")
	opt := flag.String("opt", "all", "graph optimization level: none, basic, extended, all")
	arena := flag.Bool("arena", true, "CPU memory arena")
	pattern := flag.Bool("pattern", true, "memory pattern optimization")
	noProfile := flag.Bool("noprofile", false, "time runs only")
	initFrom := flag.String("init", "", "take the values of inputs named like its initializers from this model "+
		"(the original model of a training graph)")
	daz := flag.Bool("daz", false, "session.set_denormal_as_zero")
	flag.IntVar(&interOp, "interop", 1, "inter-op threads (with -parallel)")
	flag.BoolVar(&parallel, "parallel", false, "ONNX Runtime's parallel execution mode")
	flag.Func("config", "session config entry key=value (repeatable), e.g. session.intra_op.allow_spinning=0",
		func(s string) error {
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return fmt.Errorf("want key=value, got %q", s)
			}
			configs = append(configs, [2]string{k, v})
			return nil
		})
	flag.Parse()
	err := run(*model, *initFrom, *threads, *batch, *classes, *runs, *top, *opt, *arena, *pattern, !*noProfile, *daz)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ortprof:", err)
		os.Exit(1)
	}
}

func run(path, initFrom string, threads int, batch, classes int64, runs, top int, opt string,
	arena, pattern, profile, daz bool) error {
	if err := onnxrt.Setup(onnxrt.Options{}); err != nil {
		return err
	}
	buf, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(buf)
	if err != nil {
		return err
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return err
	}
	defer so.Destroy()
	must := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "ortprof:", err)
			os.Exit(1)
		}
	}
	must(so.SetIntraOpNumThreads(threads))
	must(so.SetInterOpNumThreads(interOp))
	if parallel {
		must(so.SetExecutionMode(ort.ExecutionModeParallel))
	}
	for _, kv := range configs {
		must(so.AddSessionConfigEntry(kv[0], kv[1]))
	}
	lv := map[string]ort.GraphOptimizationLevel{"none": ort.GraphOptimizationLevelDisableAll,
		"basic": ort.GraphOptimizationLevelEnableBasic, "extended": ort.GraphOptimizationLevelEnableExtended,
		"all": ort.GraphOptimizationLevelEnableAll}[opt]
	must(so.SetGraphOptimizationLevel(lv))
	must(so.SetCpuMemArena(arena))
	must(so.SetMemPattern(pattern))
	if daz {
		must(so.AddSessionConfigEntry("session.set_denormal_as_zero", "1"))
	}
	inits := map[string][]float32{}
	if initFrom != "" {
		m, err := onnxio.Load(initFrom)
		if err != nil {
			return err
		}
		for _, v := range m.Graph.Initializers {
			if v.Init != nil && v.Init.DType == graph.Float {
				vals, err := v.Init.Float32s()
				if err != nil {
					return err
				}
				inits[v.Name] = vals
			}
		}
	}
	dir, err := os.MkdirTemp("", "ortprof")
	if err != nil {
		return err
	}
	if os.Getenv("ORTPROF_KEEP") == "" {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintln(os.Stderr, "profile kept in", dir)
	}
	if profile {
		must(so.EnableProfiling(filepath.Join(dir, "p")))
	}
	var inNames, outNames []string
	var inVals []ort.Value
	rng := rand.New(rand.NewPCG(1, 2))
	for _, in := range ins {
		inNames = append(inNames, in.Name)
		dims := append([]int64{}, in.Dimensions...)
		for i, d := range dims {
			if d < 0 {
				dims[i] = batch
			}
		}
		sh := ort.NewShape(dims...)
		switch in.DataType {
		case ort.TensorElementDataTypeInt64:
			v := make([]int64, sh.FlattenedSize())
			for i := range v {
				v[i] = rng.Int64N(classes)
			}
			t, err := ort.NewTensor(sh, v)
			must(err)
			inVals = append(inVals, t)
		default:
			v := make([]float32, sh.FlattenedSize())
			for i := range v {
				v[i] = float32(0.05 * rng.NormFloat64())
			}
			if w, ok := inits[in.Name]; ok && len(w) == len(v) {
				copy(v, w)
			}
			if in.Name == "weights" {
				for i := range v {
					v[i] = 1
				}
			}
			t, err := ort.NewTensor(sh, v)
			must(err)
			inVals = append(inVals, t)
		}
	}
	for _, o := range outs {
		outNames = append(outNames, o.Name)
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(buf, inNames, outNames, so)
	if err != nil {
		return err
	}
	var wall []float64
	var cpu0 float64
	var wall0 time.Time
	for r := 0; r <= runs; r++ {
		if r == 1 {
			cpu0, wall0 = cpuSeconds(), time.Now()
		}
		outVals := make([]ort.Value, len(outNames))
		t0 := time.Now()
		if err := s.Run(inVals, outVals); err != nil {
			return err
		}
		if r > 0 {
			wall = append(wall, time.Since(t0).Seconds())
		}
		for _, v := range outVals {
			v.Destroy()
		}
	}
	share := (cpuSeconds() - cpu0) / time.Since(wall0).Seconds()
	sort.Float64s(wall)
	fmt.Printf("%s: %d runs, threads %d, opt %s, arena %v, pattern %v: median %.1f ms, min %.1f ms, cpu share %.2f\n",
		filepath.Base(path), runs, threads, opt, arena, pattern, 1e3*wall[len(wall)/2], 1e3*wall[0], share)
	s.Destroy() // writes the profile
	if !profile {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p*.json"))
	if len(files) == 0 {
		return fmt.Errorf("no profile written")
	}
	return summarize(files[0], runs+1, top)
}

type event struct {
	Cat  string  `json:"cat"`
	Name string  `json:"name"`
	Ts   float64 `json:"ts"`
	Dur  float64 `json:"dur"`
	Args struct {
		OpName      string `json:"op_name"`
		InputShape  any    `json:"input_type_shape"`
		OutputShape any    `json:"output_type_shape"`
	} `json:"args"`
}

func summarize(path string, runs, top int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var evs []event
	if err := json.Unmarshal(b, &evs); err != nil {
		return err
	}
	// Skip the warm-up run: node events before the end of the first
	// model_run (ONNX Runtime's per-run Session event).
	skipBefore := -1.0
	nrun := 0
	for _, e := range evs {
		if e.Cat == "Session" && e.Name == "model_run" {
			nrun++
			if end := e.Ts + e.Dur; skipBefore < 0 || end < skipBefore {
				skipBefore = end
			}
		}
	}
	if nrun > 1 {
		runs = nrun - 1
	} else {
		skipBefore = -1
	}
	byOp := map[string]float64{}
	cnt := map[string]int{}
	byNode := map[string]float64{}
	nodeOp := map[string]string{}
	nodeShape := map[string]string{}
	total := 0.0
	for _, e := range evs {
		if e.Cat != "Node" || !strings.HasSuffix(e.Name, "_kernel_time") || e.Ts < skipBefore {
			continue
		}
		n := strings.TrimSuffix(e.Name, "_kernel_time")
		byOp[e.Args.OpName] += e.Dur
		cnt[e.Args.OpName]++
		byNode[n] += e.Dur
		nodeOp[n] = e.Args.OpName
		if _, ok := nodeShape[n]; !ok {
			nodeShape[n] = shapes(e.Args.InputShape) + " -> " + shapes(e.Args.OutputShape)
		}
		total += e.Dur
	}
	f := float64(runs) * 1e3 // µs per run -> ms
	what := "after the warm-up run"
	if skipBefore < 0 {
		what = "incl. the warm-up run"
	}
	fmt.Printf("kernel time per run: %.1f ms (averaged over %d runs %s)\n", total/f, runs, what)
	type kv struct {
		k string
		v float64
	}
	var ops []kv
	for k, v := range byOp {
		ops = append(ops, kv{k, v})
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].v > ops[j].v })
	fmt.Printf("%-28s %9s %6s %6s\n", "op", "ms/run", "%", "nodes")
	for _, o := range ops {
		fmt.Printf("%-28s %9.2f %6.1f %6d\n", o.k, o.v/f, 100*o.v/total, cnt[o.k]/runs)
	}
	var nodes []kv
	for k, v := range byNode {
		nodes = append(nodes, kv{k, v})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].v > nodes[j].v })
	fmt.Printf("\nslowest nodes:\n")
	for i, o := range nodes {
		if i >= top {
			break
		}
		fmt.Printf("%8.2f ms  %-18s %-40s %s\n", o.v/f, nodeOp[o.k], trunc(o.k, 40), nodeShape[o.k])
	}
	return nil
}

// cpuSeconds is the user and system CPU time of the process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func shapes(x any) string {
	l, ok := x.([]any)
	if !ok {
		return ""
	}
	var parts []string
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		for _, v := range m {
			if d, ok := v.([]any); ok {
				s := make([]string, len(d))
				for i, x := range d {
					s[i] = fmt.Sprint(x)
				}
				parts = append(parts, "["+strings.Join(s, ",")+"]")
			}
		}
	}
	return strings.Join(parts, " ")
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
