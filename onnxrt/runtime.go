package onnxrt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// WantVersion is the ONNX Runtime release the tool is built and tested against
// (onnxruntime_go v1.27.0 expects 1.24.x).
const WantVersion = "1.24"

// LibName is the file name of the CPU library.
const LibName = "libonnxruntime.so.1"

// CUDA provider files that must sit beside the main library for --device cuda.
var cudaProviderLibs = []string{"libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so"}

// InstallHint says how to get the library; it ends every "not found" error.
const InstallHint = "install it with `make ort` (fetches onnxruntime-node@1.24.3 from npm and checks its sha256), " +
	"or point --ort-lib or ONNXRUNTIME_LIB at a libonnxruntime.so.1 of ONNX Runtime 1.24.x"

// ErrLibrary is wrapped by every error about finding or loading the library.
var ErrLibrary = errors.New("onnxruntime library")

// Options selects the library, the thread count and the device.
type Options struct {
	LibPath string // explicit path (--ort-lib); empty: environment, then .ort/
	Threads int    // intra-op threads; 0 means all cores
	Device  string // "cpu" (default) or "cuda"
}

// ThreadCount returns the intra-op thread count sessions opened with o use.
func (o Options) ThreadCount() int {
	if o.Threads > 0 {
		return o.Threads
	}
	return goruntime.NumCPU()
}

// ResolveLibrary returns the library path that Setup would load and where it
// came from ("flag", "env" or "default"). Every source goes through
// checkTrusted: naming a file explicitly does not make a file that another
// user can replace safe to load.
func ResolveLibrary(flagPath string) (path, source string, err error) {
	if flagPath != "" {
		return checkLib(flagPath, "flag", "--ort-lib")
	}
	if env := os.Getenv("ONNXRUNTIME_LIB"); env != "" {
		return checkLib(env, "env", "ONNXRUNTIME_LIB")
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", "", fmt.Errorf("%w: %s not found (--ort-lib and ONNXRUNTIME_LIB unset, and the executable's folder is unknown: %v); %s",
			ErrLibrary, LibName, err, InstallHint)
	}
	p, err := findBesideExe(filepath.Dir(exe))
	if err != nil {
		return "", "", err
	}
	return p, "default", nil
}

// defaultCandidates lists the places searched when neither --ort-lib nor
// ONNXRUNTIME_LIB is set, in order: all beside the executable, none under the
// working directory.
func defaultCandidates(exeDir string) []string {
	return []string{
		filepath.Join(exeDir, LibName),
		filepath.Join(exeDir, ".ort", LibName),
		filepath.Join(exeDir, "..", ".ort", LibName), // the repository's .ort/ seen from bin/unlearn
	}
}

// findBesideExe returns the first default candidate that exists, once
// checkTrusted accepts it. A candidate that exists but fails the check is an
// error rather than a reason to try the next one, so the user learns why the
// library they installed is not used.
func findBesideExe(exeDir string) (string, error) {
	tried := defaultCandidates(exeDir)
	for _, p := range tried {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := checkTrusted(p); err != nil {
			return "", err
		}
		return p, nil
	}
	return "", fmt.Errorf("%w: %s not found (--ort-lib and ONNXRUNTIME_LIB unset; looked in %s); %s",
		ErrLibrary, LibName, strings.Join(tried, ", "), InstallHint)
}

func checkLib(p, source, what string) (string, string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", "", fmt.Errorf("%w: %s=%s: %v; %s", ErrLibrary, what, p, errors.Unwrap(err), InstallHint)
	}
	if st.IsDir() {
		return "", "", fmt.Errorf("%w: %s=%s is a directory, not the library file; %s", ErrLibrary, what, p, InstallHint)
	}
	if err := checkTrusted(p); err != nil {
		return "", "", fmt.Errorf("%s: %w", what, err)
	}
	return p, source, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

var (
	setupMu   sync.Mutex
	setupLib  string
	setupErr  error
	setupDone bool
)

// Setup loads the library and initialises the ONNX Runtime environment once
// per process. Later calls with another library path fail.
func Setup(opts Options) error {
	setupMu.Lock()
	defer setupMu.Unlock()
	if setupDone {
		if setupErr != nil {
			return setupErr
		}
		if opts.LibPath != "" && opts.LibPath != setupLib {
			return fmt.Errorf("%w: already loaded %s, cannot switch to %s", ErrLibrary, setupLib, opts.LibPath)
		}
		return nil
	}
	setupDone = true
	path, _, err := ResolveLibrary(opts.LibPath)
	if err != nil {
		setupErr = err
		return err
	}
	setupLib = path
	if err := checkELF(path); err != nil {
		setupErr = err
		return err
	}
	ort.SetSharedLibraryPath(path)
	// Fatal only: every error comes back to us as a status and is reported
	// in the tool's one error line; ONNX Runtime's own copy would be a
	// second line on stderr.
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		setupErr = fmt.Errorf("%w: loading %s failed (%v); is it ONNX Runtime %s.x for this platform? %s",
			ErrLibrary, path, err, WantVersion, InstallHint)
		return setupErr
	}
	if v := ort.GetVersion(); !strings.HasPrefix(v, WantVersion+".") {
		_ = ort.DestroyEnvironment()
		setupErr = fmt.Errorf("%w: %s is ONNX Runtime %s, need %s.x; %s", ErrLibrary, path, v, WantVersion, InstallHint)
		return setupErr
	}
	return nil
}

// checkELF refuses files that are obviously not a shared library before dlopen
// sees them (dlopen's own message for a text file is obscure).
func checkELF(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v; %s", ErrLibrary, err, InstallHint)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.Read(magic[:]); err != nil || string(magic[:]) != "\x7fELF" {
		return fmt.Errorf("%w: %s is not a shared library (no ELF header); %s", ErrLibrary, path, InstallHint)
	}
	return nil
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

// CheckDevice validates a --device value and, for cuda, that the provider
// libraries sit beside the main library and pass checkTrusted: ONNX Runtime
// loads them from there, so they run code just as the main library does.
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
			return fmt.Errorf("--device cuda: %s missing in %s; the CUDA execution provider needs "+
				"libonnxruntime_providers_shared.so and libonnxruntime_providers_cuda.so from an ONNX Runtime %s GPU "+
				"release beside %s, plus CUDA 12 and cuDNN 9 on the library path (the npm CPU package has none of them); "+
				"use --device cpu to run on the CPU", strings.Join(missing, " and "), dir, WantVersion, LibName)
		}
		for _, f := range cudaProviderLibs {
			if err := checkTrusted(filepath.Join(dir, f)); err != nil {
				return fmt.Errorf("--device cuda: %w", err)
			}
		}
		return nil
	default:
		return fmt.Errorf("--device %q: must be cpu or cuda", device)
	}
}
