//go:build unix

package outfile

import "syscall"

// appendFlags: no final link followed, no blocking open.
const appendFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
