//go:build linux

package onnxrt

import (
	"bytes"
	"encoding/binary"
	"sort"
	"syscall"
	"testing"
	"time"
)

// watchTmp watches dir with inotify for files created, opened or written
// whose names match, until the returned stop is called; stop returns the
// matching names seen (with the events), sorted.
func watchTmp(t *testing.T, dir string, match func(string) bool) (stop func() []string) {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_CREATE|syscall.IN_OPEN|syscall.IN_MODIFY|syscall.IN_CLOSE_WRITE); err != nil {
		syscall.Close(fd)
		t.Fatalf("inotify watch %s: %v", dir, err)
	}
	return func() []string {
		defer syscall.Close(fd)
		time.Sleep(50 * time.Millisecond) // events of the child's last moments
		seen := map[string]bool{}
		buf := make([]byte, 1<<16)
		for {
			n, err := syscall.Read(fd, buf)
			if n <= 0 || err != nil {
				break
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				var ev syscall.InotifyEvent
				_ = binary.Read(bytes.NewReader(buf[off:off+syscall.SizeofInotifyEvent]), binary.LittleEndian, &ev)
				nameStart := off + syscall.SizeofInotifyEvent
				name := string(bytes.TrimRight(buf[nameStart:nameStart+int(ev.Len)], "\x00"))
				if match(name) {
					seen[name] = true
				}
				off = nameStart + int(ev.Len)
			}
		}
		var out []string
		for n := range seen {
			out = append(out, n)
		}
		sort.Strings(out)
		return out
	}
}
