// Package onnxrt is the thin wrapper around ONNX Runtime (through
// github.com/yalue/onnxruntime_go). It finds and loads the shared library,
// owns sessions and tensors (every constructor is paired with Close), and keeps
// ONNX Runtime's types from leaking to the rest of the tool. It never builds
// or changes graphs and knows nothing about training or unlearning: train,
// localize, eval and cmd/unlearn run their graphs through it. (It was
// train/runtime until it moved here, so that those packages share it without
// depending on train.)
//
// The library is looked up, in order, at the --ort-lib flag (Options.LibPath),
// the ONNXRUNTIME_LIB environment variable, and beside the executable (after
// resolving symlinks): <exe dir>/libonnxruntime.so.1, <exe dir>/.ort/ and
// <exe dir>/../.ort/ (the folder `make ort` fills, seen from bin/unlearn).
// The working directory and its parents are never searched: a library planted
// there (say /tmp/.ort/) would run its code as whoever runs the tool.
//
// Loading a library runs its code, so a library file (whichever source named
// it) and the CUDA provider libraries beside it are refused unless only root
// or the current user can replace them: see checkTrusted.
//
// # Entry points
//
//	Setup(Options)                               load the library once (ResolveLibrary, Version)
//	NewSession / NewSessionForModel              a session with named inputs and outputs
//	Session.Run(inputs, outputs)                 one run; nil outputs are allocated by ONNX Runtime
//	NewFloat32, NewInt64, FromGraph              tensors; Tensor.Close frees them
//	ModelIO, CheckDevice, NCHWcBlockSize         what a model expects, whether a device is usable,
//	                                             the CPU's NCHWc block size (for train/autodiff)
//
// # Conventions
//
// Options carries the library path, the intra-op thread count (0: all
// cores) and the device ("cpu" or "cuda"). ONNX Runtime 1.24.x is expected
// (WantVersion; docs/DESIGN.md "Decisions" names the build and its sha256).
// An absent library is an error wrapping ErrLibrary that says how to
// install it (InstallHint), and tests treat it as a skip (internal/testutil);
// --device cuda without its provider libraries is an error naming the
// missing files (CheckDevice), never a silent fallback to the CPU.
package onnxrt
