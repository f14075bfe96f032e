//go:build !linux

package onnxrt

import "errors"

// dlopenGlobal is only needed for --device cuda, which the GPU build from
// `make ort-gpu` supports on Linux x64 only.
func dlopenGlobal(path string) error {
	return errors.New("loading " + path + ": --device cuda is supported on Linux only")
}
