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
// or the current user can replace them: see checkTrusted. A library that
// passes is loaded as the very file checked, by its open descriptor (pin),
// with ONNX Runtime's telemetry off; and nothing is loaded in a process
// that started with an LD_LIBRARY_PATH entry the loader would read from the
// working directory or from a folder others control (ldpath.go: the
// command re-executes itself without them first).
//
// --device cuda (Options.Device "cuda") loads another library: ONNX Runtime
// 1.29.0's GPU build (GPULibName, GPUWantVersion), found at --ort-lib, the
// ONNXRUNTIME_GPU_LIB environment variable, or beside the executable in
// .ort-gpu/ and ../.ort-gpu/ (what `make ort-gpu` fills). Before anything
// is loaded, its provider libraries must sit beside it and the NVIDIA
// driver's libcuda.so.1 and CUDA 13's and cuDNN 9's libraries must be found
// (findCUDA) in LD_LIBRARY_PATH's absolute folders, the provider's folder,
// /etc/ld.so.conf's and the usual system folders, or the
// site-packages/nvidia/*/lib folders of Python environments ($VIRTUAL_ENV,
// $CONDA_PREFIX, the folder above python3 on PATH, ~/.local, /usr/local,
// /usr; found by looking, never by running python). Each must pass
// checkTrusted; they are then opened globally (preloadCUDA) so that the
// provider finds them by name. What is missing is one error line.
//
// # Entry points
//
//	Setup(Options)                               load the library once (ResolveLibrary, Version)
//	NewSession / NewSessionForModel              a session with named inputs and outputs
//	Session.Run(inputs, outputs)                 one run; nil outputs are allocated by ONNX Runtime
//	NewFloat32, NewInt64, FromGraph              tensors; Tensor.Close frees them
//	ResolveGPULibrary, CheckCUDA, GPULoaded      the GPU build for --device cuda, its CUDA libraries
//	ModelIO, CheckDevice, NCHWcBlockSize         what a model expects, whether a device is usable,
//	                                             the CPU's NCHWc block size (for train/autodiff)
//
// # Conventions
//
// Options carries the library path, the intra-op thread count (0: all
// cores) and the device ("cpu" or "cuda"). ONNX Runtime 1.24.x is expected
// of the CPU library (WantVersion; docs/DESIGN.md "Decisions" names the build
// and its sha256), 1.29.x of the GPU build ("GPU runtime" there).
// An absent library is an error wrapping ErrLibrary that says how to
// install it (InstallHint), and tests treat it as a skip (internal/testutil);
// --device cuda without its provider or CUDA libraries is an error naming the
// missing files (CheckDevice, CheckCUDA), never a silent fallback to the CPU.
package onnxrt
