//go:build linux

package onnxrt

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <stddef.h>

// The OrtApi table is an array of function pointers that ONNX Runtime only
// ever appends to; these are the indices (offsetof / sizeof(void*)) of the
// entries used here, in onnxruntime_c_api.h of API version 24 (ONNX Runtime
// 1.24), which every later library serves unchanged. TestOrtAPIIndices
// recomputes them from onnxruntime_go's copy of the header.
enum {
	API_GET_ERROR_MESSAGE = 2,
	API_CREATE_ENV = 3,
	API_RELEASE_STATUS = 93,
	API_GET_EP_DEVICES = 303,
	API_APPEND_EP_V2 = 304,
	API_HARDWARE_DEVICE_TYPE = 307,
	API_EP_DEVICE_EP_NAME = 312,
	API_EP_DEVICE_DEVICE = 316,
};

typedef void *(*fn)(void);
typedef struct {
	const fn *(*GetApi)(unsigned version);
	const char *(*GetVersionString)(void);
} api_base;

// ort_api returns the OrtApi table (version 24) of the library at path,
// which must be loaded already (RTLD_NOLOAD), or NULL with *err set.
static const fn *ort_api(const char *path, const char **err) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		*err = dlerror();
		return NULL;
	}
	const api_base *(*get)(void) = (const api_base *(*)(void))dlsym(h, "OrtGetApiBase");
	if (!get) {
		*err = "no OrtGetApiBase";
		return NULL;
	}
	const fn *api = get()->GetApi(24);
	if (!api) *err = "the library serves no API version 24";
	return api;
}

// status_message copies a status's message into *msg (to be freed) and
// releases the status; it returns 1 when there was an error.
static int status_message(const fn *api, void *st, char **msg) {
	if (!st) return 0;
	const char *m = ((const char *(*)(const void *))api[API_GET_ERROR_MESSAGE])(st);
	size_t n = 0;
	while (m && m[n]) n++;
	*msg = malloc(n + 1);
	for (size_t i = 0; i < n; i++) (*msg)[i] = m[i];
	(*msg)[n] = 0;
	((void (*)(void *))api[API_RELEASE_STATUS])(st);
	return 1;
}

// shared_env returns the process's OrtEnv: ONNX Runtime keeps one, and
// CreateEnv hands back the one onnxruntime_go made (one more reference,
// never released).
static int shared_env(const fn *api, void **env, char **msg) {
	void *st = ((void *(*)(int, const char *, void **))api[API_CREATE_ENV])(4, "unlearn", env);
	return status_message(api, st, msg);
}

static int ep_devices(const fn *api, void *env, const void *const **devs, size_t *n, char **msg) {
	void *st = ((void *(*)(const void *, const void *const **, size_t *))api[API_GET_EP_DEVICES])(env, devs, n);
	return status_message(api, st, msg);
}

static const char *ep_device_name(const fn *api, const void *const *devs, size_t i) {
	return ((const char *(*)(const void *))api[API_EP_DEVICE_EP_NAME])(devs[i]);
}

// ep_device_type: OrtHardwareDeviceType (0 CPU, 1 GPU, 2 NPU).
static int ep_device_type(const fn *api, const void *const *devs, size_t i) {
	const void *hw = ((const void *(*)(const void *))api[API_EP_DEVICE_DEVICE])(devs[i]);
	return ((int (*)(const void *))api[API_HARDWARE_DEVICE_TYPE])(hw);
}

static int append_ep(const fn *api, void *so, void *env, const void *const *devs, size_t i,
		const char *const *keys, const char *const *values, size_t nopts, char **msg) {
	void *st = ((void *(*)(void *, void *, const void *const *, size_t, const char *const *, const char *const *, size_t))
		api[API_APPEND_EP_V2])(so, env, devs + i, 1, keys, values, nopts);
	return status_message(api, st, msg);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"
)

// The CUDA provider as a plugin execution provider. ONNX Runtime 1.23 and
// later load an execution provider from a library that exports
// CreateEpFactories (RegisterExecutionProviderLibrary) and add it to a
// session by the devices it offers (GetEpDevices,
// SessionOptionsAppendExecutionProvider_V2). The GPU build that `make
// ort-gpu` installs pairs a main library built without CUDA (its
// SessionOptionsAppendExecutionProvider_CUDA_V2 answers "CUDA execution
// provider is not enabled in this build") with a CUDA provider library that
// is such a plugin; this is the way to use it. onnxruntime_go wraps the
// registration but not the device calls, so they go through the library's
// OrtApi table here.

// cudaEPName is the name the CUDA provider's devices carry.
const cudaEPName = "CUDAExecutionProvider"

var cudaEP struct {
	once sync.Once
	err  error
	api  *C.fn
	env  unsafe.Pointer
	devs *unsafe.Pointer
	dev  C.size_t // index of the first CUDA device in devs
}

