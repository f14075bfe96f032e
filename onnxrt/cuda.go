package onnxrt

import (
	"bufio"
	"fmt"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/setting"
)

// GPUWantVersion is the ONNX Runtime release of the GPU build that
// --device cuda loads (`make ort-gpu`: ONNX Runtime 1.29.0's Linux x64
// library with its CUDA execution provider). The CPU library stays at
// WantVersion (docs/DESIGN.md, "GPU runtime").
const GPUWantVersion = "1.29"

// GPULibName is the file name of the GPU build's main library, as the npm
// package ships it.
const GPULibName = "libonnxruntime.so"

// GPUDir is the folder `make ort-gpu` fills, beside the CPU library's .ort/.
const GPUDir = ".ort-gpu"

// GPUInstallHint says how to get the GPU build; it ends every error about
// finding it.
var GPUInstallHint = setting.Msgf("install it with `make ort-gpu` (fetches ONNX Runtime 1.29.0's GPU build from npm "+
	"into .ort-gpu/ and checks its sha256), or point %s or ONNXRUNTIME_GPU_LIB at the libonnxruntime.so of an "+
	"ONNX Runtime 1.29 GPU build with its provider libraries beside it; or use %s",
	setting.Of("ort-lib"), setting.Use("device", "cpu"))

// cudaDep is a library the CUDA execution provider loads (NEEDED by
// libonnxruntime_providers_cuda.so, or dlopened by it: cuDNN).
type cudaDep struct {
	name string
	what string // said after the name in the "missing" error ("" for none)
}

// cudaRequired are the libraries without which the CUDA provider does not
// load or cannot run a Conv, in the order they are preloaded (a library's
// dependencies first). libcuda.so.1 is the driver's, which comes with the
// NVIDIA driver rather than with CUDA.
var cudaRequired = []cudaDep{
	{"libcuda.so.1", "(NVIDIA driver)"},
	{"libcudart.so.13", ""},
	{"libcublasLt.so.13", ""},
	{"libcublas.so.13", ""},
	{"libcurand.so.10", ""},
	{"libcudnn.so.9", ""},
}

// cudaOptional are preloaded when found and skipped otherwise: NVRTC (cuDNN's
// runtime-compiled engines and some of the provider's kernels), cuFFT (FFT
// ops only), and cuDNN 9's sub-libraries, which libcudnn.so.9 opens by name
// at run time (preloaded from libcudnn.so.9's folder, so that they are found
// whatever the library path says).
var cudaOptional = []string{
	"libnvJitLink.so.13",
	"libnvrtc.so.13",
	"libcufft.so.12",
}

var cudnnParts = []string{
	"libcudnn_graph.so.9",
	"libcudnn_heuristic.so.9",
	"libcudnn_ops.so.9",
	"libcudnn_cnn.so.9",
	"libcudnn_adv.so.9",
	"libcudnn_engines_runtime_compiled.so.9",
	"libcudnn_engines_precompiled.so.9",
}

// cudaSearch is where the CUDA libraries are looked for, in order: the
// library path, the provider's folder, the system's folders, then the
// nvidia/*/lib folders of Python environments (PyTorch's CUDA wheels put
// CUDA and cuDNN there). Nothing is executed to find them: no python, no
// ldconfig.
type cudaSearch struct {
	ldPath   []string // LD_LIBRARY_PATH, absolute entries only
	ldSet    bool     // LD_LIBRARY_PATH is set and not empty
	provider string   // the GPU library's folder
	system   []string // /etc/ld.so.conf's folders and the usual ones
	python   []string // site-packages/nvidia/*/lib folders found
	pyRoots  []string // the prefixes searched for them
}

