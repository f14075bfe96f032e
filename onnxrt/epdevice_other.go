//go:build !linux

package onnxrt

import (
	"errors"

	ort "github.com/yalue/onnxruntime_go"
)

// appendCUDAPlugin: the CUDA provider is fetched for Linux x64 only.
func appendCUDAPlugin(*ort.SessionOptions, map[string]string) error {
	return errors.New("the CUDA provider runs on Linux only")
}

var cudaPluginOptionErr error

func epDeviceNames() ([]string, error) { return nil, errors.New("Linux only") }
