// Command onnxgoread decodes an ONNX file with github.com/owulveryck/onnx-go
// (an independent decoder with its own protobuf bindings) and writes what it
// saw as JSON on standard output. onnxio's interop test runs it in a separate
// process: onnx-go and onnxio register protobuf messages with the same full
// names (onnx.ModelProto, ...), which the protobuf runtime refuses within one
// binary.
//
//	onnxgoread model.onnx
package main
