package main

import (
	"context"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// errInterrupted marks a run stopped by SIGINT/SIGTERM (exit code 130).
var errInterrupted = unlearn.ErrInterrupted

// interrupts: a command that calls signalContext stops at its next check
// after SIGINT or SIGTERM and removes what it wrote; any other command (it
// writes its outputs only at the end, atomically), a second signal, or a
// command still busy 10 s after the first (inside a call that cannot be
// interrupted) exits with code 130 after removing the temporary files of
// writes in flight, so that every output is either complete or absent. The
// one wait is for a run that is putting its model and metrics in place.
var interrupts = &signalWatch{
	Grace:   10 * time.Second,
	Cleanup: outfile.RemoveTracked,
	Busy:    outfile.Committing,
	Exit: func() {
		logs.Fail("interrupted; no output was written", exitInterrupted)
		onnxrt.RemovePinned()
		os.Exit(exitInterrupted)
	},
}

// signalContext returns the run's context, cancelled by SIGINT or SIGTERM.
// The CancelFunc is a no-op kept for call sites.
func signalContext() (context.Context, context.CancelFunc) {
	return interrupts.Context(), func() {}
}

// signalWatch turns SIGINT and SIGTERM into a cancelled context for
// commands that stop cleanly at their next check (Context), and into an
// immediate exit for the others. A command that declared itself
// cancellable but does not return within Grace after the first signal
// (it is inside a call that cannot be interrupted, such as ONNX Runtime
// building a session, which took minutes on a large model) is exited too,
// unless Busy reports that it is committing its outputs; a second signal
// exits at once. Every exit runs Cleanup first (remove temporaries), then
// Exit(code).
type signalWatch struct {
	Grace   time.Duration
	Cleanup func()
	Busy    func() bool
	Exit    func()

	ctx         context.Context
	cancellable atomic.Bool
}

// Watch installs the signal handler. Call it once, before the command runs.
func (in *signalWatch) Watch() {
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
func (in *signalWatch) Context() context.Context {
	in.cancellable.Store(true)
	if in.ctx == nil {
		return context.Background()
	}
	return in.ctx
}

// watchdog exits a cancellable command that has not returned Grace after
// the first signal, waiting while Busy.
func (in *signalWatch) watchdog() {
	time.Sleep(in.Grace)
	for in.Busy != nil && in.Busy() {
		time.Sleep(100 * time.Millisecond)
	}
	in.exit()
}

func (in *signalWatch) exit() {
	if in.Cleanup != nil {
		in.Cleanup()
	}
	in.Exit()
}
