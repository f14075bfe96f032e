// Package onnxrt is the thin wrapper around ONNX Runtime (through
// github.com/yalue/onnxruntime_go). It finds and loads the shared library,
// owns sessions and tensors (every constructor is paired with Close), and keeps
// ONNX Runtime's types from leaking to the rest of the tool.
//
// The library is looked up, in order, at the --ort-lib flag (Options.LibPath),
// the ONNXRUNTIME_LIB environment variable, and the folder `make ort` fills:
// .ort/libonnxruntime.so.1 in the current directory or any parent, or beside
// the executable.
package onnxrt
