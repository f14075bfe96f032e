// Package interrupt turns SIGINT and SIGTERM into a cancelled context for
// commands that stop cleanly at their next check, and into an exit for the
// others, with temporaries removed first (cmd/unlearn's interrupts).
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// Watch turns SIGINT and SIGTERM into a cancelled context for commands
// that stop cleanly at their next check (Context), and into an immediate
// exit for the others. A command that declared itself cancellable but does
// not return within Grace after the first signal (it is inside a call that
// cannot be interrupted, such as ONNX Runtime building a session, which
// took minutes on a large model) is exited too, unless Busy reports that
// it is committing its outputs; a second signal exits at once. Every exit
// runs Cleanup first (remove temporaries), then Exit.
type Watch struct {
	Grace   time.Duration
	Cleanup func()
	Busy    func() bool
	Exit    func()

	ctx         context.Context
	cancellable atomic.Bool
}

// Watch installs the signal handler. Call it once, before the command runs.
func (in *Watch) Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	in.ctx = ctx
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range ch {
			n++
			cancel()
			if n > 1 || !in.cancellable.Load() {
				in.exit()
			}
			go in.watchdog()
		}
	}()
}

// Context returns the context a signal cancels and declares the running
// command able to stop cleanly on it.
func (in *Watch) Context() context.Context {
	in.cancellable.Store(true)
	if in.ctx == nil {
		return context.Background()
	}
	return in.ctx
}

// watchdog exits a cancellable command that has not returned Grace after
// the first signal, waiting while Busy.
func (in *Watch) watchdog() {
	time.Sleep(in.Grace)
	for in.Busy != nil && in.Busy() {
		time.Sleep(100 * time.Millisecond)
	}
	in.exit()
}

func (in *Watch) exit() {
	if in.Cleanup != nil {
		in.Cleanup()
	}
	in.Exit()
}