// dirs returns every folder in search order, without repeats.
func (s cudaSearch) dirs() []string {
	var out []string
	seen := map[string]bool{}
	for _, group := range [][]string{s.ldPath, {s.provider}, s.system, s.python} {
		for _, d := range group {
			if d != "" && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// find returns the first folder's path to name, or "".
func (s cudaSearch) find(name string) string {
	for _, d := range s.dirs() {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// defaultSystemDirs are searched after /etc/ld.so.conf's folders: the
// dynamic linker's defaults and where CUDA, the NVIDIA container toolkit and
// WSL put their libraries.
var defaultSystemDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
	"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib",
}

// newCUDASearch gathers the folders for a provider in providerDir from the
// environment and the file system.
func newCUDASearch(providerDir string) cudaSearch {
	s := cudaSearch{provider: providerDir}
	if v := os.Getenv("LD_LIBRARY_PATH"); v != "" {
		s.ldSet = true
		for _, d := range filepath.SplitList(v) {
			// An empty or relative entry means the working directory to
			// the dynamic linker; the tool never loads code from there.
			if filepath.IsAbs(d) {
				s.ldPath = append(s.ldPath, filepath.Clean(d))
			}
		}
	}
	s.system = appendNew(ldSoConfDirs("/etc/ld.so.conf", 0), defaultSystemDirs...)
	s.pyRoots = pythonPrefixes()
	s.python = pythonNvidiaDirs(s.pyRoots)
	return s
}

func appendNew(l []string, add ...string) []string {
	seen := map[string]bool{}
	for _, d := range l {
		seen[d] = true
	}
	for _, d := range add {
		if !seen[d] {
			seen[d] = true
			l = append(l, d)
		}
	}
	return l
}

// ldSoConfDirs reads the folders of an ld.so.conf file and the files it
// includes (glob patterns, relative to /etc), as ldconfig does.
func ldSoConfDirs(path string, depth int) []string {
	if depth > 8 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		pat, ok := strings.CutPrefix(line, "include")
		if ok && (strings.HasPrefix(pat, " ") || strings.HasPrefix(pat, "\t")) {
			pat = strings.TrimSpace(pat)
			if !filepath.IsAbs(pat) {
				pat = filepath.Join(filepath.Dir(path), pat)
			}
			files, _ := filepath.Glob(pat)
			sort.Strings(files)
			for _, inc := range files {
				out = appendNew(out, ldSoConfDirs(inc, depth+1)...)
			}
			continue
		}
		if filepath.IsAbs(line) {
			out = appendNew(out, filepath.Clean(line))
		}
	}
	return out
}

// pythonPrefixes returns the prefixes of the Python environments searched
// for nvidia packages: $VIRTUAL_ENV, $CONDA_PREFIX, the folder above each
// python3 on PATH (a virtual environment's bin/python3 is a link to the
// system's: both its own prefix and the one it resolves to count), the
// user's ~/.local, /usr/local and /usr. Nothing is run.
func pythonPrefixes() []string {
	var out []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if d := os.Getenv(v); filepath.IsAbs(d) {
			out = appendNew(out, filepath.Clean(d))
		}
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		py := filepath.Join(d, "python3")
		if st, err := os.Stat(py); err != nil || st.IsDir() {
			continue
		}
		out = appendPrefix(out, filepath.Dir(filepath.Clean(d)))
		if r, err := filepath.EvalSymlinks(py); err == nil {
			out = appendPrefix(out, filepath.Dir(filepath.Dir(r)))
		}
		// pyenv's shims are scripts: its environments are versions/*.
		if filepath.Base(d) == "shims" {
			v, _ := filepath.Glob(filepath.Join(filepath.Dir(d), "versions", "*"))
			sort.Strings(v)
			out = appendNew(out, v...)
		}
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		out = appendNew(out, filepath.Join(h, ".local"))
	}
	return appendNew(out, "/usr/local", "/usr")
}

// appendPrefix adds a prefix other than "/" (python3 in /bin, a link to
// /usr/bin on most systems, gives it; /usr comes anyway).
func appendPrefix(l []string, p string) []string {
	if p == "/" {
		return l
	}
	return appendNew(l, p)
}

// pythonNvidiaDirs returns the site-packages/nvidia/*/lib folders (and
// dist-packages, Debian's name) under the prefixes: CUDA 13's wheels put
// their libraries in nvidia/cu13/lib, cuDNN's in nvidia/cudnn/lib.
func pythonNvidiaDirs(prefixes []string) []string {
	var out []string
	for _, p := range prefixes {
		for _, pat := range []string{
			"lib/python3*/site-packages/nvidia/*/lib",
			"lib/python3*/dist-packages/nvidia/*/lib",
			"lib64/python3*/site-packages/nvidia/*/lib",
			"lib/python3/dist-packages/nvidia/*/lib",
		} {
			m, _ := filepath.Glob(filepath.Join(p, pat))
			sort.Strings(m)
			for _, d := range m {
				if st, err := os.Stat(d); err == nil && st.IsDir() {
					out = appendNew(out, d)
				}
			}
		}
	}
	return out
}

// cudaLibs is what findCUDA found: the path of every required library and
// of each optional one present, in preload order.
type cudaLibs struct {
	required []string
	optional []string
}

// findCUDA looks for the CUDA provider's libraries. Every library it
// returns has passed checkTrusted; a required one missing or refused is an
// error: one line naming all that are missing and where they were looked
// for, or the refusal.
func findCUDA(s cudaSearch) (cudaLibs, error) {
	var libs cudaLibs
	var missing []string
	for _, d := range cudaRequired {
		p := s.find(d.name)
		if p == "" {
			missing = append(missing, strings.TrimSpace(d.name+" "+d.what))
			continue
		}
		libs.required = append(libs.required, p)
	}
	if len(missing) > 0 {
		return cudaLibs{}, cudaErrorf("%s not found (searched %s); the CUDA provider of ONNX Runtime %s "+
			"needs the NVIDIA driver, CUDA 13 and cuDNN 9: install them, or a Python environment with PyTorch for CUDA 13 "+
			"(its site-packages/nvidia/*/lib are searched), or put their folders on LD_LIBRARY_PATH; or use %s",
			textio.JoinAnd(missing), s.describe(), GPUWantVersion, setting.Use("device", "cpu"))
	}
	for _, p := range libs.required {
		if err := checkTrusted(p); err != nil {
			return cudaLibs{}, cudaError(err)
		}
	}
	opt := func(p string) {
		if p != "" && checkTrusted(p) == nil {
			libs.optional = append(libs.optional, p)
		}
	}
	for _, name := range cudaOptional {
		opt(s.find(name))
	}
	cudnnDir := filepath.Dir(libs.required[len(libs.required)-1])
	for _, name := range cudnnParts {
		p := filepath.Join(cudnnDir, name)
		if _, err := os.Stat(p); err == nil {
			opt(p)
		}
	}
	return libs, nil
}

// describe says, in one line, where the libraries were looked for.
func (s cudaSearch) describe() string {
	ld := "unset"
	if s.ldSet {
		ld = strings.Join(s.ldPath, ":")
		if ld == "" {
			ld = "no absolute folder"
		}
	}
	py := "none found"
	if len(s.python) > 0 {
		py = strings.Join(s.python, ", ")
	}
	return fmt.Sprintf("LD_LIBRARY_PATH (%s); the provider's folder %s; %d system folders (/etc/ld.so.conf's and %s); "+
		"Python site-packages/nvidia/*/lib under %s (%s)",
		ld, s.provider, len(s.system), strings.Join(defaultSystemDirs[:2], ", ")+", …",
		listSome(s.pyRoots, 5), py)
}

// listSome joins the first n of l and counts the rest.
func listSome(l []string, n int) string {
	if len(l) <= n {
		return strings.Join(l, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(l[:n], ", "), len(l)-n)
}

// preloadCUDA opens the libraries findCUDA found, globally and in order, so
// that the CUDA provider's own loading (its NEEDED entries, cuDNN's dlopen of
// libcudnn.so.9 and of its parts) finds them by name wherever they are, as
// PyTorch does for its nvidia wheels. An optional library that fails to open
// is skipped (the provider reports what it misses when a node needs it).
//
// Each is opened by the name pin gives it: exactly the file that was
// checked. The provider and cuDNN then find them by soname, not by file.
func preloadCUDA(libs cudaLibs) error {
	for _, p := range libs.required {
		name, err := pin(p)
		if err != nil {
			return cudaError(err)
		}
		if err := dlopenGlobal(name); err != nil {
			return cudaErrorf("%s: %v; use %s to run on the CPU", p, err, setting.Use("device", "cpu"))
		}
	}
	// The optional ones may need each other: retry while any opens. One
	// that changed since findCUDA checked it is not loaded.
	var rest []string
	for _, p := range libs.optional {
		if name, err := pin(p); err == nil {
			rest = append(rest, name)
		}
	}
	for len(rest) > 0 {
		var failed []string
		for _, name := range rest {
			if dlopenGlobal(name) != nil {
				failed = append(failed, name)
			}
		}
		if len(failed) == len(rest) {
			break
		}
		rest = failed
	}
	return nil
}
