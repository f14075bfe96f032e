//go:build !unix

package fsread

// openFlags and noFollow have no equivalent here: the checks on the
// opened file (type, identity) remain.
const (
	openFlags = 0
	noFollow  = 0
)
