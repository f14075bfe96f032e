//go:build !linux

package onnxrt

// Without /proc/self/fd a checked library is loaded by its path, as checked
// (the GPU build, the one that needs links, is Linux-only).

var afterCheck func(p string)

func pin(p string) (string, error) { return p, checkTrusted(p) }

func pinLinked(paths []string) ([]string, error) {
	for _, p := range paths {
		if err := checkTrusted(p); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// RemovePinned does nothing here: no links are made.
func RemovePinned() {}
