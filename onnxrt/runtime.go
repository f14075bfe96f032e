package onnxrt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/unlearn-tool/unlearn/internal/setting"
	ort "github.com/yalue/onnxruntime_go"
)

// WantVersion is the ONNX Runtime release the tool is built and tested against
// (onnxruntime_go v1.27.0 expects 1.24.x).
const WantVersion = "1.24"

// LibName is the file name of the CPU library.
const LibName = "libonnxruntime.so.1"

// CUDA provider files that must sit beside the GPU build's main library for
// --device cuda (ONNX Runtime loads them from its own folder).
var cudaProviderLibs = []string{"libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so"}

// InstallHint says how to get the library; it ends every "not found" error.
var InstallHint = setting.Msgf("install it with `make ort` (fetches onnxruntime-node@1.24.3 from npm and checks "+
	"its sha256), or point %s or ONNXRUNTIME_LIB at a libonnxruntime.so.1 of ONNX Runtime 1.24.x", setting.Of("ort-lib"))

// ErrLibrary is wrapped by every error about finding or loading the library.
var ErrLibrary = errors.New("onnxruntime library")

// Options selects the library, the thread count and the device.
type Options struct {
	LibPath string // explicit path (--ort-lib); empty: environment, then .ort/
	Threads int    // intra-op threads; 0: DefaultThreads (the usable cores within the cgroup's CPU quota)
	Device  string // "cpu" (default) or "cuda": cuda loads the GPU build (GPULibName) instead of the CPU library
}

// ThreadCount returns the intra-op thread count sessions opened with o use.
func (o Options) ThreadCount() int {
	if o.Threads > 0 {
		return o.Threads
	}
	return DefaultThreads()
}

// ResolveLibrary returns the library path that Setup would load and where it
// came from ("flag", "env" or "default"). Every source goes through
// checkTrusted: naming a file explicitly does not make a file that another
// user can replace safe to load.
func ResolveLibrary(flagPath string) (path, source string, err error) {
	return resolve(flagPath, cpuLib)
}

// ResolveGPULibrary is ResolveLibrary for --device cuda: --ort-lib, then
// ONNXRUNTIME_GPU_LIB, then beside the executable in .ort-gpu/ (what `make
// ort-gpu` fills). ONNXRUNTIME_LIB names the CPU library and is not used.
func ResolveGPULibrary(flagPath string) (path, source string, err error) {
	return resolve(flagPath, gpuLib)
}

// libKind says how one library (the CPU one or the GPU build) is named and
// found.
type libKind struct {
	name, env, version string
	hint               setting.Message // how to get it, ending every error about it
	dirs               []string        // folders searched beside the executable, relative to it
	gpu                bool            // errors start "--device cuda: " (cudaErrorf)
}

// errorf makes an error wrapping ErrLibrary: "onnxruntime library: ..." for
// the CPU library, "--device cuda: ..." for the GPU build; settings named
// as {ort-lib} render as flags (internal/setting).
func (k libKind) errorf(format string, a ...any) error {
	if k.gpu {
		return cudaErrorf(format, a...)
	}
	return setting.FlagTextf("%w: "+format, append([]any{ErrLibrary}, a...)...)
}

// cudaErrorf makes an error about --device cuda: "--device cuda: " and the
// message, wrapping ErrLibrary (tests skip on it when the GPU build or CUDA
// is absent).
func cudaErrorf(format string, a ...any) error {
	return &setting.Error{Name: "device", Msg: setting.Msgf(" cuda: "+format, a...), Flag: true, Err: ErrLibrary}
}

// cudaError is the error about --device cuda that err, a library's
// check, makes.
func cudaError(err error) error {
	return &setting.Error{Name: "device", Msg: setting.Msgf(" cuda: %s", err.Error()), Flag: true, Err: err}
}

