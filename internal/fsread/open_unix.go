//go:build unix

package fsread

import "syscall"

// openFlags are added to every open of an input: O_NONBLOCK, so that a
// FIFO swapped in after the type check cannot block the open (the opened
// file is checked again and refused), and O_CLOEXEC. For a regular file
// O_NONBLOCK changes nothing.
const openFlags = syscall.O_NONBLOCK | syscall.O_CLOEXEC

// noFollow makes an open fail on a final symbolic link (ELOOP) instead of
// following it.
const noFollow = syscall.O_NOFOLLOW
