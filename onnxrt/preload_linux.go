//go:build linux

package onnxrt

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// dlopen_global opens path with RTLD_NOW | RTLD_GLOBAL and returns the
// handle, or NULL with dlerror's message in *err.
static void *dlopen_global(const char *path, const char **err) {
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	*err = h ? NULL : dlerror();
	return h;
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// dlopenGlobal loads the shared library at path (an absolute path, already
// through checkTrusted) with its symbols global, for the rest of the
// process: later loads of the same soname reuse it. The handle is never
// closed.
func dlopenGlobal(path string) error {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	var msg *C.char
	if C.dlopen_global(cs, &msg) == nil {
		if msg == nil {
			return errors.New("dlopen " + path + " failed")
		}
		return errors.New(C.GoString(msg))
	}
	return nil
}
