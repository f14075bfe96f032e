package main

import (
	"os"
	"time"

	"github.com/unlearn-tool/unlearn/internal/interrupt"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// errInterrupted marks a run stopped by SIGINT/SIGTERM (exit code 130).
var errInterrupted = unlearn.ErrInterrupted

// interrupts: a command that runs under its Context stops at its next check
// after SIGINT or SIGTERM and removes what it wrote; any other command (it
// writes its outputs only at the end, atomically), a second signal, or a
// command still busy 10 s after the first (inside a call that cannot be
// interrupted) exits with code 130 after removing the temporary files of
// writes in flight, so that every output is either complete or absent. The
// one wait is for a run that is putting its model and metrics in place.
var interrupts = &interrupt.Watch{
	Grace:   10 * time.Second,
	Cleanup: outfile.RemoveTracked,
	Busy:    outfile.Committing,
	Exit: func() {
		logs.Fail("interrupted; no output was written", exitInterrupted)
		onnxrt.RemovePinned()
		os.Exit(exitInterrupted)
	},
}
