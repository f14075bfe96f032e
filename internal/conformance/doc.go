// Package conformance runs Debian's libonnx-testdata node test cases (the ONNX
// project's own backend tests: a model, recorded inputs and recorded outputs)
// through onnxio and graph and then ONNX Runtime, against data no one here
// wrote.
package conformance