var (
	cpuLib = libKind{name: LibName, env: "ONNXRUNTIME_LIB", hint: InstallHint, version: WantVersion,
		dirs: []string{".", ".ort", filepath.Join("..", ".ort")}}
	gpuLib = libKind{name: GPULibName, env: "ONNXRUNTIME_GPU_LIB", hint: GPUInstallHint, version: GPUWantVersion,
		dirs: []string{GPUDir, filepath.Join("..", GPUDir)}, gpu: true}
)

func resolve(flagPath string, k libKind) (path, source string, err error) {
	if flagPath != "" {
		return checkLib(flagPath, "flag", setting.Of("ort-lib"), k)
	}
	if env := os.Getenv(k.env); env != "" {
		return checkLib(env, "env", k.env, k)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", "", k.errorf("%s not found (%s and %s unset, and the executable's folder is unknown: %v); %s",
			k.name, setting.Of("ort-lib"), k.env, err, k.hint)
	}
	p, err := findBeside(filepath.Dir(exe), k)
	if err != nil {
		return "", "", err
	}
	return p, "default", nil
}

// defaultCandidates lists the places searched when neither --ort-lib nor
// ONNXRUNTIME_LIB is set, in order: all beside the executable, none under the
// working directory.
// (For the GPU build: <exe dir>/.ort-gpu, then <exe dir>/../.ort-gpu.)
func defaultCandidates(exeDir string) []string { return candidates(exeDir, cpuLib) }

func candidates(exeDir string, k libKind) []string {
	var out []string
	for _, d := range k.dirs {
		out = append(out, filepath.Join(exeDir, d, k.name)) // ../.ort: the repository's, seen from bin/unlearn
	}
	return out
}

// findBesideExe returns the first default candidate that exists, once
// checkTrusted accepts it. A candidate that exists but fails the check is an
// error rather than a reason to try the next one, so the user learns why the
// library they installed is not used.
func findBesideExe(exeDir string) (string, error) { return findBeside(exeDir, cpuLib) }

func findBeside(exeDir string, k libKind) (string, error) {
	tried := candidates(exeDir, k)
	for _, p := range tried {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := checkTrusted(p); err != nil {
			return "", err
		}
		return p, nil
	}
	return "", k.errorf("%s not found (%s and %s unset; looked in %s); %s",
		k.name, setting.Of("ort-lib"), k.env, strings.Join(tried, ", "), k.hint)
}

func checkLib(p, source string, what any, k libKind) (string, string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", "", k.errorf("%s=%s: %v; %s", what, p, errors.Unwrap(err), k.hint)
	}
	if st.IsDir() {
		return "", "", k.errorf("%s=%s is a directory, not the library file; %s", what, p, k.hint)
	}
	if err := checkTrusted(p); err != nil {
		return "", "", setting.FlagTextf("%s: %w", what, err)
	}
	return p, source, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

var (
	setupMu   sync.Mutex
	setupLib  string // the library's path as found (what LibraryPath reports)
	setupName string // the name it was loaded by (pin): /proc/self/fd/N or a private link
	setupGPU  bool   // the GPU build is loaded, with CUDA's libraries
	setupErr  error
	setupDone bool
)

// Setup loads the library and initialises the ONNX Runtime environment once
// per process. Later calls with another library path fail. With Device
// "cuda" it loads the GPU build instead (ResolveGPULibrary), once its
// provider libraries beside it and the CUDA and cuDNN libraries they need
// are found and trusted, and preloads those (setupCUDA); a later call for
// cuda after the CPU library was loaded fails, while CPU sessions may run on
// the GPU build.
func Setup(opts Options) error {
	setupMu.Lock()
	defer setupMu.Unlock()
	if setupDone {
		if setupErr != nil {
			return setupErr
		}
		if opts.Device == "cuda" && !setupGPU {
			return cudaErrorf("the CPU library %s is already loaded in this process; the GPU build can only be loaded first",
				setupLib)
		}
		if opts.LibPath != "" && opts.LibPath != setupLib {
			return fmt.Errorf("%w: already loaded %s, cannot switch to %s", ErrLibrary, setupLib, opts.LibPath)
		}
		return nil
	}
	setupDone = true
	if opts.Device == "cuda" {
		opened, err := setupCUDA(opts)
		if err != nil && !opened {
			// Nothing of ONNX Runtime was opened: a later call may still
			// load either library.
			setupDone = false
			return err
		}
		setupErr = err
		return err
	}
	if err := checkLibraryPath(); err != nil {
		setupErr = err
		return err
	}
	path, _, err := ResolveLibrary(opts.LibPath)
	if err != nil {
		setupErr = err
		return err
	}
	name, err := pin(path)
	if err != nil {
		setupErr = err
		return err
	}
	setupLib, setupName = path, name
	setupErr = load(path, name, cpuLib)
	return setupErr
}

