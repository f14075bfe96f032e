//go:build unix

package onnxrt

import (
	"os"
	"syscall"
)

// ownersKnown says that every file has an owner here, so a file whose owner
// cannot be read is refused.
const ownersKnown = true

// fileOwner returns the uid owning the file fi describes.
func fileOwner(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Uid), true
}
