package onnxrt

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// A machine without CUDA: one line naming every missing library, in
// preload order, where they were looked for, and what to install.
func TestFindCUDAMissing(t *testing.T) {
	dir := t.TempDir()
	s := cudaSearch{ldSet: true, ldPath: []string{dir}, provider: filepath.Join(dir, "prov"),
		system: []string{filepath.Join(dir, "sys")}, pyRoots: []string{"/usr"}}
	_, err := findCUDA(s)
	if err == nil || !errors.Is(err, ErrLibrary) {
		t.Fatalf("want an error wrapping ErrLibrary, got %v", err)
	}
	msg := flagtext.Render(err)
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "--device cuda: ") {
		t.Fatalf("want one line starting --device cuda:, got %q", msg)
	}
	want := "--device cuda: libcuda.so.1 (NVIDIA driver), libcudart.so.13, libcublasLt.so.13, libcublas.so.13, libcurand.so.10 and libcudnn.so.9 not found (searched "
	if !strings.HasPrefix(msg, want) {
		t.Errorf("got %q\nwant it to start %q", msg, want)
	}
	for _, w := range []string{"LD_LIBRARY_PATH (" + dir + ")", "the provider's folder " + filepath.Join(dir, "prov"),
		"1 system folders", "site-packages/nvidia/*/lib under /usr (none found)", "CUDA 13", "cuDNN 9", "--device cpu"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
	// Only what is missing is named.
	touch(t, filepath.Join(dir, "libcudart.so.13"), 0o644)
	touch(t, filepath.Join(dir, "libcuda.so.1"), 0o644)
	_, err = findCUDA(s)
	if err == nil || !strings.HasPrefix(flagtext.Render(err), "--device cuda: libcublasLt.so.13, libcublas.so.13, libcurand.so.10 and libcudnn.so.9 not found") {
		t.Fatalf("got %v", err)
	}
}

func touch(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	writeLib(t, p, mode)
}