// setupCUDA is Setup for --device cuda: the GPU build is found, its
// providers checked, CUDA and cuDNN found and preloaded, and only then is
// anything loaded.
// opened says whether ONNX Runtime itself was opened (a failure before that
// leaves the process as it was, but for CUDA's own libraries).
func setupCUDA(opts Options) (opened bool, err error) {
	if err := checkLibraryPath(); err != nil {
		return false, err
	}
	path, _, err := ResolveGPULibrary(opts.LibPath)
	if err != nil {
		return false, err
	}
	if err := checkELF(path, gpuLib); err != nil {
		return false, err
	}
	if err := CheckDevice("cuda", path); err != nil {
		return false, err
	}
	libs, err := findCUDA(newCUDASearch(filepath.Dir(path)))
	if err != nil {
		return false, err
	}
	if err := preloadCUDA(libs); err != nil {
		return false, err
	}
	dir := filepath.Dir(path)
	names, err := pinLinked([]string{path, filepath.Join(dir, cudaProviderLibs[0]),
		filepath.Join(dir, cudaProviderLibs[1])})
	if err != nil {
		return false, cudaError(err)
	}
	setupLib, setupName = path, names[0]
	if err := load(path, setupName, gpuLib); err != nil {
		return true, err
	}
	setupGPU = true
	return true, nil
}

// CheckCUDA says whether the CUDA and cuDNN libraries that a CUDA provider
// in providerDir needs are found and trusted (nil), or names what is
// missing, without loading anything.
func CheckCUDA(providerDir string) error {
	_, err := findCUDA(newCUDASearch(providerDir))
	return err
}

// load loads the library found at path (resolved and trusted) by name, the
// name pin gave that exact file, and checks its version against k's.
func load(path, name string, k libKind) error {
	if err := checkELF(name, k); err != nil {
		return err
	}
	// ONNX Runtime's telemetry (the GPU build's) writes /tmp/.ses and
	// /tmp/mat-debug-<pid>.log when the library loads, following symlinks:
	// another local user's link there would have the tool overwrite a file
	// of its choosing. The variable is read at load, so it is set first
	// (Go's Setenv reaches C's environment when cgo is in use); the API call
	// after it turns off what is left for the environment's life.
	if err := os.Setenv("ORT_DISABLE_TELEMETRY", "1"); err != nil {
		return k.errorf("setting ORT_DISABLE_TELEMETRY: %v", err)
	}
	ort.SetSharedLibraryPath(name)
	// Fatal only: every error comes back to us as a status and is reported
	// in the tool's one error line; ONNX Runtime's own copy would be a
	// second line on stderr.
	if err := ort.InitializeEnvironment(ortLogLevel()); err != nil {
		return k.errorf("loading %s failed (%v); is it ONNX Runtime %s.x for this platform? %s",
			path, err, k.version, k.hint)
	}
	if err := ort.DisableTelemetry(); err != nil {
		_ = ort.DestroyEnvironment()
		return k.errorf("%s: turning off its telemetry failed: %v", path, err)
	}
	if v := ort.GetVersion(); !strings.HasPrefix(v, k.version+".") {
		_ = ort.DestroyEnvironment()
		return k.errorf("%s is ONNX Runtime %s, need %s.x; %s", path, v, k.version, k.hint)
	}
	return nil
}

