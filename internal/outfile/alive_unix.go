//go:build unix

package outfile

import (
	"errors"
	"os"
	"syscall"
)

// alive reports whether process pid exists: signal 0 checks without
// sending anything (EPERM: it exists under another user). This process
// counts as alive; a PID that cannot be one counts as alive (kept).
func alive(pid int) bool {
	if pid <= 0 || pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
