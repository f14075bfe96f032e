//go:build unix

package fsread

import (
	"os"
	"syscall"
)

// openFlags are added to every open of an input: O_NONBLOCK, so that a
// FIFO swapped in after the type check cannot block the open (the opened
// file is checked again and refused), and O_CLOEXEC. For a regular file
// O_NONBLOCK changes nothing.
const openFlags = syscall.O_NONBLOCK | syscall.O_CLOEXEC

// noFollow makes an open fail on a final symbolic link (ELOOP) instead of
// following it.
const noFollow = syscall.O_NOFOLLOW

// links is the number of hard links of the file st describes (1 where the
// system does not say).
func links(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}