// A PyTorch environment's layout (CUDA 13's wheels in nvidia/cu13/lib,
// cuDNN's in nvidia/cudnn/lib), found through $VIRTUAL_ENV, and the driver
// on LD_LIBRARY_PATH, whose relative and empty entries are ignored.
func TestFindCUDAInPythonEnv(t *testing.T) {
	root := t.TempDir()
	drv := filepath.Join(root, "driver")
	touch(t, filepath.Join(drv, "libcuda.so.1"), 0o644)
	venv := filepath.Join(root, "venv")
	site := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia")
	cu13, cudnn := filepath.Join(site, "cu13", "lib"), filepath.Join(site, "cudnn", "lib")
	for _, f := range []string{"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libnvrtc.so.13"} {
		touch(t, filepath.Join(cu13, f), 0o644)
	}
	for _, f := range []string{"libcudnn.so.9", "libcudnn_ops.so.9", "libcudnn_graph.so.9"} {
		touch(t, filepath.Join(cudnn, f), 0o644)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	t.Setenv("CONDA_PREFIX", "")
	t.Setenv("LD_LIBRARY_PATH", "relative/dir::"+drv)
	s := newCUDASearch(filepath.Join(root, "prov"))
	if !reflect.DeepEqual(s.ldPath, []string{drv}) {
		t.Errorf("LD_LIBRARY_PATH folders %v, want only %s", s.ldPath, drv)
	}
	if len(s.pyRoots) == 0 || s.pyRoots[0] != venv {
		t.Errorf("Python prefixes %v, want %s first", s.pyRoots, venv)
	}
	if len(s.python) < 2 || s.python[0] != cu13 || s.python[1] != cudnn {
		t.Fatalf("nvidia folders %v, want %s and %s first", s.python, cu13, cudnn)
	}
	// This machine's own CUDA, if any, must not answer: not its system
	// folders, not a Python environment with CUDA wheels on its PATH.
	s.system, s.python = nil, s.python[:2]
	libs, err := findCUDA(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(drv, "libcuda.so.1"), filepath.Join(cu13, "libcudart.so.13"), filepath.Join(cu13, "libcublasLt.so.13"),
		filepath.Join(cu13, "libcublas.so.13"), filepath.Join(cu13, "libcurand.so.10"), filepath.Join(cudnn, "libcudnn.so.9")}
	if !reflect.DeepEqual(libs.required, want) {
		t.Errorf("required %v\nwant %v", libs.required, want)
	}
	wantOpt := []string{filepath.Join(cu13, "libnvrtc.so.13"), filepath.Join(cudnn, "libcudnn_graph.so.9"), filepath.Join(cudnn, "libcudnn_ops.so.9")}
	if !reflect.DeepEqual(libs.optional, wantOpt) {
		t.Errorf("optional %v\nwant %v", libs.optional, wantOpt)
	}
}

// python3 on PATH names its environment without being run: the folder
// above its bin/.
func TestPythonPrefixFromPATH(t *testing.T) {
	env := filepath.Join(t.TempDir(), "env")
	touch(t, filepath.Join(env, "bin", "python3"), 0o755)
	lib := filepath.Join(env, "lib", "python3.11", "site-packages", "nvidia", "cudnn", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "relative:"+filepath.Join(env, "bin"))
	t.Setenv("VIRTUAL_ENV", "")
	t.Setenv("CONDA_PREFIX", "")
	p := pythonPrefixes()
	if len(p) == 0 || p[0] != env {
		t.Fatalf("prefixes %v, want %s first", p, env)
	}
	if d := pythonNvidiaDirs(p); len(d) == 0 || d[0] != lib {
		t.Fatalf("nvidia folders %v, want %s first", d, lib)
	}
}

// A CUDA library another user could replace is refused, as the main
// library is.
func TestFindCUDARefusesWritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cuda")
	for _, d := range cudaRequired {
		touch(t, filepath.Join(dir, d.name), 0o644)
	}
	s := cudaSearch{ldPath: []string{dir}}
	if _, err := findCUDA(s); err != nil {
		t.Fatalf("private libraries must be accepted: %v", err)
	}
	bad := filepath.Join(dir, "libcublas.so.13")
	if err := os.Chmod(bad, 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := findCUDA(s)
	wantRefused(t, err, "--device cuda", bad, "writable by group or others")
}

func TestLdSoConfDirs(t *testing.T) {
	etc := t.TempDir()
	conf := filepath.Join(etc, "ld.so.conf")
	if err := os.MkdirAll(filepath.Join(etc, "ld.so.conf.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, text := range map[string]string{
		conf: "# comment\ninclude ld.so.conf.d/*.conf\n/opt/a/lib # trailing\nrelative/ignored\n",
		filepath.Join(etc, "ld.so.conf.d", "cuda.conf"): "/usr/local/cuda/lib64\n/opt/a/lib\n",
		filepath.Join(etc, "ld.so.conf.d", "x.conf"):    "/opt/x\n",
	} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := ldSoConfDirs(conf, 0)
	want := []string{"/usr/local/cuda/lib64", "/opt/a/lib", "/opt/x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Preloading opens a real library globally; a file that is not one is an
// error naming it.
func TestPreloadCUDA(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--device cuda is Linux only")
	}
	s := cudaSearch{system: defaultSystemDirs}
	var real string
	for _, name := range []string{"libz.so.1", "libm.so.6"} {
		if real = s.find(name); real != "" {
			break
		}
	}
	if real == "" {
		t.Skip("neither libz.so.1 nor libm.so.6 in the system folders")
	}
	if err := preloadCUDA(cudaLibs{required: []string{real}}); err != nil {
		t.Fatalf("preloading %s: %v", real, err)
	}
	fake := filepath.Join(t.TempDir(), "libcudart.so.13")
	touch(t, fake, 0o644)
	// A broken optional library is skipped.
	if err := preloadCUDA(cudaLibs{required: []string{real}, optional: []string{fake}}); err != nil {
		t.Fatalf("an optional library that does not open must be skipped: %v", err)
	}
	err := preloadCUDA(cudaLibs{required: []string{fake}})
	if err == nil || !errors.Is(err, ErrLibrary) || !strings.HasPrefix(flagtext.Render(err), "--device cuda: ") || !strings.Contains(err.Error(), fake) {
		t.Fatalf("want an error naming %s, got %v", fake, err)
	}
}

// gpuRepoLib returns the GPU build's main library: ONNXRUNTIME_GPU_LIB, or
// the repository's .ort-gpu/ (`make ort-gpu`); "" when absent.
func gpuRepoLib() string {
	if p := os.Getenv("ONNXRUNTIME_GPU_LIB"); p != "" {
		return p
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	p := filepath.Join(filepath.Dir(file), "..", GPUDir, GPULibName)
	if !fileExists(p) {
		return ""
	}
	return p
}

// childEnv marks the test binary run as a child of a test that needs a
// process of its own (Setup loads one library per process).
const childEnv = "UNLEARN_ONNXRT_TEST_CHILD"

// runChild runs test name alone in a new process of this test binary and
// returns its output; it fails t if the child fails.
func runChild(t *testing.T, name string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), childEnv+"="+name), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
	return string(out)
}

// The GPU build (ONNX Runtime 1.29) accepts the API version onnxruntime_go
// v1.27 asks for (ORT_API_VERSION 24: GetApi(24) answers, or initialising
// fails) and runs a session on the CPU, where no CUDA is needed: the binding
// works with 1.29. In a process of its own, since this package's other
// tests load the CPU library (1.24). While it runs, nothing may open the
// files the build's telemetry writes in /tmp (issue 64, item 1: /tmp/.ses
// and /tmp/mat-debug-<pid>.log, opened with truncation through any symlink
// planted there): load turns the telemetry off before the library loads.
// CI fetches the build (`make ort-gpu`) and sets UNLEARN_REQUIRE_ORT_GPU=1,
// so that this runs there rather than skips.
func TestGPUBuildRunsOnCPU(t *testing.T) {
	lib := gpuRepoLib()
	if lib == "" {
		if os.Getenv("UNLEARN_REQUIRE_ORT_GPU") == "1" {
			t.Fatal("UNLEARN_REQUIRE_ORT_GPU=1 but ONNX Runtime's GPU build is not installed (make ort-gpu)")
		}
		skipCUDA(t, "ONNX Runtime's GPU build is not installed (make ort-gpu fetches it, 330 MB): the check that onnxruntime_go binds ONNX Runtime 1.29 skips")
	}
	if os.Getenv(childEnv) != t.Name() {
		stop := watchTmp(t, "/tmp", func(name string) bool {
			return name == ".ses" || strings.HasPrefix(name, "mat-debug-")
		})
		out := runChild(t, t.Name())
		if seen := stop(); len(seen) > 0 {
			t.Errorf("loading the GPU build touched %s in /tmp: its telemetry is not off", strings.Join(seen, ", "))
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "ONNX Runtime") {
				t.Log(strings.TrimSpace(l))
			}
		}
		return
	}
	if _, _, err := ResolveGPULibrary(lib); err != nil {
		t.Fatal(err)
	}
	name, err := pin(lib)
	if err != nil {
		t.Fatal(err)
	}
	setupMu.Lock()
	setupDone, setupLib, setupName = true, lib, name
	setupErr = load(lib, name, gpuLib)
	setupMu.Unlock()
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	if v := Version(); !strings.HasPrefix(v, GPUWantVersion+".") {
		t.Fatalf("version %q, want %s.x", v, GPUWantVersion)
	}
	runGemm(t, Options{Threads: 1})
	// The OrtApi calls of the plugin path (CreateEnv, GetEpDevices and the
	// device accessors) answer on the CPU too: the CPU provider's device.
	devs, err := epDeviceNames()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(devs, "CPUExecutionProvider/0") {
		t.Fatalf("execution provider devices %v, want CPUExecutionProvider/0 among them", devs)
	}
	t.Logf("ONNX Runtime %s (%s) through onnxruntime_go's API version 24: Gemm on the CPU ok; NCHWc block %d; devices %v",
		Version(), lib, NCHWcBlockSize(Options{}), devs)
}

// Setup with --device cuda on a machine without CUDA: nothing is loaded, the
// error names what is missing, and the process may still load the CPU
// library afterwards (a failed cuda Setup is not sticky until a library is
// opened).
func TestSetupCUDAMissing(t *testing.T) {
	lib := gpuRepoLib()
	if lib == "" {
		// The check runs before anything is loaded: stand-ins do.
		dir := filepath.Join(t.TempDir(), GPUDir)
		lib = filepath.Join(dir, GPULibName)
		touch(t, lib, 0o644)
		for _, f := range cudaProviderLibs {
			touch(t, filepath.Join(dir, f), 0o644)
		}
	}
	if err := CheckCUDA(filepath.Dir(lib)); err == nil {
		t.Skip("CUDA and cuDNN are installed here: the missing-libraries error cannot be shown")
	}
	if os.Getenv(childEnv) != t.Name() {
		runChild(t, t.Name(), "ONNXRUNTIME_GPU_LIB="+lib)
		return
	}
	err := Setup(Options{Device: "cuda"})
	if err == nil || !errors.Is(err, ErrLibrary) || !strings.HasPrefix(flagtext.Render(err), "--device cuda: ") || !strings.Contains(err.Error(), "not found (searched") {
		t.Fatalf("want the missing-libraries error, got %v", err)
	}
	t.Log(err)
	if ort.IsInitialized() || LibraryPath() != "" {
		t.Fatalf("nothing may be loaded after the error (loaded %q)", LibraryPath())
	}
	if cpu := repoLib(); cpu != "" {
		if err := Setup(Options{LibPath: cpu}); err != nil {
			t.Fatalf("the CPU library after a failed cuda Setup: %v", err)
		}
		if err := Setup(Options{Device: "cuda"}); err == nil || !strings.Contains(err.Error(), "already loaded") {
			t.Fatalf("cuda after the CPU library: %v", err)
		}
	}
}

// The GPU build is looked for at --ort-lib, ONNXRUNTIME_GPU_LIB (not
// ONNXRUNTIME_LIB, the CPU library's) and in .ort-gpu/ beside the
// executable, and its absence says `make ort-gpu`.
func TestResolveGPULibrary(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, GPULibName)
	touch(t, lib, 0o644)
	t.Setenv("ONNXRUNTIME_GPU_LIB", "")
	t.Setenv("ONNXRUNTIME_LIB", filepath.Join(dir, "cpu.so"))
	if p, src, err := ResolveGPULibrary(lib); err != nil || p != lib || src != "flag" {
		t.Fatalf("flag: %q %q %v", p, src, err)
	}
	t.Setenv("ONNXRUNTIME_GPU_LIB", lib)
	if p, src, err := ResolveGPULibrary(""); err != nil || p != lib || src != "env" {
		t.Fatalf("env: %q %q %v", p, src, err)
	}
	t.Setenv("ONNXRUNTIME_GPU_LIB", filepath.Join(dir, "missing.so"))
	_, _, err := ResolveGPULibrary("")
	if err == nil || !errors.Is(err, ErrLibrary) || !strings.HasPrefix(flagtext.Render(err), "--device cuda: ONNXRUNTIME_GPU_LIB=") || !strings.Contains(err.Error(), "make ort-gpu") {
		t.Fatalf("missing env library: %v", err)
	}
	repo := t.TempDir()
	exeDir := filepath.Join(repo, "bin")
	if err := os.MkdirAll(exeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = findBeside(exeDir, gpuLib)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(exeDir, "..", GPUDir, GPULibName)) || !strings.Contains(err.Error(), "make ort-gpu") {
		t.Fatalf("absent: %v", err)
	}
	want := filepath.Join(repo, GPUDir, GPULibName)
	touch(t, want, 0o644)
	if got, err := findBeside(exeDir, gpuLib); err != nil || got != filepath.Join(exeDir, "..", GPUDir, GPULibName) {
		t.Fatalf("want the repository's %s, got %q %v", want, got, err)
	}
}

