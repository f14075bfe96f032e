// Command ortprof runs an ONNX model (typically a training graph written by
// `trainstep -dump`) on ONNX Runtime with its profiler on and prints where
// the time goes: per op type and the slowest nodes, averaged over the runs.
// Inputs are random (float: N(0, 0.05²); int64: uniform in [0, -classes)),
// except those named like an initializer of the -init model;
// the dynamic batch dimension is -batch. Session options that matter for
// speed can be varied (-opt, -arena, -pattern) to measure them.
//
//	ONNXRUNTIME_LIB=$PWD/.ort/libonnxruntime.so.1 go run ./bench/ortprof \
//		-model /tmp/resnet18.train.onnx -threads 2 -runs 3
//
// This is a measuring tool: it talks to onnxruntime_go directly because
// onnxrt does not expose the profiler.
package main
