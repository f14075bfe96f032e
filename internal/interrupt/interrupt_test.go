package interrupt

import (
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// childVar marks the test binary run as the child that signals itself.
const childVar = "UNLEARN_INTERRUPT_TEST_CHILD"

// TestInterruptsExitABlockedCommand: a cancellable command that does not
// return after SIGTERM (blocked in a call that cannot be interrupted) is
// exited after Grace, with Cleanup first; while Busy (committing its
// outputs) the exit waits. The context is cancelled at once. It sends
// SIGTERM to its own process, which the command's handler (installed by
// the test itself) answers, so it runs in a child process of its own
// (childVar).
func TestInterruptsExitABlockedCommand(t *testing.T) {
	if os.Getenv(childVar) != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptsExitABlockedCommand$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childVar+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestInterruptsExitABlockedCommand") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	exited := make(chan time.Time, 2)
	var cleaned atomic.Bool
	var busy atomic.Bool
	busy.Store(true)
	in := &Watch{Grace: 200 * time.Millisecond, Cleanup: func() { cleaned.Store(true) },
		Busy: busy.Load, Exit: func() { exited <- time.Now() }}
	in.Watch()
	defer signal.Reset(syscall.SIGTERM, os.Interrupt)
	ctx := in.Context()
	start := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context was not cancelled")
	}
	time.AfterFunc(600*time.Millisecond, func() { busy.Store(false) })
	select {
	case at := <-exited:
		if d := at.Sub(start); d < 500*time.Millisecond {
			t.Errorf("exited after %v, while still committing", d)
		}
		if !cleaned.Load() {
			t.Error("exit without cleanup")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a command blocked after SIGTERM was never exited")
	}
}
