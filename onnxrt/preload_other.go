//go:build !linux

package onnxrt

import "github.com/unlearn-tool/unlearn/internal/setting"

// dlopenGlobal is only needed for --device cuda, which the GPU build from
// `make ort-gpu` supports on Linux x64 only.
func dlopenGlobal(path string) error {
	return setting.FlagTextf("loading %s: %s is supported on Linux only", path, setting.Use("device", "cuda"))
}
