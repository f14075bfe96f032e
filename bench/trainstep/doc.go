// Command trainstep times one training step of an ONNX classifier the way
// unlearn trains it: one ONNX Runtime run of the generated training graph
// (forward, mean cross-entropy, backward; BatchNormalization in training
// mode) plus the SGD update (momentum 0.9) in Go on the parameter tensors
// that ONNX Runtime reads in place (train.Engine). It is the unlearn side of
// bench/train_step.sh.
//
//	ONNXRUNTIME_LIB=$PWD/.ort/libonnxruntime.so.1 go run ./bench/trainstep -model bench/models/resnet18_cifar.onnx -threads 2
//
// It prints one JSON line: median step seconds over -steps timed steps after
// -warmup untimed ones, images/s, the peak resident set size of the process
// (VmHWM) in MB and its resident set size before the first step (base_mb:
// runtime library, model, session, batch buffers), and the cores other
// processes kept busy meanwhile. -nchwc builds the graph with the NCHWc
// Conv kernels (impl "unlearn-nchwc"), train.NewEngine's default; -dump writes the training graph
// (for bench/ortprof).
package main