// ortLogLevel is ONNX Runtime's own log level: fatal only, so that every
// error comes back as a status, unless $UNLEARN_ORT_LOG asks for more
// (verbose, info, warning or error; a debugging aid: ONNX Runtime then
// writes its log, e.g. where each node runs, to stderr).
func ortLogLevel() ort.EnvironmentOption {
	switch os.Getenv("UNLEARN_ORT_LOG") {
	case "verbose":
		return ort.WithLogLevelVerbose()
	case "info":
		return ort.WithLogLevelInfo()
	case "warning":
		return ort.WithLogLevelWarning()
	case "error":
		return ort.WithLogLevelError()
	}
	return ort.WithLogLevelFatal()
}

// checkELF refuses files that are obviously not a shared library before dlopen
// sees them (dlopen's own message for a text file is obscure).
func checkELF(path string, k libKind) error {
	f, err := os.Open(path)
	if err != nil {
		return k.errorf("%v; %s", err, k.hint)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.Read(magic[:]); err != nil || string(magic[:]) != "\x7fELF" {
		return k.errorf("%s is not a shared library (no ELF header); %s", path, k.hint)
	}
	return nil
}

// loadName returns the name the library was loaded by ("" before Setup):
// what the loader knows it as, for a later dlopen of the same library.
func loadName() string {
	setupMu.Lock()
	defer setupMu.Unlock()
	return setupName
}

// LibraryPath returns the loaded library's path ("" before Setup).
func LibraryPath() string {
	setupMu.Lock()
	defer setupMu.Unlock()
	return setupLib
}

// Version returns the loaded ONNX Runtime version ("" before Setup).
func Version() string {
	if !ort.IsInitialized() {
		return ""
	}
	return ort.GetVersion()
}

// deviceReady checks a session's device against what Setup loaded: cuda
// needs the GPU build (Setup with Device "cuda" came first).
func deviceReady(device string) error {
	switch device {
	case "", "cpu":
		return nil
	case "cuda":
		if !GPULoaded() {
			return cudaErrorf("the CPU library %s is loaded in this process, not the GPU build "+
				"(Setup with Device cuda must come first)", LibraryPath())
		}
		return nil
	default:
		return setting.FlagErrorf("device", " %q: must be cpu or cuda", device)
	}
}

// GPULoaded says whether Setup loaded the GPU build for --device cuda.
func GPULoaded() bool {
	setupMu.Lock()
	defer setupMu.Unlock()
	return setupGPU
}

// CheckDevice validates a --device value and, for cuda, that the provider
// libraries sit beside the main library and pass checkTrusted: ONNX Runtime
// loads them from there, so they run code just as the main library does.
// (Setup also finds the CUDA libraries they need; see findCUDA.)
func CheckDevice(device, libPath string) error {
	switch device {
	case "", "cpu":
		return nil
	case "cuda":
		dir := filepath.Dir(libPath)
		var missing []string
		for _, f := range cudaProviderLibs {
			if !fileExists(filepath.Join(dir, f)) {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return cudaErrorf("%s missing in %s; the CUDA execution provider needs "+
				"libonnxruntime_providers_shared.so and libonnxruntime_providers_cuda.so of the same ONNX Runtime %s GPU "+
				"build beside its %s, and CUDA 13 and cuDNN 9 (`make ort-gpu` installs the three ONNX Runtime files in %s/); "+
				"use %s to run on the CPU", strings.Join(missing, " and "), dir, GPUWantVersion, GPULibName, GPUDir,
				setting.Use("device", "cpu"))
		}
		for _, f := range cudaProviderLibs {
			if err := checkTrusted(filepath.Join(dir, f)); err != nil {
				return cudaError(err)
			}
		}
		return nil
	default:
		return setting.FlagErrorf("device", " %q: must be cpu or cuda", device)
	}
}
