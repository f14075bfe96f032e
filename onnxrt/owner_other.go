//go:build !unix

package onnxrt

import "os"

// ownersKnown is false where files have no unix owner: only the mode checks
// apply.
const ownersKnown = false

func fileOwner(os.FileInfo) (uint64, bool) { return 0, false }