// runGemm runs y = x·w + b in a session with opts and checks y.
func runGemm(t *testing.T, opts Options) {
	t.Helper()
	g := graph.NewGraph("gpu_build_on_cpu")
	x, err := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{2, 3})})
	if err != nil {
		t.Fatal(err)
	}
	w, err := g.AddInput("w", &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{3, 2})})
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.AddInput("b", &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{2})})
	if err != nil {
		t.Fatal(err)
	}
	n, err := g.AddNode("Gemm", "", "gemm", []*graph.Value{x, w, b}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	y := n.Output(0)
	y.Type = &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{2, 2})}
	g.Outputs = []*graph.Value{y}
	model, err := onnxio.Encode(&graph.Model{Graph: g, IRVersion: 8, Opsets: []graph.OpsetImport{{Domain: "", Version: 17}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(model, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	xs, ws, bs := []float32{1, 2, 3, 4, 5, 6}, []float32{1, 0, 0, 1, 1, 1}, []float32{0.5, -0.5}
	var in []*Tensor
	for _, v := range []struct {
		shape []int64
		data  []float32
	}{{[]int64{2, 3}, xs}, {[]int64{3, 2}, ws}, {[]int64{2}, bs}} {
		tt, err := NewFloat32(v.shape, v.data)
		if err != nil {
			t.Fatal(err)
		}
		defer tt.Close()
		in = append(in, tt)
	}
	out := []*Tensor{nil}
	if err := s.Run(in, out); err != nil {
		t.Fatal(err)
	}
	defer out[0].Close()
	want := []float32{1 + 3 + 0.5, 2 + 3 - 0.5, 4 + 6 + 0.5, 5 + 6 - 0.5}
	if got := out[0].Float32s(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Gemm on ONNX Runtime %s: got %v, want %v", Version(), got, want)
	}
}

// The CUDA execution provider runs a session, where a GPU, its driver, CUDA
// 13 and cuDNN 9 are present (bench/gpu_check.sh runs it there); elsewhere
// it skips, naming what is missing.
func TestCUDASession(t *testing.T) {
	lib := gpuRepoLib()
	if lib == "" {
		skipCUDA(t, "ONNX Runtime's GPU build is not installed (make ort-gpu): no CUDA session")
	}
	if err := CheckCUDA(filepath.Dir(lib)); err != nil {
		skipCUDA(t, "no CUDA here, no CUDA session: "+err.Error())
	}
	if os.Getenv(childEnv) != t.Name() {
		out := runChild(t, t.Name(), "ONNXRUNTIME_GPU_LIB="+lib)
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "CUDA provider") {
				t.Log(strings.TrimSpace(l))
			}
		}
		return
	}
	if err := Setup(Options{Device: "cuda"}); err != nil {
		t.Fatal(err)
	}
	if !GPULoaded() {
		t.Fatal("Setup with Device cuda did not load the GPU build")
	}
	runGemm(t, Options{Threads: 1, Device: "cuda"})
	devs, _ := epDeviceNames()
	t.Logf("CUDA provider: Gemm ok on ONNX Runtime %s (%s); devices %v; options refused: %v", Version(), LibraryPath(), devs, cudaPluginOptionErr)
}

// skipCUDA skips t with why, or fails it where UNLEARN_REQUIRE_CUDA=1 (the
// GPU check, bench/gpu_check.sh, on a machine that must run them).
func skipCUDA(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("UNLEARN_REQUIRE_CUDA") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// TestSessionOptionsLayout: appendCUDAPlugin reads the OrtSessionOptions
// pointer as the one field of ort.SessionOptions; a new onnxruntime_go
// that lays it out otherwise must fail here, not corrupt memory.
func TestSessionOptionsLayout(t *testing.T) {
	ty := reflect.TypeOf(ort.SessionOptions{})
	if ty.NumField() != 1 || ty.Field(0).Type.Kind() != reflect.Pointer || ty.Size() != unsafe.Sizeof(uintptr(0)) {
		t.Fatalf("ort.SessionOptions is %v with %d fields; appendCUDAPlugin expects one pointer", ty, ty.NumField())
	}
}

// TestOrtAPIIndices recomputes the OrtApi indices epdevice_linux.go uses
// from onnxruntime_go's onnxruntime_c_api.h with the C compiler.
func TestOrtAPIIndices(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the plugin path is Linux only")
	}
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	if err != nil {
		t.Skipf("go list: %v (no module cache)", err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	src := filepath.Join(t.TempDir(), "idx.c")
	prog := `#include <stdio.h>
#include <stddef.h>
#include "onnxruntime_c_api.h"
#define P(f) printf("%zu\n", offsetof(OrtApi, f) / sizeof(void*));
int main(void) { P(GetErrorMessage) P(CreateEnv) P(ReleaseStatus) P(GetEpDevices) P(SessionOptionsAppendExecutionProvider_V2)
P(HardwareDevice_Type) P(EpDevice_EpName) P(EpDevice_Device) printf("%d\n", (int)OrtHardwareDeviceType_GPU); return 0; }
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(src), "idx")
	if out, err := exec.Command(cc, "-I", strings.TrimSpace(string(dir)), "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", cc, err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "2 3 93 303 304 307 312 316 1"
	if got := strings.Join(strings.Fields(string(out)), " "); got != want {
		t.Fatalf("OrtApi indices %s, epdevice_linux.go uses %s", got, want)
	}
}
