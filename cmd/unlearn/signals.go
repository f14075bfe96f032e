package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// errInterrupted marks a run stopped by SIGINT/SIGTERM (exit code 130).
var errInterrupted = unlearn.ErrInterrupted

// signalContext returns the run's context, cancelled by SIGINT or SIGTERM,
// and declares the command able to stop cleanly on it (see
// installSignals). The CancelFunc is a no-op kept for call sites.
func signalContext() (context.Context, context.CancelFunc) {
	cancellable.Store(true)
	return appCtx, func() {}
}

var (
	appCtx      = context.Background()
	cancellable atomic.Bool
)

// installSignals makes SIGINT and SIGTERM cancel appCtx. A command that
// called signalContext stops at its next check and removes what it wrote;
// any other command (it writes its outputs only at the end, atomically),
// or a second signal, exits at once with code 130 after removing the
// temporary files of writes in flight, so that every output is either
// complete or absent.
func installSignals() {
	ctx, cancel := context.WithCancel(context.Background())
	appCtx = ctx
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range ch {
			n++
			cancel()
			if n > 1 || !cancellable.Load() {
				outfile.RemoveTracked()
				logs.Fail("interrupted; no output was written", exitInterrupted)
				os.Exit(exitInterrupted)
			}
		}
	}()
}