// registerCUDAPlugin registers the CUDA provider library beside the loaded
// GPU build (once per process) and finds its first GPU device.
func registerCUDAPlugin() error {
	cudaEP.once.Do(func() { cudaEP.err = registerCUDAPluginOnce() })
	return cudaEP.err
}

func registerCUDAPluginOnce() error {
	// Beside the main library's private link (pinLinked): the file
	// CheckDevice checked, pinned before anything was loaded.
	provider := filepath.Join(filepath.Dir(loadName()), cudaProviderLibs[1])
	if err := ort.RegisterExecutionProviderLibrary("CUDA", provider); err != nil {
		return fmt.Errorf("registering %s as a plugin execution provider: %w", provider, err)
	}
	d, err := epDevices()
	if err != nil {
		return err
	}
	var seen []string
	for i := C.size_t(0); i < d.n; i++ {
		name := C.GoString(C.ep_device_name(d.api, d.devs, i))
		if name == cudaEPName && C.ep_device_type(d.api, d.devs, i) == 1 {
			cudaEP.api, cudaEP.env, cudaEP.devs, cudaEP.dev = d.api, d.env, d.devs, i
			return nil
		}
		seen = append(seen, name)
	}
	return fmt.Errorf("%s offers no GPU device (the execution providers' devices: %s): "+
		"is an NVIDIA GPU visible to this process?",
		provider, strings.Join(seen, ", "))
}

// deviceList is the loaded library's OrtApi, the process's OrtEnv and the
// execution providers' devices it lists.
type deviceList struct {
	api  *C.fn
	env  unsafe.Pointer
	devs *unsafe.Pointer
	n    C.size_t
}

func epDevices() (deviceList, error) {
	var d deviceList
	lib := loadName()
	cs := C.CString(lib)
	defer C.free(unsafe.Pointer(cs))
	var cerr *C.char
	if d.api = C.ort_api(cs, &cerr); d.api == nil {
		return d, fmt.Errorf("%s: %s", lib, C.GoString(cerr))
	}
	var msg *C.char
	fail := func(what string) error {
		defer C.free(unsafe.Pointer(msg))
		return fmt.Errorf("%s: %s", what, C.GoString(msg))
	}
	if C.shared_env(d.api, &d.env, &msg) != 0 {
		return d, fail("CreateEnv")
	}
	if C.ep_devices(d.api, d.env, &d.devs, &d.n, &msg) != 0 {
		return d, fail("GetEpDevices")
	}
	return d, nil
}

// epDeviceNames lists the execution providers' devices of the loaded
// library as "provider/type" (type 0 CPU, 1 GPU, 2 NPU).
func epDeviceNames() ([]string, error) {
	d, err := epDevices()
	if err != nil {
		return nil, err
	}
	var l []string
	for i := C.size_t(0); i < d.n; i++ {
		name := C.GoString(C.ep_device_name(d.api, d.devs, i))
		l = append(l, fmt.Sprintf("%s/%d", name, C.ep_device_type(d.api, d.devs, i)))
	}
	return l, nil
}

// sessionOptionsPtr is the OrtSessionOptions pointer inside an
// ort.SessionOptions, whose one field it is (TestSessionOptionsLayout
// checks that onnxruntime_go still lays it out so).
func sessionOptionsPtr(so *ort.SessionOptions) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(so))
}

// cudaPluginOptionErr keeps why the provider options were refused, when a
// session went on without them (reported by the CUDA tests).
var cudaPluginOptionErr error

// appendCUDAPlugin adds the CUDA provider's first GPU to so, with opts as
// its provider options (refused options are dropped, and the reason kept in
// cudaPluginOptionErr).
func appendCUDAPlugin(so *ort.SessionOptions, opts map[string]string) error {
	if err := registerCUDAPlugin(); err != nil {
		return err
	}
	add := func(opts map[string]string) error {
		keys := make([]*C.char, 0, len(opts)+1)
		vals := make([]*C.char, 0, len(opts)+1)
		for k, v := range opts {
			keys = append(keys, C.CString(k))
			vals = append(vals, C.CString(v))
		}
		defer func() {
			for i := range keys {
				C.free(unsafe.Pointer(keys[i]))
				C.free(unsafe.Pointer(vals[i]))
			}
		}()
		keys, vals = append(keys, nil), append(vals, nil) // never empty: &keys[0] must exist
		var msg *C.char
		if C.append_ep(cudaEP.api, sessionOptionsPtr(so), cudaEP.env, cudaEP.devs, cudaEP.dev,
			&keys[0], &vals[0], C.size_t(len(opts)), &msg) != 0 {
			defer C.free(unsafe.Pointer(msg))
			return errors.New(C.GoString(msg))
		}
		return nil
	}
	err := add(opts)
	if err != nil && len(opts) > 0 {
		if err2 := add(nil); err2 == nil {
			cudaPluginOptionErr = err
			return nil
		}
	}
	return err
}
