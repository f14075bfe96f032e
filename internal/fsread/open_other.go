//go:build !unix

package fsread

import "os"

// openFlags and noFollow have no equivalent here: the checks on the
// opened file (type, identity) remain.
const (
	openFlags = 0
	noFollow  = 0
)

// links is 1: hard links are not counted here.
func links(os.FileInfo) uint64 { return 1 }
