//go:build !unix

package outfile

// appendFlags: the type check on the opened file remains.
const appendFlags = 0
