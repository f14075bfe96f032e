package onnxio

import (
	"path/filepath"
	"sync"
)

// loads counts the files Load has read and decoded, by absolute path.
var loads sync.Map // string → *int64 guarded by loadsMu
var loadsMu sync.Mutex

func countLoad(abs string) {
	loadsMu.Lock()
	defer loadsMu.Unlock()
	n, _ := loads.LoadOrStore(abs, new(int64))
	*n.(*int64)++
}

// Loads returns how many times Load has read and decoded the file at path
// in this process. Decoding a large model is one of the costliest steps of
// a run; tests use this to hold the pipeline to one decode per input file.
func Loads(path string) int64 {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0
	}
	loadsMu.Lock()
	defer loadsMu.Unlock()
	if n, ok := loads.Load(abs); ok {
		return *n.(*int64)
	}
	return 0
}
